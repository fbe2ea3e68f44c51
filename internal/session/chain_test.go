package session

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentWritersKeepOneChain: however writers interleave, an append
// without an explicit parent chains on the file's real last entry, so the
// session stays one chain and every message reaches the resume context.
// Each case draws a mix at random: stores open on the same file at once
// (as separate xdev commands would be), some windowed over a file that
// already has compactions, some appending bursts, one retitling, and
// writer processes. Before the fix, stores that had read the file earlier
// chained on stale leaves: two loops of 200 appends left 78 messages on
// side branches.
func TestConcurrentWritersKeepOneChain(t *testing.T) {
	for c := range 12 {
		r := rand.New(rand.NewPCG(uint64(c), 11))
		stores, perStore := 2+r.IntN(4), 10+r.IntN(40)
		procs := r.IntN(3)
		windowed, retitle := r.IntN(2) == 0, r.IntN(2) == 0
		name := fmt.Sprintf("case%d/stores=%d,per=%d,procs=%d,windowed=%v,retitle=%v", c, stores, perStore, procs, windowed, retitle)
		t.Run(name, func(t *testing.T) {
			s, path := newSession(t)
			if windowed {
				for i := range 30 {
					mustE(t)(s.AppendMessage(user("before " + itoa(i))))
					if i%10 == 9 {
						mustE(t)(s.Append(&Compaction{Summary: "so far", FirstKeptEntryID: ptr(s.LeafID())}))
					}
				}
			}
			before := len(contextOf(t, path))
			var cmds []*exec.Cmd
			stderrs := make([]strings.Builder, procs)
			for p := range procs {
				cmd := helper(t, fmt.Sprintf("%s=%s|p%d|%d", writerHelperEnv, path, p, perStore))
				cmd.Stderr = &stderrs[p]
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				cmds = append(cmds, cmd)
			}
			var wg sync.WaitGroup
			for g := range stores {
				// Every store reads the file before any of them writes: each
				// starts with a leaf the others will move.
				w, err := Open(path, nil)
				if err != nil {
					t.Fatal(err)
				}
				burst := r.IntN(2) == 0
				wg.Go(func() {
					defer w.Close()
					for i := range perStore {
						if _, err := w.AppendMessage(user(fmt.Sprintf("g%d %d", g, i))); err != nil {
							t.Error(err)
							return
						}
						if burst && i%3 == 0 {
							w.AppendMessage(user(fmt.Sprintf("g%d %d tool", g, i)))
						}
					}
				})
				if retitle && g == 0 {
					wg.Go(func() {
						for i := range 20 {
							if _, err := w.SetTitle("title "+itoa(i), TitleManual); err != nil {
								t.Error(err)
							}
						}
					})
				}
			}
			wg.Wait()
			for p, c := range cmds {
				if err := c.Wait(); err != nil {
					t.Errorf("writer %d: %v\n%s", p, err, stderrs[p].String())
				}
			}
			full, err := Open(path, &OpenOptions{Full: true})
			if err != nil {
				t.Fatal(err)
			}
			entries := full.Entries()
			if want := before + stores*perStore + procs*perStore; len(entries) < want {
				t.Errorf("%d entries, want at least %d", len(entries), want)
			}
			onPath := full.EntriesTo(full.LeafID())
			if len(onPath) != len(entries) {
				t.Errorf("%d of %d entries are on the leaf's path: the session forked", len(onPath), len(entries))
			}
			for i := 1; i < len(entries); i++ {
				if entries[i].ParentID != entries[i-1].ID {
					t.Errorf("line %d hangs from %q, not the entry before it (%q)", entries[i].Line(), entries[i].ParentID, entries[i-1].ID)
					break
				}
			}
			msgs := 0
			for _, e := range entries {
				if m := e.Message(); m != nil && strings.HasPrefix(m.Text(), "g") {
					msgs++
				}
			}
			if got := len(contextOf(t, path)) - before; got < msgs {
				t.Errorf("%d of the %d new messages reach the context", got, msgs)
			}
		})
	}
}

func contextOf(t *testing.T, path string) []string {
	t.Helper()
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range s.BuildContext().Messages {
		out = append(out, m.Text())
	}
	return out
}

func ptr[T any](v T) *T { return &v }
