package foreign

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/omptest"
	"github.com/xdev/xdev/internal/session"
)

// TestClaudeImportResumes: a Claude Code session imported by xdev resumes
// in real omp with the context omp's own import (persistForeignSession)
// resumes with, message for message, and the same title; xdev reads the
// same context from it.
func TestClaudeImportResumes(t *testing.T) {
	checkImportResumes(t, "claude", claudeRoot(t), func(src string) (*Converted, Provenance, error) {
		c, err := ConvertClaude(src, "/fallback")
		if err != nil {
			return nil, Provenance{}, err
		}
		id := strings.TrimSuffix(filepath.Base(src), ".jsonl")
		return c, Provenance{Harness: "claude", ID: id, Path: src, Cwd: c.Cwd}, nil
	})
}

// TestCodexImportResumes is TestClaudeImportResumes for Codex rollouts.
func TestCodexImportResumes(t *testing.T) {
	root := codexRoot(t)
	checkImportResumes(t, "codex", root, func(src string) (*Converted, Provenance, error) {
		s, err := CodexSessionAt(root, src)
		if err != nil {
			return nil, Provenance{}, err
		}
		c, err := ConvertCodex(src, s.CodexInfo)
		if err != nil {
			return nil, Provenance{}, err
		}
		return c, Provenance{Harness: "codex", ID: s.ID, Path: src, Cwd: s.Cwd}, nil
	})
}

// checkImportResumes imports every session omp imports from root, both
// ways, and compares what real omp resumes from each pair.
func checkImportResumes(t *testing.T, harness, root string, convert func(src string) (*Converted, Provenance, error)) {
	ompOut := t.TempDir()
	omp, err := jsonx.Parse(omptest.Run(t, t.TempDir(), "foreign-persist.ts", harness, root, ompOut))
	if err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	var files []string
	pairs := map[string]string{} // xdev's file → omp's
	subagentSource := map[string]bool{}
	for _, s := range omp.Items() {
		src, _ := s.Get("source").Text()
		ompFile, ok := s.Get("path").Text()
		if !ok {
			continue // omp refuses it (an empty session); so does the test
		}
		c, from, err := convert(src)
		if err != nil {
			t.Fatal(err)
		}
		path, _, err := Import(dataDir, c, from)
		if err != nil {
			t.Fatal(err)
		}
		pairs[path] = ompFile
		if strings.HasPrefix(filepath.Base(src), "agent-") {
			subagentSource[path] = true
		}
		files = append(files, path, ompFile)
	}
	if len(pairs) == 0 {
		t.Fatal("nothing imported")
	}
	views, err := jsonx.Parse(omptest.Run(t, t.TempDir(), "context.ts", files...))
	if err != nil {
		t.Fatal(err)
	}
	byFile := map[string]jsonx.Value{}
	for _, v := range views.Items() {
		f, _ := v.Get("file").Text()
		byFile[f] = v
	}
	for mine, theirs := range pairs {
		a, b := byFile[mine], byFile[theirs]
		if e := a.Get("error"); e.Defined() {
			t.Fatalf("omp cannot resume xdev's import %s: %s", mine, e.JSON())
		}
		if subagentSource[mine] {
			// omp's importer drops every sidechain record, so it makes a
			// subagent's own transcript an empty session; xdev imports
			// the subagent's conversation (StreamClaude says why).
			if n := len(a.Get("messages").Items()); n == 0 || len(b.Get("messages").Items()) != 0 {
				t.Errorf("%s, a subagent's transcript: omp resumes %d messages of xdev's import, %d of omp's; want the conversation and none",
					filepath.Base(mine), n, len(b.Get("messages").Items()))
			}
			continue
		}
		for _, k := range []string{"title", "titleSource", "model", "thinkingLevel"} {
			if x, y := string(a.Get(k).JSON()), string(b.Get(k).JSON()); x != y {
				t.Errorf("%s: %s %s, omp's import %s", filepath.Base(mine), k, x, y)
			}
		}
		am, bm := a.Get("messages").Items(), b.Get("messages").Items()
		if len(am) != len(bm) {
			t.Errorf("%s: %d messages, omp's import %d", filepath.Base(mine), len(am), len(bm))
		}
		for i := range min(len(am), len(bm)) {
			if x, y := string(am[i].JSON()), string(bm[i].JSON()); x != y {
				t.Fatalf("%s: message %d:\n xdev's import %.400s\n  omp's import %.400s", filepath.Base(mine), i, x, y)
			}
		}
		// And xdev resumes its import with omp's context.
		s, err := session.Open(mine, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx := s.BuildContext()
		s.Close()
		if len(ctx.Messages) != len(am) {
			t.Errorf("%s: xdev reads %d messages, omp %d", filepath.Base(mine), len(ctx.Messages), len(am))
		}
	}
	// A second import of the same source is found.
	for _, s := range omp.Items() {
		src, _ := s.Get("source").Text()
		if _, ok := s.Get("path").Text(); !ok {
			continue
		}
		prev, ok, err := Imported(dataDir, Provenance{Harness: harness, Path: src}, "")
		if err != nil || !ok || !prev.SamePath(src) {
			t.Errorf("the import of %s is not found: %v", src, err)
		}
	}
	if prev, ok, _ := Imported(dataDir, Provenance{Harness: harness, Path: "/elsewhere.jsonl"}, ""); ok {
		t.Errorf("an import of a source never imported is found: %s", prev.Path)
	}
	if _, err := os.Stat(dataDir); err != nil {
		t.Fatal(err)
	}
}

// TestImportBlobs: an image of 1,024 base64 characters or more goes to the
// data dir's blob store, as omp's writer puts it, and reads back whole.
func TestImportBlobs(t *testing.T) {
	root := t.TempDir()
	big := strings.Repeat("QUJD", 600) // 2,400 base64 characters
	rollout := filepath.Join(root, "sessions", "2026", "03", "01", "rollout-2026-03-01T10-00-00-019d0000-aaaa-7bbb-8ccc-00000000000b.jsonl")
	os.MkdirAll(filepath.Dir(rollout), 0o700)
	os.WriteFile(rollout, []byte(`{"timestamp":"2026-03-01T10:00:00Z","type":"session_meta","payload":{"id":"019d0000-aaaa-7bbb-8ccc-00000000000b","cwd":"/work/img"}}
{"timestamp":"2026-03-01T10:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"see"},{"type":"input_image","image_url":"data:image/png;base64,`+big+`"}]}}
`), 0o600)
	src, _ := NewSource(HarnessCodex, root)
	s, err := src.At(rollout)
	if err != nil {
		t.Fatal(err)
	}
	conv := src.Stream(s, ForResume)
	dataDir := t.TempDir()
	path, _, err := ImportStream(dataDir, s.Provenance(), conv)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), big) || !strings.Contains(string(raw), "blob:sha256:") {
		t.Errorf("the image is not in the blob store:\n%.600s", raw)
	}
	if blobs, _ := os.ReadDir(session.BlobsDir(dataDir)); len(blobs) != 1 {
		t.Errorf("%d blobs, want 1", len(blobs))
	}
	st, err := session.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := st.BuildContext()
	if len(ctx.Messages) != 1 || len(ctx.Messages[0].Content.Blocks) != 2 || ctx.Messages[0].Content.Blocks[1].Data != big {
		t.Errorf("the image does not read back: %+v", ctx.Messages)
	}
}

// TestImportedPastLongLine: the provenance of an import is found however
// long a line before it is: a line over the core reader's bound (64 MiB)
// is skipped as every reader skips it, not the end of the search, so the
// same source is never imported twice. Each case puts the provenance after
// lines of another length, around the bound and past it.
func TestImportedPastLongLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes sparse lines of 64 MiB")
	}
	src := Provenance{Harness: "claude", Path: "/home/u/.claude/projects/p/s.jsonl", ID: "s"}
	prov := `{"type":"custom","customType":"` + ImportType + `","data":{"source":"claude","sourceId":"s","sourcePath":"/home/u/.claude/projects/p/s.jsonl","sourceCwd":"/w"},"id":"00000003","parentId":"00000002","timestamp":"2026-01-01T00:00:00.000Z"}` + "\n"
	for _, long := range []int64{1 << 10, session.DefaultMaxLineBytes - 1, session.DefaultMaxLineBytes + 1, 100 << 20} {
		dataDir := t.TempDir()
		dir := filepath.Join(session.SessionsDir(dataDir), "--w--")
		os.MkdirAll(dir, 0o700)
		path := filepath.Join(dir, "imported.jsonl")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"type":"session","version":3,"id":"01a00000-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}` + "\n")
		f.WriteString(`{"type":"message","id":"00000001","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1}}` + "\n")
		off, _ := f.Seek(0, io.SeekCurrent)
		if err := f.Truncate(off + long); err != nil { // a line of NULs: not JSON
			t.Fatal(err)
		}
		f.Seek(0, io.SeekEnd)
		f.WriteString("\n" + prov)
		f.Close()
		got, _, err := Imported(dataDir, src, "")
		if err != nil || got.Path != path {
			t.Errorf("provenance after a line of %d bytes: found %q, %v", long, got.Path, err)
		}
	}
}

// TestImportedCostsWhatTheFilesHold: the check for an earlier import
// reads each session of the data dir in a buffer of its own size (pooled),
// so its allocations follow the bytes it reads, not a MiB a file: a data
// dir of 10,500 sessions took 18 s (allocating and clearing 10 GB) where
// it now takes 0.7 s. 400 sessions of a few KB to 300 KB, drawn.
func TestImportedCostsWhatTheFilesHold(t *testing.T) {
	if raceEnabled {
		t.Skip("counts allocations; under the race detector sync.Pool drops what is put in it")
	}
	data := t.TempDir()
	dir := filepath.Join(session.SessionsDir(data), "--w--")
	os.MkdirAll(dir, 0o700)
	r := rand.New(rand.NewPCG(6, 38))
	var bytes int64
	for i := range 400 {
		b := []byte(`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}` + "\n")
		for len(b) < 2000+r.IntN(300_000) {
			b = append(b, `{"type":"message","id":"00000001","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"words words words","timestamp":1}}`+"\n"...)
		}
		bytes += int64(len(b))
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("2026-01-01T00-00-00-000Z_%04d.jsonl", i)), b, 0o600)
	}
	Imported(data, Provenance{Harness: HarnessClaude, ID: "x", Path: "/nowhere"}, "") // warm the pool
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, ok, err := Imported(data, Provenance{Harness: HarnessClaude, ID: "x", Path: "/nowhere"}, ""); err != nil || ok {
		t.Fatalf("%v, %v", ok, err)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(bytes)/4+4<<20 {
		t.Errorf("the check of %d sessions (%d MB) allocated %d MB", 400, bytes>>20, alloc>>20)
	}
}
