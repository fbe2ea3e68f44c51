package pgstore

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/session"
)

// TestPushChanges makes random changes of every kind a session file sees
// (appends, torn writes finished later, retitles, omp's rewrites,
// truncations) to files on two machines that push and pull the same
// sessions, and checks after every step that the database's current
// revisions are exactly what was pushed last, that no rewrite was merged
// (each is a new revision, the old one kept whole), and that pulls give
// the stored bytes or leave a diverged file alone.
func TestPushChanges(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { testPushChanges(t, seed) })
	}
}

func testPushChanges(t *testing.T, seed uint64) {
	ctx := context.Background()
	db := openDB(t)
	rng := rand.New(rand.NewPCG(seed, 16))
	a := t.TempDir()
	const n = 6
	var paths []string // relative to the sessions dir
	for i := range n {
		p, _, err := session.NewSessionPath(a, fmt.Sprintf("/w/p%d", i%2))
		if err != nil {
			t.Fatal(err)
		}
		s, err := session.Create(p, session.NewOptions{Cwd: fmt.Sprintf("/w/p%d", i%2), Title: "t"})
		if err != nil {
			t.Fatal(err)
		}
		s.AppendMessage(userMsg(fmt.Sprintf("hello %d", i)))
		s.Close()
		rel, _ := filepath.Rel(session.SessionsDir(a), p)
		paths = append(paths, filepath.ToSlash(rel))
	}
	b := t.TempDir()
	// stored is what the database must hold: each path's revisions.
	stored := map[string][][]byte{}
	push := func(dir, origin string) PushStats {
		t.Helper()
		st, err := db.Push(ctx, dir, PushOptions{Origin: origin})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range st.Failed {
			t.Fatalf("push %s: %v", f.Path, f.Err)
		}
		return st
	}
	abs := func(dir, rel string) string { return filepath.Join(session.SessionsDir(dir), filepath.FromSlash(rel)) }
	// model applies the push rule to what dir holds, to say what the
	// database must hold afterwards.
	// A push skips a file whose stat is as its origin last pushed it.
	lastPushed := map[string]string{}
	model := func(dir string) {
		for _, rel := range paths {
			data, err := os.ReadFile(abs(dir, rel))
			if err != nil {
				continue
			}
			fi, _ := os.Stat(abs(dir, rel))
			stat := fmt.Sprint(fi.Size(), fi.ModTime().UnixNano(), fi.Sys().(*syscall.Stat_t).Ino)
			if lastPushed[dir+rel] == stat {
				continue
			}
			lastPushed[dir+rel] = stat
			data = data[:bytes.LastIndexByte(data, '\n')+1]
			revs := stored[rel]
			if len(revs) == 0 {
				stored[rel] = [][]byte{data}
				continue
			}
			cur := revs[len(revs)-1]
			slot := func(x []byte) []byte { return session.SlotLine(x[:min(len(x), session.TitleSlotWidth)]) }
			ls, cs := slot(data), slot(cur)
			body := int64(len(ls))
			switch {
			case (ls == nil) != (cs == nil):
			case len(data) >= len(cur) && bytes.Equal(data[max(body, int64(len(cur))-tailCheck):len(cur)], cur[max(body, int64(len(cur))-tailCheck):]):
				cur = append(cur[:len(cur):len(cur)], data[len(cur):]...)
				if !bytes.Equal(ls, cs) && session.SlotWrittenAfter(ls, cs) {
					cur = append(append([]byte(nil), ls...), cur[session.TitleSlotWidth:]...)
				}
				revs[len(revs)-1] = cur
				continue
			case len(data) < len(cur) && bytes.Equal(data[max(body, int64(len(data))-tailCheck):], cur[max(body, int64(len(data))-tailCheck):len(data)]) &&
				(len(data) == 0 || data[len(data)-1] == '\n'):
				if !bytes.Equal(ls, cs) && session.SlotWrittenAfter(ls, cs) {
					revs[len(revs)-1] = append(append([]byte(nil), ls...), cur[session.TitleSlotWidth:]...)
				}
				continue
			}
			stored[rel] = append(revs, data)
		}
	}
	check := func(step string) {
		t.Helper()
		all, err := db.List(ctx, ListOptions{Revisions: true, Subagents: true})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][][]byte{}
		slices.SortFunc(all, func(x, y *Session) int { return x.Revision - y.Revision })
		for _, s := range all {
			var buf bytes.Buffer
			if err := db.WriteSession(ctx, s, &buf); err != nil {
				t.Fatal(err)
			}
			if int64(buf.Len()) != s.Size {
				t.Errorf("%s: %s holds %d bytes, says %d", step, s.Name(), buf.Len(), s.Size)
			}
			got[s.Path] = append(got[s.Path], buf.Bytes())
			if s.ID == "" || (s.Cwd != "/w/p0" && s.Cwd != "/w/p1") || s.Created.IsZero() {
				t.Errorf("%s: %s lost its header's fields: id %q, cwd %q, created %v", step, s.Name(), s.ID, s.Cwd, s.Created)
			}
			if s.Current != (s.Revision == len(stored[s.Path])) {
				t.Errorf("%s: %s current=%v", step, s.Name(), s.Current)
			}
		}
		for _, rel := range paths {
			if len(got[rel]) != len(stored[rel]) {
				t.Fatalf("%s: %s has %d revisions, want %d", step, rel, len(got[rel]), len(stored[rel]))
			}
			for i := range got[rel] {
				if !bytes.Equal(got[rel][i], stored[rel][i]) {
					t.Fatalf("%s: %s revision %d differs:\n got %q\nwant %q", step, rel, i+1, tail(got[rel][i]), tail(stored[rel][i]))
				}
			}
		}
	}
	model(a)
	push(a, "a")
	check("first push")
	if _, err := db.Pull(ctx, b, PullOptions{}); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, sessionFiles(t, a), sessionFiles(t, b))

	for step := range 40 {
		dir, origin := a, "a"
		if rng.IntN(3) == 0 {
			dir, origin = b, "b"
		}
		rel := paths[rng.IntN(len(paths))]
		p := abs(dir, rel)
		what := ""
		switch k := rng.IntN(10); {
		case k < 4:
			what = "append"
			s, err := session.Open(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			for range 1 + rng.IntN(3) {
				if _, err := s.AppendMessage(userMsg(fmt.Sprintf("step %d %x", step, rng.Uint64()))); err != nil {
					t.Fatal(err)
				}
			}
			s.Close()
		case k == 4:
			what = "torn write"
			f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			fmt.Fprintf(f, `{"type":"custom","customType":"x","id":"%08x","parentId":null,"timestamp":"2026-11-30T00:00:00.000Z","data":{`, rng.Uint32())
			f.Close()
		case k == 5:
			what = "torn write finished"
			f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			f.WriteString("}}\n")
			f.Close()
		case k == 6:
			what = "retitle"
			s, err := session.Open(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.SetTitle(fmt.Sprintf("title %d", step), session.TitleManual); err != nil {
				t.Fatal(err)
			}
			s.Close()
		case k == 7:
			what = "rewrite"
			data, _ := os.ReadFile(p)
			data = bytes.Replace(data, []byte("hello"), []byte("HELLO"), 1)
			os.WriteFile(p+".tmp", data, 0o600)
			os.Rename(p+".tmp", p)
		case k == 8:
			what = "truncate"
			data, _ := os.ReadFile(p)
			lines := bytes.SplitAfter(data, []byte("\n"))
			if len(lines) > 4 {
				os.WriteFile(p, bytes.Join(lines[:len(lines)-2], nil), 0o600)
			}
		default:
			what = "pull"
			before := sessionFiles(t, dir)
			st, err := db.Pull(ctx, dir, PullOptions{})
			if err != nil {
				t.Fatal(err)
			}
			after := sessionFiles(t, dir)
			// Each local file is now the stored revision, or was left as
			// it was: one that went another way, or held more.
			for _, r := range paths {
				cur := stored[r][len(stored[r])-1]
				if !bytes.Equal(after[r], cur) && !bytes.Equal(after[r], before[r]) {
					t.Fatalf("step %d: pull made %s neither the stored revision nor what it was", step, r)
				}
				if bytes.Equal(after[r], cur) && !bytes.Equal(before[r], cur) && !bytes.HasPrefix(cur[session.TitleSlotWidth:], before[r][session.TitleSlotWidth:]) {
					t.Fatalf("step %d: pull replaced %s, which went another way", step, r)
				}
			}
			_ = st
			continue
		}
		model(dir)
		st := push(dir, origin)
		t.Logf("step %d: %s %s in %s: %+v", step, what, rel[len(rel)-12:], origin, st)
		check(fmt.Sprintf("step %d (%s %s in %s)", step, what, rel, origin))
	}
}

func userMsg(text string) ai.Message {
	return ai.Message{Role: ai.RoleUser, Content: ai.Content{IsString: true, String: text}, Timestamp: 1}
}

func tail(b []byte) []byte { return b[max(0, len(b)-120):] }
