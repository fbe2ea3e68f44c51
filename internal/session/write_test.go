package session

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/ai"
)

func newSession(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sessions", "-proj", "s.jsonl")
	s, err := Create(path, NewOptions{Cwd: "/proj"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("%s does not end in a newline", path)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestCreateLayoutAndPermissions(t *testing.T) {
	old := syscallUmask(0o000)
	defer syscallUmask(old)
	s, path := newSession(t)
	lines := readLines(t, path)
	if len(lines) != 2 || len(lines[0])+1 != TitleSlotWidth {
		t.Fatalf("new file = %q", lines)
	}
	if !strings.HasPrefix(lines[1], `{"type":"session","version":3,"id":"`+s.ID()+`","timestamp":"`) {
		t.Errorf("header = %s", lines[1])
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s mode = %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
	// Never overwrite an existing file.
	if _, err := Create(path, NewOptions{Cwd: "/proj"}); !errors.Is(err, os.ErrExist) {
		t.Errorf("Create over an existing file: err = %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("leftover files: %v", entries)
	}
}

func TestAppendAndReopen(t *testing.T) {
	s, path := newSession(t)
	u, err := s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("hi <there> & you"), Timestamp: 1})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.AppendMessage(ai.Message{Role: ai.RoleAssistant, Content: ai.BlockContent(ai.Text("hello")),
		Provider: "anthropic", Model: "m", Usage: &ai.Usage{Input: 1, Output: 2, TotalTokens: 3}, StopReason: ai.StopEnd, Timestamp: 2})
	if err != nil {
		t.Fatal(err)
	}
	if a.ParentID != u.ID || s.LeafID() != a.ID {
		t.Errorf("tree: %s→%s leaf %s", a.ParentID, u.ID, s.LeafID())
	}
	lines := readLines(t, path)
	if len(lines) != 4 || !strings.Contains(lines[2], `"content":"hi <there> & you"`) {
		t.Fatalf("lines = %q", lines)
	}
	r, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := r.BuildContext()
	if len(ctx.Messages) != 2 || ctx.LeafID != a.ID || ctx.Model() != "anthropic/m" || ctx.Tokens != 3 {
		t.Errorf("reopened context = %+v", ctx)
	}
}

// TestAppendAfterTornTail: a crash left half a line without a newline; the
// next append starts a new line instead of gluing onto it.
func TestAppendAfterTornTail(t *testing.T) {
	s, path := newSession(t)
	if _, err := s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("one"), Timestamp: 1}); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"type":"message","id":"dead`)
	f.Close()
	if _, err := s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("two"), Timestamp: 2}); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, path)
	if lines[len(lines)-2] != `{"type":"message","id":"dead` {
		t.Errorf("torn line changed: %q", lines[len(lines)-2])
	}
	r, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Malformed() != 1 || len(r.BuildContext().Messages) != 2 {
		t.Errorf("malformed %d, context %d messages", r.Malformed(), len(r.BuildContext().Messages))
	}
}

// TestAppendWaitsForOmpLock: while another live process holds omp's
// lockfile, appends wait; a lock of a dead process is broken.
func TestAppendWaitsForOmpLock(t *testing.T) {
	_, path := newSession(t)
	s, err := Open(path, &OpenOptions{Lock: LockOptions{Timeout: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(lockPath(path), []byte("1:0\n"), 0o600) // pid 1 is alive
	if _, err := s.Append(&ResetBoundary{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("append under a live lock: err = %v", err)
	}
	if n := len(readLines(t, path)); n != 2 {
		t.Errorf("file changed under the lock: %d lines", n)
	}
	os.WriteFile(lockPath(path), []byte("2147483646:0\n"), 0o600) // no such pid
	if _, err := s.Append(&ResetBoundary{}); err != nil {
		t.Fatalf("append after a stale lock: %v", err)
	}
}

func TestConcurrentAppends(t *testing.T) {
	s, path := newSession(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				if _, err := s.Append(&Custom{CustomType: "n", Data: []byte(`{"g":` + itoa(g) + `,"i":` + itoa(i) + `}`)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	r, err := Open(path, &OpenOptions{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Entries()) != 200 || r.Malformed() != 0 {
		t.Errorf("entries %d malformed %d", len(r.Entries()), r.Malformed())
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestSetTitleInPlace(t *testing.T) {
	s, path := newSession(t)
	s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("x"), Timestamp: 1})
	before, _ := os.ReadFile(path)
	if ok, err := s.SetTitle("  Fix\tthe build  ", TitleAuto); !ok || err != nil {
		t.Fatal(ok, err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before[TitleSlotWidth:], after[TitleSlotWidth:len(before)]) {
		t.Error("retitle moved bytes after the slot")
	}
	lines := readLines(t, path)
	if !strings.Contains(lines[0], `"title":"Fix the build","source":"auto"`) || len(lines[0])+1 != TitleSlotWidth {
		t.Errorf("slot = %s", lines[0])
	}
	if !strings.Contains(lines[len(lines)-1], `"type":"title_change"`) || !strings.Contains(lines[len(lines)-1], `"source":"auto"`) {
		t.Errorf("no title_change: %s", lines[len(lines)-1])
	}
	if ok, _ := s.SetTitle("Mine", TitleManual); !ok {
		t.Error("manual title refused")
	}
	if ok, _ := s.SetTitle("Robot", TitleAuto); ok {
		t.Error("auto title replaced a manual one")
	}
	r, _ := Open(path, nil)
	if title, src := r.Title(); title != "Mine" || src != TitleManual {
		t.Errorf("reopened title %q %v", title, src)
	}
	if !strings.Contains(readLines(t, path)[0], `"source":"user"`) {
		t.Error("manual is not written as user")
	}
}

// TestSetTitleWithoutSlot: a file without a slot gets one through an
// atomic rewrite that keeps every other byte.
func TestSetTitleWithoutSlot(t *testing.T) {
	body := testHeader + testUser("00000001", "", "x")
	path := writeFile(t, t.TempDir(), "noslot.jsonl", body)
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetTitle("Titled", TitleManual); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.HasPrefix(after[TitleSlotWidth:], []byte(body)) {
		t.Errorf("rewrite lost bytes:\n%s", after)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
}

func TestBranchMarker(t *testing.T) {
	s, path := newSession(t)
	u1, _ := s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("a"), Timestamp: 1})
	s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("b"), Timestamp: 2})
	m, err := s.Branch(u1.ID)
	if err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, path)
	last := lines[len(lines)-1]
	want := `{"type":"custom","customType":"branch","data":{"to":"` + u1.ID + `"},"id":"` + m.ID + `","parentId":"` + u1.ID + `"`
	if !strings.HasPrefix(last, want) {
		t.Errorf("marker = %s\nwant prefix %s", last, want)
	}
	r, _ := Open(path, nil)
	if msgs := r.BuildContext().Messages; len(msgs) != 1 || msgs[0].Text() != "a" {
		t.Errorf("context after branch = %v", msgs)
	}
	if _, err := s.Branch("nope"); err == nil {
		t.Error("branch to a missing entry accepted")
	}
}

func TestAppendJSON(t *testing.T) {
	s, _ := newSession(t)
	e, err := s.AppendJSON([]byte(`{"type":"message","message":{"role":"user","content":"x","timestamp":1},"extra":{"keep":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(e.Raw()), `"extra":{"keep":true}`) || e.ParentID != "" || len(e.ID) != 8 {
		t.Errorf("entry = %s", e.Raw())
	}
	for _, bad := range []string{`[]`, `{"id":"x"}`, `{"type":"session"}`, `{"type":"message","parentId":"missing"}`,
		`{"type":"message","id":"` + e.ID + `"}`, `{"type":"message","message":{"content":"no role"}}`, `{"type":"label","timestamp":"yesterday"}`} {
		if _, err := s.AppendJSON([]byte(bad)); err == nil {
			t.Errorf("AppendJSON(%s) accepted", bad)
		}
	}
}

func TestLazyPersistence(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lazy.jsonl")
	s, err := New(path, NewOptions{Cwd: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	s.EnableAutoPersist()
	s.Append(&ModelChange{Model: "a/b"})
	s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("q"), Timestamp: 1})
	s.SetTitle("Draft", TitleManual)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("file written before the first assistant message")
	}
	if _, err := s.AppendMessage(ai.Message{Role: ai.RoleAssistant, Content: ai.BlockContent(ai.Text("a")), StopReason: ai.StopEnd, Timestamp: 2}); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, path)
	if len(lines) != 6 || !strings.Contains(lines[0], `"title":"Draft","source":"user"`) {
		t.Fatalf("materialized file = %q", lines)
	}
	s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("more"), Timestamp: 3})
	if n := len(readLines(t, path)); n != 7 {
		t.Errorf("append after materializing: %d lines", n)
	}
}

// TestLockLinger: the lockfile outlives an append by the linger, so a burst
// takes it once; then, or at Close, it is gone.
func TestLockLinger(t *testing.T) {
	s, path := newSession(t)
	m := ai.Message{Role: ai.RoleUser, Content: ai.TextContent("x"), Timestamp: 1}
	if _, err := s.AppendMessage(m); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lockPath(path)); err != nil {
		t.Errorf("lockfile not held right after an append: %v", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for fileExists(lockPath(path)) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if fileExists(lockPath(path)) {
		t.Fatalf("lockfile still there long after the linger (%v)", DefaultLockLinger)
	}
	// The next append re-checks the file: someone else's line is kept.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"type":"custom","customType":"other","id":"other1","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z"}` + "\n")
	f.Close()
	if _, err := s.AppendMessage(m); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(m); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if fileExists(lockPath(path)) {
		t.Error("lockfile left after Close")
	}
	r, err := Open(path, &OpenOptions{Full: true})
	if err != nil || len(r.Entries()) != 4 || r.Malformed() != 0 {
		t.Errorf("reopen: %v, %d entries, %d malformed", err, len(r.Entries()), r.Malformed())
	}
}

// TestAppendJSONLinesImages: xdev append moves large images into the blob
// store where omp's writer does (issue 12, item 7), leaves small ones and
// other positions inline, accepts lone surrogate escapes, and the context
// resolves everything back to what was given.
func TestAppendJSONLinesImages(t *testing.T) {
	s, path := newSession(t)
	blobDir := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(path))), "blobs")
	big := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("png!"), 300)) // 1,600 characters
	small := base64.StdEncoding.EncodeToString([]byte("tiny"))
	dataURL := "data:image/png;base64," + big
	lines := [][]byte{
		[]byte(`{"type":"message","message":{"role":"user","content":[{"type":"image","data":"` + big + `","mimeType":"image/png"},{"type":"image","data":"` + small + `","mimeType":"image/png"},{"type":"text","text":"lone \ud800"}],"timestamp":1}}`),
		[]byte(`{"type":"message","message":{"role":"toolResult","toolCallId":"c","toolName":"t","content":[{"type":"text","text":"x"}],"details":{"images":[{"data":"` + big + `","mimeType":"image/jpeg"}],"image_url":"` + dataURL + `","other":{"data":"` + big + `","mimeType":"image/png"}},"timestamp":2}}`),
	}
	es, err := s.AppendJSONLines(lines)
	if err != nil {
		t.Fatal(err)
	}
	raw0, raw1 := string(es[0].Raw()), string(es[1].Raw())
	if strings.Contains(raw0, big) || !strings.Contains(raw0, small) || !strings.Contains(raw0, `lone \ud800`) {
		t.Errorf("first entry on disk: %.300s", raw0)
	}
	// details.images and image_url are externalized; an image payload under
	// any other key is not (omp's isExternalizableImagePosition).
	if strings.Count(raw1, big) != 1 || strings.Count(raw1, BlobRefPrefix) != 2 {
		t.Errorf("second entry on disk: %.600s", raw1)
	}
	// The same bytes in two places are one blob; the data URL is another.
	if entries, _ := os.ReadDir(blobDir); len(entries) != 2 {
		t.Errorf("%d blobs, want 2", len(entries))
	}
	r, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := r.BuildContext()
	if ctx.MissingBlobs != 0 || len(ctx.Messages) != 2 {
		t.Fatalf("context: %d messages, %d missing blobs", len(ctx.Messages), ctx.MissingBlobs)
	}
	m0, _ := ctx.Messages[0].MarshalJSON()
	m1, _ := ctx.Messages[1].MarshalJSON()
	if !strings.Contains(string(m0), big) || !strings.Contains(string(m0), `lone \ud800`) ||
		strings.Count(string(m1), big) != 3 || !strings.Contains(string(m1), dataURL) {
		t.Errorf("context does not give back what was appended:\n%.400s\n%.400s", m0, m1)
	}
	// omp resumes the file with the same context, blobs resolved from the
	// same data dir.
	agent := filepath.Dir(blobDir)
	compareWithOmp(t, path, NewBlobStore(blobDir), ompContexts(t, agent, path)[path])
}

// TestRewriteKeepsOtherWriters: a retitle of a file without a slot
// rewrites it, which a writer that ignores omp's lockfile would never
// see. A process holding the file open for writing (tee -a) makes the
// retitle refuse, changing nothing, and every line it writes lands; bytes
// another writer appended while the rewrite copied the file are carried
// over into the new one.
func TestRewriteKeepsOtherWriters(t *testing.T) {
	if _, err := exec.LookPath("tee"); err != nil {
		t.Skip("no tee")
	}
	body := testHeader + testUser("00000001", "", "x")
	path := writeFile(t, t.TempDir(), "noslot.jsonl", body)
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	// A long-lived writer: tee -a, fed 1,500 lines while retitles are
	// tried.
	tee := exec.Command("tee", "-a", path)
	in, err := tee.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	tee.Stdout = io.Discard
	if err := tee.Start(); err != nil {
		t.Fatal(err)
	}
	line := func(i int) {
		fmt.Fprintf(in, `{"type":"custom","customType":"tee","id":"t%07d","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}`+"\n", i)
	}
	// The retitles start once tee holds the file (its first line has
	// landed): one tried while tee is still starting would rightly
	// succeed, and tee would then write into the file it renamed away.
	line(0)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(`"customType":"tee"`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("tee wrote nothing in 10 s")
		}
	}
	refused := 0
	for i := 1; i < 1500; i++ {
		line(i)
		if i%100 == 50 {
			if _, err := s.SetTitle(fmt.Sprintf("try %d", i), TitleManual); errors.Is(err, ErrOpenElsewhere) {
				refused++
			} else if err != nil {
				t.Fatal(err)
			}
		}
	}
	in.Close()
	tee.Wait()
	if refused == 0 {
		t.Error("no retitle was refused while tee held the file open")
	}
	b, _ := os.ReadFile(path)
	if n := bytes.Count(b, []byte(`"customType":"tee"`)); n != 1500 {
		t.Errorf("%d of tee's 1,500 lines are in the file", n)
	}

	// Appends during the copy by a writer that opens, writes and closes.
	path2 := writeFile(t, t.TempDir(), "noslot.jsonl", body)
	s2, err := Open(path2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	extra := testUser("00000002", "00000001", "appended during the rewrite")
	orig := diskFill
	defer func() { diskFill = orig }()
	once := false
	diskFill = func(w io.Writer, b []byte) (int, error) {
		if !once {
			once = true
			f, _ := os.OpenFile(path2, os.O_WRONLY|os.O_APPEND, 0)
			io.WriteString(f, extra)
			f.Close()
		}
		return w.Write(b)
	}
	if _, err := s2.SetTitle("Titled", TitleManual); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path2)
	if !bytes.HasSuffix(after, []byte(extra)) || !bytes.Contains(after, []byte(body)) {
		t.Errorf("the rewrite lost what was appended meanwhile:\n%s", after)
	}
	if fresh, err := Open(path2, nil); err != nil || s2.LeafID() != fresh.LeafID() || s2.LeafID() != "00000002" {
		t.Errorf("after the rewrite the store's leaf is %q, a fresh Open's %q (%v); want the other writer's", s2.LeafID(), fresh.LeafID(), err)
	}
}
