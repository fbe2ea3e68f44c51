package session

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/testscale"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/fileshape"
	"github.com/xdev/xdev/internal/jsonx"
)

// The writers' differential test: every xdev write on a file omp resumes
// leaves a file omp still resumes, with the same context plus the write.
//
//	go test ./internal/session -run TestInteropWriters -writers.n 2000 -writers.seed 7
//
// The files are the differential tester's random sessions, each given one
// of the shapes other writers and editors leave (package fileshape): a
// byte order mark, CRLF line endings (all or some), blank and NUL-padded
// lines, a NUL-filled tail, no slot, a narrow slot, a slot with an empty
// title or a lone surrogate, a header title that is a number, v1 and v2
// headers. Each write is the one
// the command runs: xdev title/retitle (SetTitle, with a lone surrogate in
// the title), append (AppendMessage), branch (Branch), fork (ForkSession),
// fork --at (ForkBranch) and verify --repair (Repair). A write xdev
// refuses must leave the file as it was, and may refuse only for a reason
// it names (a format version it does not write, a slot of the wrong
// width).
var (
	writersN    = flag.Int("writers.n", 0, "writers' differential test: files (0: 60, or 300 with $XDEV_TEST_LONG)")
	writersSeed = flag.Uint64("writers.seed", 0, "writers' differential test: seed (0: the fixed seed and a fresh one)")
	writersKeep = flag.String("writers.keep", "", "writers' differential test: directory for the files a write failed on")
)

const writersFixedSeed = 20261203

// writerTitle is the title the retitle writes: a lone surrogate (WTF-8)
// and a control character among ordinary text, which omp keeps and cleans.
const writerTitle = "Renamed \xed\xa0\x80 café\x01 ☕"

func TestInteropWriters(t *testing.T) {
	requireOmp(t)
	seeds := []uint64{*writersSeed}
	if *writersSeed == 0 {
		seeds = []uint64{writersFixedSeed, uint64(time.Now().UnixNano())}
	}
	n := *writersN
	if n == 0 {
		n = testscale.N(60, 300)
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Logf("seed %d, %d files (replay: go test ./internal/session -run TestInteropWriters -writers.seed %d -writers.n %d)",
				seed, n, seed, n)
			runWriters(t, seed, n)
		})
	}
}

// writerOp is one xdev write, applied to the file at path (a copy). It
// returns the file omp is to resume afterwards ("" when the write wrote
// nothing, as a repair of a sound file) and what that file's context must
// be, given omp's view of the file before.
type writerOp struct {
	name string
	run  func(t *testing.T, r *rand.Rand, path, out string) (result string, err error)
	// want checks omp's view after the write against the view before;
	// nil when only "omp resumes it, and reads it as xdev does" is known.
	want func(before, after ompDiffView) string
}

func sameMessages(before, after ompDiffView) string {
	if len(before.Messages) != len(after.Messages) {
		return fmt.Sprintf("%d messages, %d before", len(after.Messages), len(before.Messages))
	}
	for i := range before.Messages {
		b, a := before.Messages[i], after.Messages[i]
		if i == len(before.Messages)-1 && b.Get("role").Is("compactionSummary") {
			// omp dates an Anthropic compaction's summary by the entry
			// after it on the path (session-context.ts); when the
			// compaction was the leaf, that is the entry just written.
			b, a = b.With("timestamp", jsonx.Value{}), a.With("timestamp", jsonx.Value{})
		}
		if !bytes.Equal(b.JSON(), a.JSON()) {
			return fmt.Sprintf("message %d:\n  before %s\n  after  %s", i, before.Messages[i].JSON(), after.Messages[i].JSON())
		}
	}
	return ""
}

// pickEntry draws an id of an entry the file holds, "" when it has none.
func pickEntry(r *rand.Rand, path string) string {
	x, err := OpenIndex(path, nil)
	if err != nil {
		return ""
	}
	defer x.Close()
	if x.Len() == 0 {
		return ""
	}
	return x.ID(r.IntN(x.Len()))
}

var writerOps = []writerOp{
	{name: "title", run: func(_ *testing.T, _ *rand.Rand, path, _ string) (string, error) {
		s, err := Open(path, nil)
		if err != nil {
			return "", err
		}
		defer s.Close()
		_, err = s.SetTitle(writerTitle, TitleManual)
		return path, err
	}, want: func(before, after ompDiffView) string {
		if want := CleanTitle(writerTitle); after.Title != want || after.TitleSource != "user" {
			return fmt.Sprintf("title %q/%q, want %q/user", after.Title, after.TitleSource, want)
		}
		return sameMessages(before, after)
	}},
	{name: "append", run: func(_ *testing.T, _ *rand.Rand, path, _ string) (string, error) {
		s, err := Open(path, nil)
		if err != nil {
			return "", err
		}
		defer s.Close()
		_, err = s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("appended by xdev"), Timestamp: 1764800000000})
		return path, err
	}, want: func(before, after ompDiffView) string {
		if len(after.Messages) != len(before.Messages)+1 {
			return fmt.Sprintf("%d messages after the append, %d before", len(after.Messages), len(before.Messages))
		}
		if last := after.Messages[len(after.Messages)-1]; !strings.Contains(string(last.JSON()), "appended by xdev") {
			return "the last message is not the appended one: " + string(last.JSON())
		}
		after.Messages = after.Messages[:len(before.Messages)]
		return sameMessages(before, after)
	}},
	{name: "branch", run: func(_ *testing.T, r *rand.Rand, path, _ string) (string, error) {
		id := pickEntry(r, path)
		if id == "" {
			return "", nil
		}
		s, err := Open(path, nil)
		if err != nil {
			return "", err
		}
		defer s.Close()
		_, err = s.Branch(id)
		return path, err
	}},
	{name: "fork", run: func(_ *testing.T, _ *rand.Rand, path, out string) (string, error) {
		s, err := ForkSession(path, out, "")
		if err != nil {
			return "", err
		}
		return out, s.Close()
	}, want: func(before, after ompDiffView) string {
		// The copy's slot holds the title as text (a header's 42 is "42").
		want := before.Title
		if v := before.TitleValue; !v.Nullish() && v.Kind() != jsonx.String && (v.Kind() != jsonx.Bool || v.Truthy()) {
			want = v.ToString()
		}
		if after.Title != want {
			return fmt.Sprintf("title %q, before %s", after.Title, before.TitleValue.JSON())
		}
		return sameMessages(before, after)
	}},
	{name: "fork-at", run: func(_ *testing.T, r *rand.Rand, path, out string) (string, error) {
		id := pickEntry(r, path)
		if id == "" {
			return "", nil
		}
		s, err := ForkBranch(path, out, id)
		if err != nil {
			return "", err
		}
		return out, s.Close()
	}},
	{name: "repair", run: func(_ *testing.T, _ *rand.Rand, path, out string) (string, error) {
		changes, err := Repair(path, out)
		if err != nil || len(changes) == 0 {
			return "", err
		}
		for _, c := range changes {
			if c.Kind == ProblemDanglingParent {
				return out + "#reparented", nil // the repair changes the tree on purpose
			}
		}
		return out, nil
	}, want: sameMessages},
}

// keepWriterCase copies a case a write failed on to -writers.keep.
func keepWriterCase(c *diffCase) {
	if *writersKeep == "" {
		return
	}
	os.MkdirAll(*writersKeep, 0o700)
	os.WriteFile(filepath.Join(*writersKeep, c.name+".jsonl"), c.bytes(), 0o600)
}

// refusalKind names the reason of an accepted refusal, for the log.
func refusalKind(err error) string {
	switch {
	case errors.Is(err, ErrOldVersion):
		return "v1/v2"
	case errors.Is(err, ErrNewerVersion):
		return "newer version"
	case errors.Is(err, ErrLeafWithoutID):
		return "leaf without an id"
	case errors.Is(err, ErrOmpWouldRefuse):
		return "omp throws on the path"
	}
	return "other"
}

// refusalOK says whether an error is one a write may refuse with: a
// format version xdev does not write, a last entry without an id to
// append after, a path omp would throw on. Anything else on a file omp
// resumes is a failure.
func refusalOK(err error) bool {
	return refusalKind(err) != "other"
}

func runWriters(t *testing.T, seed uint64, n int) {
	agent := t.TempDir()
	g := newSessionGen(seed, filepath.Join(agent, "blobs"))
	r := rand.New(rand.NewPCG(seed, 77))
	origDir, ompOrig := t.TempDir(), t.TempDir()
	var cases []*diffCase
	for i := range n {
		c := g.file(fmt.Sprintf("f%05d", i))
		if c.ompRefuses {
			continue
		}
		sh := fileshape.Shapes[i%len(fileshape.Shapes)]
		f := &fileshape.File{Lines: c.lines, Torn: c.torn}
		sh.Apply(r, f)
		c.lines, c.torn = f.Lines, f.Torn
		c.name += "-" + sh.Name
		cases = append(cases, c)
		for _, dir := range []string{origDir, ompOrig} {
			if err := os.WriteFile(filepath.Join(dir, c.name+".jsonl"), c.bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := g.writeBlobs(); err != nil {
		t.Fatal(err)
	}
	before := ompDiffViews(t, agent, ompOrig)

	// Each write on its own copy; what omp is to resume goes to resultDir
	// under the case's and the write's name.
	workDir, resultDir := t.TempDir(), t.TempDir()
	type result struct {
		c    *diffCase
		op   writerOp
		file string
	}
	var results []result
	var refused = map[string]int{}
	resumes := 0
	for _, c := range cases {
		if before[c.name].Error != "" {
			continue // omp does not resume it: nothing to keep
		}
		resumes++
		orig := filepath.Join(origDir, c.name+".jsonl")
		src, _ := os.ReadFile(orig)
		for _, op := range writerOps {
			name := c.name + "." + op.name
			path := filepath.Join(workDir, name+".jsonl")
			if err := os.WriteFile(path, src, 0o600); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(workDir, name+".out.jsonl")
			file, err := op.run(t, r, path, out)
			if err != nil {
				if got, _ := os.ReadFile(path); !bytes.Equal(got, src) {
					t.Errorf("%s: %s failed (%v) and changed the file", c.name, op.name, err)
				}
				if !refusalOK(err) {
					t.Errorf("%s: %s refused a file omp resumes: %v", c.name, op.name, err)
					keepWriterCase(c)
				}
				refused[op.name+": "+refusalKind(err)]++
				continue
			}
			if file == "" {
				continue
			}
			o := op
			if f, ok := strings.CutSuffix(file, "#reparented"); ok {
				file, o.want = f, nil
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(resultDir, name+".jsonl"), b, 0o600); err != nil {
				t.Fatal(err)
			}
			results = append(results, result{c, o, filepath.Join(resultDir, name+".jsonl")})
		}
	}
	ompDir := t.TempDir()
	copyTree(t, resultDir, ompDir)
	after := ompDiffViews(t, agent, ompDir)
	blobs := NewBlobStore(filepath.Join(agent, "blobs"))
	var failures []string
	for _, res := range results {
		name := strings.TrimSuffix(filepath.Base(res.file), ".jsonl")
		view := after[name]
		var why string
		switch {
		case view.Error != "":
			why = "omp no longer resumes it: " + view.Error
		case res.op.want != nil:
			why = res.op.want(before[res.c.name], view)
		}
		if why == "" {
			if d := compareDiff(res.file, blobs, view, &diffCase{}); len(d) > 0 {
				why = "xdev reads the written file unlike omp: " + strings.Join(d, "; ")
			}
		}
		if why != "" {
			failures = append(failures, fmt.Sprintf("%s: %s", name, why))
			keepWriterCase(res.c)
		}
	}
	sort.Strings(failures)
	for i, f := range failures {
		if i == 20 {
			t.Errorf("… and %d more", len(failures)-20)
			break
		}
		if len(f) > 600 {
			f = f[:600] + "…"
		}
		t.Error(f)
	}
	if len(failures) > 0 && *writersKeep != "" {
		t.Logf("the files before each failed write are in %s", *writersKeep)
	}
	var kinds []string
	for k, n := range refused {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	t.Logf("%d files, %d omp resumes; %d writes checked against omp; refused: %s",
		len(cases), resumes, len(results), strings.Join(kinds, ", "))
}
