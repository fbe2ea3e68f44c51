package pgstore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/omptest"
	"github.com/xdev/xdev/internal/pgtest"
	"github.com/xdev/xdev/internal/session"
)

// ompSQL runs interop/omp/scripts/sql.ts: omp's own SqlSessionStorage,
// on Bun's SQL client, against the database at url.
func ompSQL(t *testing.T, url string, args ...string) jsonx.Value {
	t.Helper()
	v, err := jsonx.Parse(omptest.Run(t, t.TempDir(), "sql.ts", append([]string{url}, args...)...))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// ompFileContexts runs omp's context.ts on files: omp's view of each,
// with its agent dir (where it finds image blobs) agentDir, or an empty
// one when "".
func ompFileContexts(t *testing.T, agentDir string, files ...string) map[string]jsonx.Value {
	t.Helper()
	if agentDir == "" {
		agentDir = t.TempDir()
	}
	v, err := jsonx.Parse(omptest.Run(t, agentDir, "context.ts", files...))
	if err != nil {
		t.Fatal(err)
	}
	return byFile(v)
}

func byFile(v jsonx.Value) map[string]jsonx.Value {
	m := map[string]jsonx.Value{}
	for _, x := range v.Items() {
		f, _ := x.Get("file").Text()
		m[f] = x
	}
	return m
}

// sameView fails t unless two of omp's views of a session agree: title,
// model, thinking level and every message byte for byte.
func sameView(t *testing.T, name string, want, got jsonx.Value) {
	t.Helper()
	if e := got.Get("error"); e.Defined() {
		t.Errorf("%s: omp cannot resume it: %s", name, e.JSON())
		return
	}
	for _, k := range []string{"leafId", "title", "titleSource", "model", "thinkingLevel"} {
		if x, y := string(want.Get(k).JSON()), string(got.Get(k).JSON()); x != y {
			t.Errorf("%s: %s %s, want %s", name, k, y, x)
		}
	}
	wm, gm := want.Get("messages").Items(), got.Get("messages").Items()
	if len(wm) != len(gm) {
		t.Errorf("%s: %d messages, want %d", name, len(gm), len(wm))
	}
	for i := range min(len(wm), len(gm)) {
		if x, y := string(wm[i].JSON()), string(gm[i].JSON()); x != y {
			t.Errorf("%s: message %d:\n got %.300s\nwant %.300s", name, i, y, x)
			return
		}
	}
}

// xdevView is xdev's view of a store in the shape of omp's.
func xdevView(t *testing.T, s *session.Store) jsonx.Value {
	t.Helper()
	ctx := s.BuildContext()
	msgs := make([]jsonx.Value, len(ctx.Messages))
	for i := range ctx.Messages {
		raw, err := ctx.Messages[i].MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if msgs[i], err = jsonx.Parse(raw); err != nil {
			t.Fatal(err)
		}
	}
	title, _ := s.Title()
	return jsonx.ObjectOf(
		jsonx.Member{Name: "title", Value: jsonx.Str(title)},
		jsonx.Member{Name: "model", Value: jsonx.Str(ctx.Model())},
		jsonx.Member{Name: "thinkingLevel", Value: jsonx.Str(ctx.ThinkingLevel)},
		jsonx.Member{Name: "messages", Value: jsonx.ArrayOf(msgs...)},
	)
}

// sameMessages compares xdev's view with omp's on what both show.
func sameMessages(t *testing.T, name string, omp, xdev jsonx.Value) {
	t.Helper()
	if e := omp.Get("error"); e.Defined() {
		t.Errorf("%s: omp cannot resume it: %s", name, e.JSON())
		return
	}
	for _, k := range []string{"title", "model", "thinkingLevel"} {
		if x, y := string(omp.Get(k).JSON()), string(xdev.Get(k).JSON()); x != y {
			t.Errorf("%s: xdev's %s %s, omp's %s", name, k, y, x)
		}
	}
	om, xm := omp.Get("messages").Items(), xdev.Get("messages").Items()
	if len(om) != len(xm) {
		t.Errorf("%s: xdev reads %d messages, omp %d", name, len(xm), len(om))
	}
	for i := range min(len(om), len(xm)) {
		if x, y := string(om[i].JSON()), string(xm[i].JSON()); x != y {
			t.Errorf("%s: message %d:\nxdev %.300s\n omp %.300s", name, i, y, x)
			return
		}
	}
}

// TestOmpTable proves xdev and omp's own SqlSessionStorage (omp 18.2.3 on
// Bun's SQL client) read each other's rows of omp_session_files, on the
// same PostgreSQL:
//   - xdev pushes a data dir's sessions (xdev's, omp's samples, a corpus);
//     omp lists them with the titles xdev lists, and resumes each with
//     the context omp reads from the file itself;
//   - omp continues one of them in the table and retitles it; xdev pushes
//     nothing over that (the row is no prefix of the file any more), and
//     reads the row with omp's context;
//   - omp writes new sessions in the table; xdev lists them, reads them
//     with omp's context, and pulls them as files omp resumes alike.
func TestOmpTable(t *testing.T) {
	omptest.Require(t)
	ctx := context.Background()
	url := pgtest.NewDB(t)
	db, err := Connect(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tbl, err := db.OmpTable("")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := corpus.WriteDir(dir, 6, 1); err != nil {
		t.Fatal(err)
	}
	var omp []string
	for _, f := range []string{"../session/testdata/omp/sessions/*/*.jsonl"} {
		m, _ := filepath.Glob(f)
		omp = append(omp, m...)
	}
	for _, f := range omp {
		dst := filepath.Join(session.SessionsDir(dir), "--omp--", filepath.Base(f))
		os.MkdirAll(filepath.Dir(dst), 0o700)
		b, _ := os.ReadFile(f)
		os.WriteFile(dst, b, 0o600)
	}
	// Their images are in the data dir's blob store, where omp finds them
	// reading the files; omp reading the table on another machine has no
	// blob store, and must get them all the same (issue 22).
	if err := os.CopyFS(session.BlobsDir(dir), os.DirFS("../session/testdata/omp/blobs")); err != nil {
		t.Fatal(err)
	}
	p, _, _ := session.NewSessionPath(dir, "/work/xdev")
	s, err := session.Create(p, session.NewOptions{Cwd: "/work/xdev", Title: "written by xdev"})
	if err != nil {
		t.Fatal(err)
	}
	s.AppendMessage(userMsg("a question from xdev"))
	s.Close()

	const root = "/omp-agent/sessions"
	st, err := tbl.Push(ctx, dir, OmpPushOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	files, _ := session.Files(dir)
	if st.New != len(files) || len(st.Failed) > 0 {
		t.Fatalf("push: %+v", st)
	}
	if again, _ := tbl.Push(ctx, dir, OmpPushOptions{Root: root}); again.New+again.Appended+again.Revised != 0 {
		t.Errorf("second push: %+v", again)
	}

	// omp lists what xdev pushed, as xdev lists it.
	rows, err := tbl.Rows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var dirs, keys []string
	local := map[string]string{}
	for _, f := range files {
		rel, _ := filepath.Rel(session.SessionsDir(dir), f.Path)
		key := path.Join(root, filepath.ToSlash(rel))
		local[key] = f.Path
		if !f.Subagent {
			keys = append(keys, key)
			if d := path.Dir(key); !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	listed := map[string]jsonx.Value{}
	for _, v := range ompSQL(t, url, append([]string{"list"}, dirs...)...).Items() {
		p, _ := v.Get("path").Text()
		listed[p] = v
	}
	for _, r := range rows {
		if strings.Contains(strings.TrimPrefix(r.Path, root+"/"), "/") && strings.Count(r.Path, "/") > strings.Count(root, "/")+2 {
			continue // a subagent's: omp lists a project's files only
		}
		v, ok := listed[r.Path]
		if !ok {
			t.Errorf("omp does not list %s", r.Path)
			continue
		}
		if id, _ := v.Get("id").Text(); id != r.ID {
			t.Errorf("%s: omp lists id %q, xdev %q", r.Path, id, r.ID)
		}
	}

	// omp resumes every pushed session from the table with the context it
	// reads from the file; so does xdev.
	fromFiles := map[string]jsonx.Value{}
	var paths []string
	for _, k := range keys {
		paths = append(paths, local[k])
	}
	for f, v := range ompFileContexts(t, dir, paths...) {
		fromFiles[f] = v
	}
	fromTable := byFile(ompSQL(t, url, append([]string{"context"}, keys...)...))
	for _, k := range keys {
		want := fromFiles[local[k]]
		if e := want.Get("error"); e.Defined() {
			continue // omp refuses the file itself
		}
		sameView(t, k, want, fromTable[k])
		if strings.Contains(string(fromTable[k].Get("messages").JSON()), session.BlobRefPrefix) {
			t.Errorf("%s: omp reading the table, with no blob store, gets a blob reference where an image was", k)
		}
		r, err := tbl.Find(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		s, err := tbl.OpenSession(ctx, r, nil)
		if err != nil {
			t.Fatal(err)
		}
		sameMessages(t, k, fromTable[k], xdevView(t, s))
	}

	// omp continues xdev's session in the table, and retitles it.
	rel, _ := filepath.Rel(session.SessionsDir(dir), p)
	key := path.Join(root, filepath.ToSlash(rel))
	ompSQL(t, url, "append", key, "omp continues", "retitled by omp")
	st, err = tbl.Push(ctx, dir, OmpPushOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if st.Behind != 1 || st.Appended+st.New+len(st.Failed) != 0 {
		t.Errorf("push after omp appended in the table: %+v; want the file behind, left alone", st)
	}
	r, err := tbl.Find(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if r.Title != "retitled by omp" || r.TitleSource != "user" {
		t.Errorf("title %q (%s), want omp's", r.Title, r.TitleSource)
	}
	s2, err := tbl.OpenSession(ctx, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	view := byFile(ompSQL(t, url, "context", key))[key]
	sameMessages(t, "continued by omp", view, xdevView(t, s2))

	// omp writes new sessions; xdev reads them, and pulls them as files
	// omp resumes with the same context.
	written := map[string]bool{}
	for i := range 3 {
		v := ompSQL(t, url, "write", root+"/--from-omp--", "/work/omp", fmt.Sprintf("omp's session %d", i), fmt.Sprintf("omp title %d", i))
		p, _ := v.Get("path").Text()
		written[p] = true
	}
	pulled := t.TempDir()
	pst, err := tbl.Pull(ctx, pulled, root, session.LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pst.Written != len(rows)+3 || len(pst.Failed) > 0 {
		t.Errorf("pull: %+v, want %d written", pst, len(rows)+3)
	}
	var pulledFiles []string
	for p := range written {
		r, err := tbl.Find(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(r.Title, "omp title") || r.Cwd != "/work/omp" {
			t.Errorf("%s: title %q, cwd %q", p, r.Title, r.Cwd)
		}
		s, err := tbl.OpenSession(ctx, r, nil)
		if err != nil {
			t.Fatal(err)
		}
		view := byFile(ompSQL(t, url, "context", p))[p]
		sameMessages(t, p, view, xdevView(t, s))
		file := filepath.Join(session.SessionsDir(pulled), filepath.FromSlash(strings.TrimPrefix(p, root+"/")))
		content, _ := tbl.Content(ctx, r)
		if b, _ := os.ReadFile(file); !bytes.Equal(b, content) {
			t.Errorf("%s: the pulled file is not the row's content", file)
		}
		pulledFiles = append(pulledFiles, file)
	}
	ompViews := ompFileContexts(t, "", pulledFiles...)
	for _, f := range pulledFiles {
		key := root + filepath.ToSlash(strings.TrimPrefix(f, session.SessionsDir(pulled)))
		sameView(t, f, byFile(ompSQL(t, url, "context", key))[key], ompViews[f])
	}
}

// TestPulledResumeInOmp: sessions pulled from xdev's tables on another
// machine (another data dir) are resumed by real omp with the context it
// reads from the files that were pushed.
func TestPulledResumeInOmp(t *testing.T) {
	omptest.Require(t)
	ctx := context.Background()
	db := openDB(t)
	src := shapes(t, 4)
	if _, err := db.Push(ctx, src, PushOptions{}); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if _, err := db.Pull(ctx, dst, PullOptions{}); err != nil {
		t.Fatal(err)
	}
	var pushed, pulled []string
	for _, pattern := range []string{"--omp--/*.jsonl", "--golden--/b*.jsonl", "--golden--/c*.jsonl", "*-work-project*/*.jsonl"} {
		m, _ := filepath.Glob(filepath.Join(session.SessionsDir(src), pattern))
		for _, p := range m {
			rel, _ := filepath.Rel(session.SessionsDir(src), p)
			pushed = append(pushed, p)
			pulled = append(pulled, filepath.Join(session.SessionsDir(dst), rel))
		}
	}
	if len(pushed) < 10 {
		t.Fatalf("only %d sessions to resume", len(pushed))
	}
	views := ompFileContexts(t, "", append(append([]string(nil), pushed...), pulled...)...)
	resumed := 0
	for i := range pushed {
		want := views[pushed[i]]
		if e := want.Get("error"); e.Defined() {
			continue // omp refuses the pushed file itself
		}
		sameView(t, pulled[i], want, views[pulled[i]])
		resumed++
	}
	if resumed < 10 {
		t.Errorf("omp resumed only %d of the %d pushed sessions", resumed, len(pushed))
	}
}
