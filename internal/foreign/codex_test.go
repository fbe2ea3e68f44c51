package foreign

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/omptest"
	"github.com/xdev/xdev/internal/realfixtures"
	"github.com/xdev/xdev/internal/session"
)

// realCodex holds real Codex rollouts nobody here wrote (their README says
// where they come from), in Codex's sessions/YYYY/MM/DD layout.
var realCodex = realfixtures.Join("codex")

// codexRoot builds a Codex data dir in a temp dir: the real rollouts, and
// hand-made ones for what they lack (images, every tool kind, events
// without a response item, rollbacks, titles, compactions with a
// replacement history, bad lines and times, an archived rollout, a fork, a
// rollout without session_meta), and a session_index.jsonl naming some.
func codexRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	copyFile := func(src, dst string) {
		t.Helper()
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	real := 0
	filepath.WalkDir(realCodex, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			rel, _ := filepath.Rel(realCodex, p)
			copyFile(p, filepath.Join(root, "sessions", rel))
			real++
		}
		return nil
	})
	if real == 0 {
		realfixtures.Absent(t, "real Codex rollouts at "+realCodex)
	}
	const td = "testdata/codex/"
	copyFile(td+"handmade.jsonl", filepath.Join(root, "sessions/2026/03/01/rollout-2026-03-01T10-00-00-019d0000-aaaa-7bbb-8ccc-000000000001.jsonl"))
	copyFile(td+"fork.jsonl", filepath.Join(root, "sessions/2026/03/02/rollout-2026-03-02T10-00-00-019d0000-aaaa-7bbb-8ccc-000000000003.jsonl"))
	copyFile(td+"no-meta.jsonl", filepath.Join(root, "sessions/2026/03/03/rollout-2026-03-03T10-00-00-019d0000-aaaa-7bbb-8ccc-000000000004.jsonl"))
	// A subagent's thread (hand-made after Codex's SessionSource::SubAgent
	// ThreadSpawn as codex-rs serializes it; no real one is in the
	// fixtures).
	copyFile(td+"subagent.jsonl", filepath.Join(root, "sessions/2026/03/01/rollout-2026-03-01T10-05-00-019d0000-aaaa-7bbb-8ccc-000000000005.jsonl"))
	copyFile(td+"archived.jsonl", filepath.Join(root, "archived_sessions/rollout-2026-01-05T08-00-00-019d0000-aaaa-7bbb-8ccc-000000000002.jsonl"))
	copyFile(td+"session_index.jsonl", filepath.Join(root, "session_index.jsonl"))
	return root
}

// TestCodexAsOmp: xdev lists every Codex rollout omp 18.2.3 lists
// (CodexSessionStore.list, run by interop/omp/scripts/foreign-import.ts),
// with the same id, cwd, title and times, and converts each, entry for
// entry and byte for byte, into what omp's load makes of it.
func TestCodexAsOmp(t *testing.T) {
	root := codexRoot(t)
	omp, err := jsonx.Parse(omptest.Run(t, t.TempDir(), "foreign-import.ts", "codex", root))
	if err != nil {
		t.Fatal(err)
	}
	mine, err := ListCodex(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(mine) != len(omp.Items()) {
		t.Errorf("xdev lists %d rollouts, omp %d", len(mine), len(omp.Items()))
	}
	checked := 0
	for i, s := range omp.Items() {
		path, _ := s.Get("path").Text()
		t.Run(filepath.Base(path), func(t *testing.T) {
			if i >= len(mine) || mine[i].Path != path {
				t.Fatalf("omp lists %s at %d; xdev does not", path, i)
			}
			got := mine[i]
			for _, c := range []struct {
				what      string
				xdev, omp string
			}{
				{"id", got.ID, s.Get("id").String()},
				{"cwd", got.Cwd, s.Get("listedCwd").String()},
				{"title", got.Title, s.Get("listedTitle").String()},
				{"created", jsonx.FormatNumber(got.Created), string(s.Get("created").JSON())},
				{"modified", jsonx.FormatNumber(got.Modified), string(s.Get("modified").JSON())},
			} {
				if c.xdev != c.omp {
					t.Errorf("listed %s %q, omp %q", c.what, c.xdev, c.omp)
				}
			}
			conv, err := ConvertCodex(path, got.CodexInfo)
			if e, ok := s.Get("error").Text(); ok {
				if err == nil {
					t.Errorf("omp refuses it (%s); xdev converts it", e)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cwd, _ := s.Get("cwd").Text(); conv.Cwd != cwd {
				t.Errorf("cwd %q, omp %q", conv.Cwd, cwd)
			}
			if title, _ := s.Get("title").Text(); session.CleanTitle(conv.Title) != title {
				t.Errorf("title %q, omp %q", conv.Title, title)
			}
			checked += compareWithOmp(t, conv, s.Get("entries").Items())
		})
	}
	if checked == 0 {
		t.Fatal("no entries compared")
	}
	t.Logf("%d entries of %d rollouts identical to omp's", checked, len(omp.Items()))
}

// TestCodexZstd: a zstd-compressed rollout (which omp does not read) lists
// and converts as its plain copy does.
func TestCodexZstd(t *testing.T) {
	root := t.TempDir()
	plain, err := os.ReadFile("testdata/codex/handmade.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	w, _ := zstd.NewWriter(&z)
	w.Write(plain)
	w.Close()
	dir := filepath.Join(root, "sessions", "2026", "03", "01")
	os.MkdirAll(dir, 0o700)
	name := "rollout-2026-03-01T10-00-00-019d0000-aaaa-7bbb-8ccc-000000000001.jsonl"
	os.WriteFile(filepath.Join(dir, name), plain, 0o600)
	os.WriteFile(filepath.Join(dir, "x", name+".zst"), nil, 0o600) // no such dir: ignored
	zdir := filepath.Join(root, "archived_sessions")
	os.MkdirAll(zdir, 0o700)
	os.WriteFile(filepath.Join(zdir, name+".zst"), z.Bytes(), 0o600)
	list, err := ListCodex(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("listed %d rollouts, want the plain one and the compressed one", len(list))
	}
	var convs [2]*Converted
	for i, s := range list {
		if s.ID != "019d0000-aaaa-7bbb-8ccc-000000000001" || s.Cwd != "/work/handmade" {
			t.Errorf("%s: listed as %+v", s.Path, s)
		}
		info := s.CodexInfo
		info.Created = 0 // the two files' birth times differ; the entries must not
		if convs[i], err = ConvertCodex(s.Path, info); err != nil {
			t.Fatal(err)
		}
	}
	// The hand-made rollout's junk line, array line and torn last line.
	if convs[0].Skipped != 3 || convs[1].Skipped != 3 {
		t.Errorf("skipped %d and %d lines, want 3", convs[0].Skipped, convs[1].Skipped)
	}
	if a, b := bytes.Join(convs[0].Entries, []byte("\n")), bytes.Join(convs[1].Entries, []byte("\n")); !bytes.Equal(a, b) || len(convs[0].Entries) == 0 {
		t.Errorf("the compressed rollout converts differently:\n%.300s\n%.300s", a, b)
	}
	// A damaged frame is an error naming the file, not a panic.
	bad := filepath.Join(zdir, "rollout-bad.jsonl.zst")
	os.WriteFile(bad, append(z.Bytes()[:len(z.Bytes())/2:len(z.Bytes())/2], 0xff, 0xfe), 0o600)
	if _, err := ConvertCodex(bad, CodexInfo{}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a damaged zstd rollout: %v", err)
	}
}

// TestCodexZstdDamaged damages a compressed rollout every way a disk or a
// killed copy does (cut at many lengths, bytes flipped at many offsets,
// the frame replaced by junk) and lists and converts each: every file is
// in the listing, either as the session it still is or with an error
// naming it and the decompression; none is left out of the listing, and
// a conversion that fails says so.
func TestCodexZstdDamaged(t *testing.T) {
	plain, err := os.ReadFile("testdata/codex/handmade.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	w, _ := zstd.NewWriter(&z)
	w.Write(plain)
	w.Close()
	good := z.Bytes()
	var damaged [][]byte
	for n := 0; n < len(good); n += max(1, len(good)/40) {
		damaged = append(damaged, good[:n:n])
	}
	for off := 0; off < len(good); off += max(1, len(good)/40) {
		b := bytes.Clone(good)
		b[off] ^= 0x5a
		damaged = append(damaged, b)
	}
	damaged = append(damaged, []byte("not zstd at all\n"), bytes.Repeat([]byte{0}, 4096))
	root := t.TempDir()
	dir := filepath.Join(root, "sessions", "2026", "03", "01")
	os.MkdirAll(dir, 0o700)
	for i, b := range damaged {
		name := fmt.Sprintf("rollout-2026-03-01T10-00-00-019d0000-aaaa-7bbb-8ccc-%012d.jsonl.zst", i)
		os.WriteFile(filepath.Join(dir, name), b, 0o600)
	}
	list, err := ListCodex(root)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]CodexSession{}
	for _, s := range list {
		listed[filepath.Base(s.Path)] = s
	}
	failed := 0
	for i, b := range damaged {
		name := fmt.Sprintf("rollout-2026-03-01T10-00-00-019d0000-aaaa-7bbb-8ccc-%012d.jsonl.zst", i)
		path := filepath.Join(dir, name)
		s, ok := listed[name]
		if len(b) == 0 {
			continue // an empty file is no rollout, compressed or not
		}
		if !ok {
			t.Errorf("%d bytes of damaged zstd: left out of the listing", len(b))
			continue
		}
		if s.Err != nil {
			failed++
			if !strings.Contains(s.Err.Error(), path) || !strings.Contains(s.Err.Error(), "decompressing zstd") {
				t.Errorf("listed with the error %q, which does not name the file and the decompression", s.Err)
			}
			continue
		}
		if _, err := ConvertCodex(path, s.CodexInfo); err != nil && !strings.Contains(err.Error(), "decompressing zstd") {
			t.Errorf("%s: converting: %v", name, err)
		}
	}
	if failed == 0 {
		t.Error("no damaged file failed to list: the test damages nothing")
	}
	// Cut late: the head lists, the conversion fails and says why.
	var big bytes.Buffer
	big.Write(plain[:bytes.IndexByte(plain, '\n')+1])
	for i := range 20000 {
		fmt.Fprintf(&big, `{"timestamp":"2026-03-01T10:00:01.000Z","type":"event_msg","payload":{"type":"agent_reasoning","text":"step %d of %x"}}`+"\n", i, i*2654435761)
	}
	z.Reset()
	w.Reset(&z)
	w.Write(big.Bytes())
	w.Close()
	late := filepath.Join(dir, "rollout-2026-03-01T10-00-00-019d0000-aaaa-7bbb-8ccc-999999999999.jsonl.zst")
	os.WriteFile(late, z.Bytes()[:z.Len()*3/4], 0o600)
	s, err := CodexSessionAt(root, late)
	if err != nil || s.Err != nil || s.Cwd != "/work/handmade" {
		t.Fatalf("a rollout cut late lists as %+v, %v", s, err)
	}
	if _, err := ConvertCodex(late, s.CodexInfo); err == nil || !strings.Contains(err.Error(), "decompressing zstd") || !strings.Contains(err.Error(), late) {
		t.Errorf("converting a rollout cut late: %v", err)
	}
	t.Logf("%d damaged rollouts, %d listed with an error", len(damaged), failed)
}

// TestCodexSubagentThread: a rollout whose session_meta source is a
// subagent's is listed only with subagents, marked so and naming the
// thread it was spawned from; omp lists it as any other (TestCodexAsOmp).
func TestCodexSubagentThread(t *testing.T) {
	root := codexRoot(t)
	src, err := NewSource(HarnessCodex, root)
	if err != nil {
		t.Fatal(err)
	}
	const sub = "019d0000-aaaa-7bbb-8ccc-000000000005"
	find := func(subagents bool) *Session {
		list, err := src.List(subagents)
		if err != nil {
			t.Fatal(err)
		}
		for i := range list {
			if list[i].ID == sub {
				return &list[i]
			}
		}
		return nil
	}
	if s := find(false); s != nil {
		t.Errorf("a subagent's thread is listed without subagents: %+v", s)
	}
	s := find(true)
	if s == nil || !s.Subagent || s.ParentSession != "019d0000-aaaa-7bbb-8ccc-000000000001" {
		t.Fatalf("with subagents: %+v", s)
	}
	c, err := ConvertCodex(s.Path, s.codex)
	if err != nil || len(c.Entries) == 0 {
		t.Fatalf("converting the subagent's thread: %v", err)
	}
}
