package session

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/testscale"
)

// loadView is what a load gives, to compare two loads of one file.
func loadView(t *testing.T, path string, opts *OpenOptions) (string, WindowStats) {
	t.Helper()
	s, err := Open(path, opts)
	if err != nil {
		return "error: " + err.Error(), WindowStats{}
	}
	defer s.Close()
	ctx := s.BuildContext()
	type entry struct {
		Line int
		Raw  string
	}
	var entries []entry
	for _, e := range s.Entries() {
		entries = append(entries, entry{e.Line(), string(e.Raw())})
	}
	st := s.WindowStats()
	checkpoint := st.Checkpoint
	st.Checkpoint = false
	b, err := json.Marshal(map[string]any{"messages": ctx.Messages, "models": ctx.Models, "thinking": ctx.ThinkingLevel,
		"leaf": s.LeafID(), "malformed": s.Malformed(), "bad": s.BadLines(), "torn": s.TornTail(), "stats": st,
		"entries": entries, "labels": s.Labels(), "header": s.Header()})
	if err != nil {
		t.Fatal(err)
	}
	st.Checkpoint = checkpoint
	return string(b), st
}

// TestCheckpoint: a load through a checkpoint gives what a load of the
// whole file gives, on the differential tester's generated files (faults,
// duplicates, junk, torn and blank lines, branches, compactions, v1 to
// v3), each written in part and then grown line by line: the first load
// takes a checkpoint, each later one reads only the lines after it. A
// checkpoint is not trusted when the file was rewritten (a new inode),
// edited in place, cut short, or when the checkpoint itself is damaged.
func TestCheckpoint(t *testing.T) {
	oldMin, oldShare := checkpointMinBytes, checkpointShare
	checkpointMinBytes, checkpointShare = 0, 1
	defer func() { checkpointMinBytes, checkpointShare = oldMin, oldShare }()
	dir := t.TempDir()
	g := newSessionGen(7, filepath.Join(dir, "blobs"))
	r := rand.New(rand.NewPCG(7, 9))
	used := 0
	files := testscale.N(120, 400)
	for i := range files {
		c := g.file(fmt.Sprintf("c%04d", i))
		ckDir := filepath.Join(dir, fmt.Sprintf("ck%04d", i))
		path := filepath.Join(dir, c.name+".jsonl")
		plain := &OpenOptions{}
		with := &OpenOptions{Checkpoints: ckDir}
		// Grow the file from a part of its lines to all of them, a few
		// lines at a time.
		n := 1 + r.IntN(max(1, len(c.lines)))
		for n <= len(c.lines) {
			part := &diffCase{name: c.name, lines: c.lines[:n], torn: c.torn && n == len(c.lines)}
			writeGrown(t, path, part.bytes())
			want, _ := loadView(t, path, plain)
			got, st := loadView(t, path, with)
			if got != want {
				t.Fatalf("%s, %d lines: through the checkpoint\n%s\nwhole\n%s", c.name, n, got, want)
			}
			if st.Checkpoint {
				used++
			}
			n += 1 + r.IntN(4)
		}
		// What must not be trusted: each case changes the file, then a
		// load must neither use the checkpoint nor differ.
		for _, change := range []func() bool{
			func() bool { // damage the checkpoint file
				files, _ := filepath.Glob(filepath.Join(ckDir, "*.ckpt"))
				if len(files) == 0 {
					return false
				}
				b, _ := os.ReadFile(files[0])
				b[r.IntN(len(b))] ^= 0x10
				return os.WriteFile(files[0], b, 0o600) == nil
			},
			func() bool { // edit in place, same size
				b, _ := os.ReadFile(path)
				if len(b) < 2 {
					return false
				}
				k := len(b) - 2 - r.IntN(min(len(b)-1, 3000))
				if b[k] == '\n' {
					return false
				}
				b[k] = 'x'
				f, err := os.OpenFile(path, os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteAt(b, 0)
				f.Close()
				return true
			},
			func() bool { // rewritten by rename
				b, _ := os.ReadFile(path)
				tmp := path + ".new"
				os.WriteFile(tmp, b, 0o600)
				return os.Rename(tmp, path) == nil
			},
			func() bool { // cut short
				fi, _ := os.Stat(path)
				return fi.Size() > 1 && os.Truncate(path, fi.Size()/2) == nil
			},
		} {
			loadView(t, path, with) // a checkpoint of the file as it is
			if !change() {
				continue
			}
			want, _ := loadView(t, path, plain)
			got, st := loadView(t, path, with)
			if st.Checkpoint {
				t.Fatalf("%s: a checkpoint was trusted after the file or it changed", c.name)
			}
			if got != want {
				t.Fatalf("%s: after a change, through the checkpoint\n%s\nwhole\n%s", c.name, got, want)
			}
		}
	}
	if used < files {
		t.Errorf("only %d loads read through a checkpoint", used)
	}
	t.Logf("%d loads read through a checkpoint", used)
}

// writeGrown makes the file at path hold b by appending what it lacks
// (the inode stays, as an agent's appends keep it), or writing it anew
// when b does not extend it.
func writeGrown(t *testing.T, path string, b []byte) {
	t.Helper()
	old, err := os.ReadFile(path)
	if err == nil && len(old) <= len(b) && string(b[:len(old)]) == string(old) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(b[len(old):])
		f.Close()
		return
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestPruneCheckpoints: a checkpoint not written for 30 days goes, a
// younger one and anything else in the directory stay.
func TestPruneCheckpoints(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	for name, age := range map[string]time.Duration{"old.ckpt": 31 * 24 * time.Hour, "young.ckpt": 24 * time.Hour, "other": 365 * 24 * time.Hour} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, now.Add(-age), now.Add(-age))
	}
	pruneCheckpoints(dir, now)
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if fmt.Sprint(left) != "[other young.ckpt]" {
		t.Errorf("left %v", left)
	}
}
