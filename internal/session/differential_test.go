package session

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/jsonx"
)

// The differential tester: random but plausible session files, read by
// real omp and by xdev, whose contexts must agree message by message.
//
//	go test ./internal/session -run TestDifferential -diff.n 10000 -diff.seed 42
//
// With -diff.seed 0 (the default) it runs the fixed seed and a fresh one,
// and logs both so a failure can be replayed. -diff.keep DIR copies every
// disagreeing file, shrunk to the fewest lines that still disagree, to DIR.
var (
	diffN    = flag.Int("diff.n", 400, "differential tester: files per seed")
	diffSeed = flag.Uint64("diff.seed", 0, "differential tester: seed (0: the fixed seed and a fresh one)")
	diffKeep = flag.String("diff.keep", "", "differential tester: directory for shrunk disagreeing files")
)

const diffFixedSeed = 20261130

func TestDifferential(t *testing.T) {
	requireOmp(t)
	seeds := []uint64{*diffSeed}
	if *diffSeed == 0 {
		seeds = []uint64{diffFixedSeed, uint64(time.Now().UnixNano())}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Logf("seed %d, %d files (replay: go test ./internal/session -run TestDifferential -diff.seed %d -diff.n %d)",
				seed, *diffN, seed, *diffN)
			runDifferential(t, seed, *diffN)
		})
	}
}

// diffCase is one generated file and what omp must be seen to do with it.
type diffCase struct {
	name  string
	lines []string // the physical lines, without newlines
	torn  bool     // the last line has no newline
	// ompRefuses: a slot omp does not accept makes omp refuse the whole
	// file while xdev reads it (a deliberate difference, docs/interop.md).
	ompRefuses bool
	// ompThrew: omp threw opening a file xdev reads (set by diffCases).
	ompThrew bool
}

func (c *diffCase) bytes() []byte {
	var b bytes.Buffer
	for i, l := range c.lines {
		b.WriteString(l)
		if i < len(c.lines)-1 || !c.torn {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func runDifferential(t *testing.T, seed uint64, n int) {
	agent := t.TempDir()
	blobDir := filepath.Join(agent, "blobs")
	g := newSessionGen(seed, blobDir)
	var cases []*diffCase
	for i := range n {
		cases = append(cases, g.file(fmt.Sprintf("f%05d", i)))
	}
	if err := g.writeBlobs(); err != nil {
		t.Fatal(err)
	}
	failed := diffCases(t, agent, cases)
	refused := 0
	for _, c := range cases {
		if c.ompThrew {
			refused++
		}
	}
	t.Logf("omp cannot open %d of the %d files that xdev reads; verify flags each, and no other", refused, n)
	var bad []string
	for name := range failed {
		bad = append(bad, name)
	}
	if len(bad) == 0 {
		t.Logf("0 differences in %d files", n)
		return
	}
	t.Errorf("%d of %d files differ from omp (seed %d)", len(bad), n, seed)
	sort.Strings(bad)
	byName := map[string]*diffCase{}
	for _, c := range cases {
		byName[c.name] = c
	}
	for i, name := range bad {
		if i >= 3 {
			if i < 15 {
				t.Errorf("%s: %s", name, strings.Join(failed[name], "\n"))
			}
			continue
		}
		c := shrinkCase(t, agent, byName[name])
		why := diffCases(t, agent, []*diffCase{c})[c.name]
		t.Errorf("%s, shrunk to %d lines:\n%s\n%s", name, len(c.lines), c.bytes(), strings.Join(why, "\n"))
		if *diffKeep != "" {
			os.MkdirAll(*diffKeep, 0o700)
			os.WriteFile(filepath.Join(*diffKeep, fmt.Sprintf("%d-%s.jsonl", seed, name)), c.bytes(), 0o600)
		}
	}
}

// diffCases writes the cases, runs omp over all of them in one process and
// compares each with xdev. It returns the differences of each case that
// has some, by name.
func diffCases(t *testing.T, agent string, cases []*diffCase) map[string][]string {
	t.Helper()
	ompDir := t.TempDir() // omp may rewrite a file it opens: it gets copies
	xdevDir := t.TempDir()
	for _, c := range cases {
		for _, dir := range []string{ompDir, xdevDir} {
			if err := os.WriteFile(filepath.Join(dir, c.name+".jsonl"), c.bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	views := ompDiffViews(t, agent, ompDir)
	blobs := NewBlobStore(filepath.Join(agent, "blobs"))
	bad := map[string][]string{}
	for _, c := range cases {
		file := filepath.Join(xdevDir, c.name+".jsonl")
		before, _ := os.ReadFile(file)
		diffs := compareDiff(file, blobs, views[c.name], c)
		if v := views[c.name]; v.Error != "" && !c.ompRefuses && len(diffs) == 0 {
			if _, err := Open(file, &OpenOptions{Blobs: blobs}); err == nil {
				c.ompThrew = true
			}
		}
		if after, _ := os.ReadFile(file); !bytes.Equal(before, after) {
			diffs = append(diffs, "xdev changed the file")
		}
		if len(diffs) > 0 {
			bad[c.name] = diffs
		}
	}
	return bad
}

// ompDiffView is what scripts/context.ts prints for one file, with the
// values kept as omp printed them.
type ompDiffView struct {
	Error         string
	LeafID        jsonx.Value
	Title         string
	TitleSource   string
	Model         jsonx.Value
	ThinkingLevel jsonx.Value
	Messages      []jsonx.Value
	TitleValue    jsonx.Value // the title as omp printed it (a number stays one)
	NeedsRewrite  bool        // omp rewrites the whole file on its next write
}

func ompDiffViews(t *testing.T, agent, dir string) map[string]ompDiffView {
	t.Helper()
	out := runOmp(t, agent, "context.ts", "--dir", dir)
	all, err := jsonx.Parse(out)
	if err != nil {
		t.Fatalf("omp output: %v", err)
	}
	views := map[string]ompDiffView{}
	for _, v := range all.Items() {
		name := strings.TrimSuffix(filepath.Base(v.Get("file").String()), ".jsonl")
		views[name] = ompDiffViewOf(v)
	}
	return views
}

func ompDiffViewOf(v jsonx.Value) ompDiffView {
	return ompDiffView{
		Error: v.Get("error").String(), LeafID: v.Get("leafId"),
		Title: v.Get("title").String(), TitleSource: v.Get("titleSource").String(),
		Model: v.Get("model"), ThinkingLevel: v.Get("thinkingLevel"),
		Messages: v.Get("messages").Items(), TitleValue: v.Get("title"),
		NeedsRewrite: v.Get("needsRewrite").Truthy(),
	}
}

// compareDiff compares xdev's reading of file (windowed and full) with omp's.
func compareDiff(file string, blobs *BlobStore, omp ompDiffView, c *diffCase) []string {
	var diffs []string
	if omp.Error != "" {
		if c.ompRefuses {
			if _, err := Open(file, &OpenOptions{Blobs: blobs}); err != nil {
				return []string{"xdev refuses a file whose only fault is its slot: " + err.Error()}
			}
			return nil
		}
		if _, err := Open(file, &OpenOptions{Blobs: blobs}); err != nil {
			return nil // both refuse
		}
		// xdev reads more than omp; verify must say omp cannot.
		if !verifySaysOmpRefuses(file, blobs) {
			return []string{"omp refuses the file, xdev reads it, and verify does not say so: " + omp.Error}
		}
		return nil
	}
	if c.ompRefuses {
		return []string{"omp read a file with a slot it should refuse"}
	}
	if verifySaysOmpRefuses(file, blobs) {
		diffs = append(diffs, "verify says omp refuses a file omp reads")
	}
	if got := verifySaysOmpRewrites(file, blobs); got != omp.NeedsRewrite {
		diffs = append(diffs, fmt.Sprintf("verify says omp rewrites the file on its next write: %v, omp: %v", got, omp.NeedsRewrite))
	}
	for _, full := range []bool{false, true} {
		s, err := Open(file, &OpenOptions{Full: full, Blobs: blobs})
		if err != nil {
			return append(diffs, fmt.Sprintf("full=%v: xdev refuses the file omp reads: %v", full, err))
		}
		ctx := s.BuildContext()
		title, src := s.Title()
		wantLeaf := omp.LeafID
		if !wantLeaf.Defined() {
			wantLeaf = jsonx.NullValue()
		}
		// A v1 file has no ids: omp draws random ones as it migrates it.
		if got := IDValue(ctx.LeafID); s.version > 1 && string(got.JSON()) != string(wantLeaf.JSON()) {
			// omp's leaf id is the last entry's; a falsy one leads to the
			// same entry, which is all xdev's key records.
			if wantLeaf.Truthy() || got.Truthy() {
				diffs = append(diffs, fmt.Sprintf("full=%v: leaf %s, omp %s", full, got.JSON(), wantLeaf.JSON()))
			}
		}
		wantModel := omp.Model.ToString()
		if !omp.Model.Defined() {
			wantModel = ""
		}
		if ctx.Model() != wantModel {
			diffs = append(diffs, fmt.Sprintf("full=%v: model %q, omp %q", full, ctx.Model(), wantModel))
		}
		if want := omp.ThinkingLevel.ToString(); ctx.ThinkingLevel != want {
			diffs = append(diffs, fmt.Sprintf("full=%v: thinking %q, omp %q", full, ctx.ThinkingLevel, want))
		}
		// A title of another type than a string is compared as a value
		// below; its text is JavaScript's String() of it.
		textTitle := omp.TitleValue.Kind() == jsonx.String || omp.TitleValue.Nullish()
		if textTitle && title != omp.Title || src.wire() != omp.TitleSource && !(src == TitleSubagent && omp.TitleSource == "") {
			diffs = append(diffs, fmt.Sprintf("full=%v: title %q/%q, omp %q/%q", full, title, src.wire(), omp.Title, omp.TitleSource))
		}
		// The values themselves, as xdev context --json prints them.
		for _, v := range []struct {
			what      string
			xdev, omp jsonx.Value
		}{{"title", s.TitleValue(), omp.TitleValue}, {"model", ctx.ModelValue, omp.Model}, {"thinking level", ctx.ThinkingValue, omp.ThinkingLevel}} {
			x, o := v.xdev, v.omp
			if x.Nullish() {
				x = jsonx.Str("")
			}
			if o.Nullish() {
				o = jsonx.Str("")
			}
			if !bytes.Equal(x.JSON(), o.JSON()) {
				diffs = append(diffs, fmt.Sprintf("full=%v: %s %s, omp %s", full, v.what, x.JSON(), o.JSON()))
			}
		}
		if len(ctx.Messages) != len(omp.Messages) {
			diffs = append(diffs, fmt.Sprintf("full=%v: %d messages, omp %d", full, len(ctx.Messages), len(omp.Messages)))
		}
		for i := 0; i < len(ctx.Messages) && i < len(omp.Messages); i++ {
			got, err := ctx.Messages[i].MarshalJSON()
			want := omp.Messages[i].JSON()
			if err != nil || !bytes.Equal(got, want) {
				diffs = append(diffs, fmt.Sprintf("full=%v: message %d:\n  xdev %s\n  omp  %s", full, i, got, want))
				break
			}
		}
		if len(diffs) > 0 {
			return diffs
		}
	}
	return diffs
}

// verifySaysOmpRefuses reports whether Verify flags the file as one omp
// cannot open.
func verifySaysOmpRefuses(file string, blobs *BlobStore) bool {
	probs, err := Verify(file, &VerifyOptions{Blobs: blobs})
	if err != nil {
		return false
	}
	for _, p := range probs {
		if p.Kind == ProblemOmpRefuses {
			return true
		}
	}
	return false
}

// verifySaysOmpRewrites reports whether Verify says omp will rewrite the
// whole file on its next write: an old format, or lines omp counts as
// malformed.
func verifySaysOmpRewrites(file string, blobs *BlobStore) bool {
	probs, err := Verify(file, &VerifyOptions{Blobs: blobs})
	if err != nil {
		return false
	}
	for _, p := range probs {
		switch p.Kind {
		case ProblemOldVersion, ProblemMalformed, ProblemTrailingText, ProblemOmpRewrites:
			return true
		}
	}
	return false
}

// shrinkCase removes lines while the file still disagrees: each round
// tries every single-line removal in one omp run and keeps the first that
// still fails.
func shrinkCase(t *testing.T, agent string, c *diffCase) *diffCase {
	for round := 0; round < 40 && len(c.lines) > 1; round++ {
		var cands []*diffCase
		for i := range c.lines {
			lines := append(append([]string(nil), c.lines[:i]...), c.lines[i+1:]...)
			cands = append(cands, &diffCase{name: fmt.Sprintf("%s-s%03d", c.name, i), lines: lines,
				torn: c.torn && i != len(c.lines)-1, ompRefuses: c.ompRefuses})
		}
		failed := diffCases(t, agent, cands)
		if len(failed) == 0 {
			break
		}
		var bad []string
		for name := range failed {
			bad = append(bad, name)
		}
		sort.Strings(bad)
		for _, cand := range cands {
			if cand.name == bad[0] {
				cand.name = c.name
				c = cand
				break
			}
		}
	}
	return c
}
