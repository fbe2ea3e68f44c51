package search

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/session"
)

func userMessage(text string) ai.Message {
	return ai.Message{Role: ai.RoleUser, Content: ai.TextContent(text), Timestamp: time.Now().UnixMilli()}
}

// mutator changes a data dir as harnesses and people do: appends (plain,
// branching, compacting), torn writes finished later, rewrites in place
// and by rename, truncation, deletion, new files.
type mutator struct {
	t     testing.TB
	r     *rand.Rand
	dir   string
	files []*mfile
	n     int
}

type mfile struct {
	path string
	ids  []string
	torn string // the rest of a line written in part
}

func (m *mutator) words(n int) string {
	var w []string
	for range n {
		w = append(w, corpus.Vocabulary(m.r.IntN(300)))
	}
	return strings.Join(w, " ")
}

func (m *mutator) id() string {
	m.n++
	return fmt.Sprintf("e%07d", m.n)
}

// entry returns a new entry line for f and records its id.
func (m *mutator) entry(f *mfile) string {
	id := m.id()
	parent := "null"
	if len(f.ids) > 0 {
		p := f.ids[len(f.ids)-1]
		if m.r.IntN(6) == 0 {
			p = f.ids[m.r.IntN(len(f.ids))] // a branch
		}
		parent = `"` + p + `"`
	}
	ts := time.Date(2026, 11, 1+m.r.IntN(28), 0, 0, 0, 0, time.UTC).Format(time.RFC3339)
	var line string
	switch k := m.r.IntN(10); {
	case k == 0 && len(f.ids) > 2:
		line = fmt.Sprintf(`{"type":"compaction","id":%q,"parentId":%s,"timestamp":%q,"summary":%q,"firstKeptEntryId":%q,"tokensBefore":1}`,
			id, parent, ts, m.words(5), f.ids[m.r.IntN(len(f.ids))])
	case k == 1:
		line = fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":%q,"message":{"role":"assistant","content":[{"type":"thinking","thinking":%q},{"type":"text","text":%q},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":%q}}],"model":"m-%d"}}`,
			id, parent, ts, m.words(3), m.words(4), m.words(2), m.r.IntN(3))
	case k == 2:
		line = fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":%q,"message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":%q}]}}`,
			id, parent, ts, m.words(6))
	case k == 3:
		line = fmt.Sprintf(`{"type":"model_change","id":%q,"parentId":%s,"timestamp":%q,"model":"a/b"}`, id, parent, ts)
	default:
		line = fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":%q,"message":{"role":"user","content":%q}}`, id, parent, ts, m.words(5))
	}
	f.ids = append(f.ids, id)
	return line + "\n"
}

func (m *mutator) header(cwd string) string {
	return fmt.Sprintf(`{"type":"session","version":3,"id":"%s","timestamp":"2026-11-01T00:00:00.000Z","cwd":%q}`+"\n", m.id(), cwd)
}

// create writes a new session file.
func (m *mutator) create() {
	f := &mfile{path: filepath.Join(session.SessionsDir(m.dir), fmt.Sprintf("--p%d--", m.r.IntN(3)), fmt.Sprintf("s%d.jsonl", m.n))}
	var b strings.Builder
	b.WriteString(m.header("/p"))
	for range m.r.IntN(8) {
		b.WriteString(m.entry(f))
	}
	os.MkdirAll(filepath.Dir(f.path), 0o700)
	if err := os.WriteFile(f.path, []byte(b.String()), 0o600); err != nil {
		m.t.Fatal(err)
	}
	m.files = append(m.files, f)
}

func (m *mutator) appendTo(f *mfile, s string) {
	fh, err := os.OpenFile(f.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		m.t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteString(s); err != nil {
		m.t.Fatal(err)
	}
}

// step makes one random change.
func (m *mutator) step() string {
	if len(m.files) == 0 || m.r.IntN(8) == 0 {
		m.create()
		return "create"
	}
	i := m.r.IntN(len(m.files))
	f := m.files[i]
	if f.torn != "" {
		m.appendTo(f, f.torn)
		f.torn = ""
		return "finish torn line"
	}
	switch k := m.r.IntN(12); {
	case k < 5:
		var b strings.Builder
		for range 1 + m.r.IntN(3) {
			b.WriteString(m.entry(f))
		}
		m.appendTo(f, b.String())
		return "append"
	case k == 5:
		line := m.entry(f)
		cut := 1 + m.r.IntN(len(line)-2)
		m.appendTo(f, line[:cut])
		f.torn = line[cut:]
		return "torn append"
	case k == 6 || k == 7:
		// Rewrite: same header, new entries; in place or by rename.
		f.ids = nil
		var b strings.Builder
		b.WriteString(m.header("/p"))
		for range 1 + m.r.IntN(6) {
			b.WriteString(m.entry(f))
		}
		if k == 6 {
			os.WriteFile(f.path, []byte(b.String()), 0o600)
		} else {
			tmp := f.path + ".tmp"
			os.WriteFile(tmp, []byte(b.String()), 0o600)
			os.Rename(tmp, f.path)
		}
		return "rewrite"
	case k == 8:
		data, _ := os.ReadFile(f.path)
		lines := strings.SplitAfter(string(data), "\n")
		keep := 1 + m.r.IntN(len(lines))
		os.WriteFile(f.path, []byte(strings.Join(lines[:min(keep, len(lines))], "")), 0o600)
		f.ids = nil // ids no longer known: appends start new roots
		return "truncate"
	case k == 9:
		os.Remove(f.path)
		m.files = slices.Delete(m.files, i, i+1)
		return "delete"
	default:
		// Same size, same mtime second: an in-place edit of one byte.
		data, _ := os.ReadFile(f.path)
		if n := len(data); n > 10 {
			j := n - 2 - m.r.IntN(min(n-2, 40))
			if data[j] >= 'a' && data[j] <= 'y' {
				data[j]++
			}
			fi, _ := os.Stat(f.path)
			os.WriteFile(f.path, data, 0o600)
			os.Chtimes(f.path, fi.ModTime(), fi.ModTime().Add(time.Millisecond))
		}
		return "edit in place"
	}
}

// dump is everything an index holds, in a form two indexes of the same
// files compare by.
func dump(t testing.TB, db *DB) string {
	t.Helper()
	st, _, err := db.conn.Prepare(`SELECT f.path, f.cur_off, f.title, f.session_id, e.entry_id, e.parent_id, e.type, e.role,
		e.tool, e.model, e.ts, e.off, e.line, e.digest, e.on_branch, e.in_context
		FROM entries e JOIN files f ON f.id = e.file ORDER BY f.path, e.off, e.type`)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var b strings.Builder
	for st.Step() {
		for i := range st.ColumnCount() {
			b.WriteString(st.ColumnText(i))
			b.WriteByte('|')
		}
		b.WriteByte('\n')
	}
	n, err := db.int(`SELECT count(*) FROM docs`)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := db.int(`SELECT count(*) FROM files`)
	fmt.Fprintf(&b, "docs %d files %d\n", n, files)
	// Every rowid names its file (rowid.go), and docs holds no rowid
	// entries lost.
	for _, q := range []string{fmt.Sprintf(`SELECT count(*) FROM entries WHERE id >> %d != file`, seqBits),
		`SELECT count(*) FROM docs WHERE rowid NOT IN (SELECT id FROM entries)`} {
		if n, err := db.int(q); err != nil || n != 0 {
			t.Errorf("%s: %d, %v", q, n, err)
		}
	}
	return b.String()
}

// sessionsJoined is Sessions as it was before rowids named their file:
// every match joined to its entries row; what sessionsSQL must equal.
func sessionsJoined(t testing.TB, db *DB, q Query) []string {
	t.Helper()
	p, err := parseQuery(q.Text)
	if err != nil {
		t.Fatal(err)
	}
	from, args := q.from(p)
	st, _, err := db.conn.Prepare(`SELECT f.path, count(*) ` + from + ` GROUP BY f.id ORDER BY f.mtime DESC, f.path`)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := bind(st, args...); err != nil {
		t.Fatal(err)
	}
	var out []string
	for st.Step() {
		out = append(out, fmt.Sprintf("%s %d", st.ColumnText(0), st.ColumnInt(1)))
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sessionsListed is what Sessions gives, in sessionsJoined's form.
func sessionsListed(t testing.TB, db *DB, q Query) []string {
	t.Helper()
	ss, err := db.Sessions(context.Background(), q)
	if err != nil {
		t.Fatalf("sessions %q: %v", q.Text, err)
	}
	var out []string
	for _, s := range ss {
		out = append(out, fmt.Sprintf("%s %d", s.Path, s.Hits))
	}
	return out
}

// randomQuery is a query of the mutator's words, in every form the
// language has, with the filters on files Sessions answers without
// entries.
func (m *mutator) randomQuery() Query {
	w := func() string { return corpus.Vocabulary(m.r.IntN(40)) }
	var text string
	switch m.r.IntN(6) {
	case 0:
		text = w()
	case 1:
		text = w() + " " + w()
	case 2:
		text = w() + " OR " + w()
	case 3:
		text = `"` + w() + " " + w() + `"`
	case 4:
		text = w()[:3] + "*"
	default:
		text = w() + " -" + w()
	}
	q := Query{Text: text, Thinking: m.r.IntN(2) == 0, Subagents: m.r.IntN(2) == 0}
	if m.r.IntN(4) == 0 && len(m.files) > 0 {
		q.Path = m.files[m.r.IntN(len(m.files))].path
	}
	if m.r.IntN(4) == 0 {
		q.Cwd = "/p"
	}
	return q
}

// TestIncrementalEqualsRebuilt: random changes refreshed step by step give
// the index a fresh one of the final state gives, and the same answers.
func TestIncrementalEqualsRebuilt(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5, 6}
	steps := 60
	if testing.Short() {
		seeds, steps = seeds[:2], 30
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			dir := t.TempDir()
			m := &mutator{t: t, r: rand.New(rand.NewPCG(seed, 77)), dir: dir}
			for range 4 {
				m.create()
			}
			inc := openTemp(t, dir)
			// byPaths is refreshed with the paths that changed only, as a
			// watcher names them (RefreshOptions.Paths).
			byPaths := openTemp(t, dir)
			refresh(t, byPaths, RefreshOptions{})
			before := treeStat(dir)
			var did []string
			for i := range steps {
				did = append(did, m.step())
				if m.r.IntN(2) == 0 || i == steps-1 {
					refresh(t, inc, RefreshOptions{})
					now := treeStat(dir)
					refresh(t, byPaths, RefreshOptions{Paths: changedPaths(before, now)})
					before = now
				}
			}
			fresh := openTemp(t, dir)
			refresh(t, fresh, RefreshOptions{})
			if a, b := dump(t, inc), dump(t, fresh); a != b {
				t.Fatalf("after %v:\nincremental:\n%s\nrebuilt:\n%s", did, a, b)
			}
			if a, b := dump(t, byPaths), dump(t, fresh); a != b {
				t.Fatalf("after %v:\nrefreshed by the changed paths:\n%s\nrebuilt:\n%s", did, a, b)
			}
			for k := range 20 {
				q := Query{Text: corpus.Vocabulary(k), Thinking: k%2 == 0}
				if a, b := found(t, inc, q), found(t, fresh, q); !slices.Equal(a, b) {
					t.Errorf("%q: incremental finds %v, rebuilt %v", q.Text, a, b)
				}
			}
			// Sessions, counted by the file a rowid names, is the join
			// through entries, on the index whose rowids were dropped,
			// taken again and extended step by step.
			for range 40 {
				q := m.randomQuery()
				if a, b := sessionsListed(t, inc, q), sessionsJoined(t, inc, q); !slices.Equal(a, b) {
					t.Errorf("%+v: sessions %v, through entries %v", q, a, b)
				}
				// Paths alone: the same sessions, in the same order,
				// with no id, title or cwd.
				p := q
				p.PathsOnly = true
				if a, b := sessionsListed(t, inc, p), sessionsListed(t, inc, q); !slices.Equal(a, b) {
					t.Errorf("%+v: paths only %v, sessions %v", q, a, b)
				}
				ss, _ := inc.Sessions(context.Background(), p)
				for _, s := range ss {
					if s.SessionID != "" || s.Title != "" || s.Cwd != "" || s.Path == "" {
						t.Fatalf("%+v: paths only gives %+v", q, s)
					}
				}
			}
		})
	}
}

// TestConcurrentRefresh: refreshes and searches from several handles at
// once, while a harness appends, never fail, duplicate an entry or lose
// one; the end state is a fresh index's.
func TestConcurrentRefresh(t *testing.T) {
	dir := t.TempDir()
	m := &mutator{t: t, r: rand.New(rand.NewPCG(9, 9)), dir: dir}
	for range 6 {
		m.create()
	}
	path := filepath.Join(t.TempDir(), "index.db")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 100)
	for w := range 3 {
		wg.Go(func() {
			db, err := Open(path, dir, nil)
			if err != nil {
				errs <- err
				return
			}
			defer db.Close()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := db.Refresh(context.Background(), RefreshOptions{}); err != nil {
					errs <- fmt.Errorf("refresher %d: %w", w, err)
					return
				}
				if _, err := db.Search(context.Background(), Query{Text: corpus.Vocabulary(w)}); err != nil {
					errs <- fmt.Errorf("searcher %d: %w", w, err)
					return
				}
			}
		})
	}
	// The harness: appends whole lines only, to files that stay.
	for range 80 {
		f := m.files[m.r.IntN(len(m.files))]
		m.appendTo(f, m.entry(f))
		time.Sleep(2 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	db, err := Open(path, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	refresh(t, db, RefreshOptions{})
	fresh := openTemp(t, dir)
	refresh(t, fresh, RefreshOptions{})
	if a, b := dump(t, db), dump(t, fresh); a != b {
		t.Fatalf("concurrent:\n%s\nrebuilt:\n%s", a, b)
	}
}

// treeStat is every path under dir with what says it changed.
func treeStat(dir string) map[string]string {
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := os.Lstat(p); err == nil {
			st := fi.Sys().(*syscall.Stat_t)
			out[p] = fmt.Sprint(fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), st.Ino)
		}
		return nil
	})
	return out
}

// changedPaths are the paths a watcher would name between two treeStats:
// files made, changed or gone, directories made or gone (a directory gone
// is named, not its files).
func changedPaths(before, after map[string]string) []string {
	paths := []string{}
	for p, s := range after {
		b, ok := before[p]
		if ok && strings.HasPrefix(b, "d") && strings.HasPrefix(s, "d") {
			continue // a directory whose entries changed: those are named
		}
		if b != s {
			paths = append(paths, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			if _, parentGone := before[filepath.Dir(p)]; parentGone {
				if _, still := after[filepath.Dir(p)]; !still {
					continue
				}
			}
			paths = append(paths, p)
		}
	}
	return paths
}
