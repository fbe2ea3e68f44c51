package session

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-json-experiment/json"
)

// TestStoreMatchesFreshOpen interleaves two writers on one file at random:
// a store (windowed or whole) that appends, retitles and branches, and
// another writer that appends raw lines (entries chained on the last,
// hanging from older ones, torn writes it finishes later, junk) or writes
// through a store of its own. After each of the first store's writes,
// refused ones included (v1 and v2 files refuse them), it must show what a
// fresh Open of the file shows: the leaf, the context, the title, and for
// a whole store every entry and label, in order.
func TestStoreMatchesFreshOpen(t *testing.T) {
	for c := range 48 {
		r := rand.New(rand.NewPCG(uint64(c), 22))
		version := []int{1, 2, 3, 3, 3}[r.IntN(5)]
		full := r.IntN(2) == 0
		t.Run(fmt.Sprintf("case%d/v%d/full=%v", c, version, full), func(t *testing.T) {
			testStoreMatchesFreshOpen(t, r, version, full)
		})
	}
}

func testStoreMatchesFreshOpen(t *testing.T, r *rand.Rand, version int, full bool) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	header := map[int]string{
		1: `{"type":"session","id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}`,
		2: `{"type":"session","version":2,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}`,
		3: `{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}`,
	}[version]
	slot, _ := MarshalTitleSlot("start", TitleAuto, "2026-01-01T00:00:00.000Z")
	body := string(slot) + header + "\n"
	if r.IntN(3) == 0 {
		body = header + "\n" // no slot: a retitle rewrites the file
	}
	var ids []string
	raw := func(parent string) string {
		id := fmt.Sprintf("%08x", r.Uint32())
		ids = append(ids, id)
		text, _ := json.Marshal(fmt.Sprintf("raw %s", id))
		if version == 1 {
			return `{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":` + string(text) + `,"timestamp":1}}`
		}
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"type":"message","id":"` + id + `","parentId":` + p + `,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":` + string(text) + `,"timestamp":1}}`
	}
	for i := range 1 + r.IntN(6) {
		parent := ""
		if i > 0 {
			parent = ids[len(ids)-1]
		}
		body += raw(parent) + "\n"
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := &OpenOptions{Full: full}
	a, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var b *Store
	pendingTorn := ""
	appendRaw := func(s string) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	lastID := func() string {
		if len(ids) == 0 {
			return ""
		}
		return ids[len(ids)-1]
	}
	for step := range 40 {
		switch k := r.IntN(10); {
		case k < 4: // the other writer
			switch r.IntN(5) {
			case 0:
				appendRaw(raw(lastID()) + "\n")
			case 1:
				if len(ids) > 0 {
					appendRaw(raw(ids[r.IntN(len(ids))]) + "\n") // a branch from an older entry
				}
			case 2:
				if pendingTorn == "" {
					line := raw(lastID())
					cut := 1 + r.IntN(len(line)-1)
					appendRaw(line[:cut])
					pendingTorn = line[cut:]
				} else {
					appendRaw(pendingTorn + "\n")
					pendingTorn = ""
				}
			case 3:
				appendRaw("not json at all {\n")
			case 4:
				if b == nil {
					if b, err = Open(path, nil); err != nil {
						t.Fatal(err)
					}
					defer b.Close()
				}
				if e, err := b.AppendMessage(user(fmt.Sprintf("b %d", step))); err == nil {
					ids = append(ids, e.ID)
				}
			}
			continue
		case k < 7:
			if e, err := a.AppendMessage(user(fmt.Sprintf("a %d", step))); err == nil {
				ids = append(ids, e.ID)
			} else if !errors.Is(err, ErrOldVersion) {
				t.Logf("step %d: append: %v", step, err)
			}
		case k < 8:
			if _, err := a.SetTitle(fmt.Sprintf("title %d", step), TitleManual); err != nil && !errors.Is(err, ErrOldVersion) {
				t.Logf("step %d: retitle: %v", step, err)
			}
		default:
			if len(ids) > 0 {
				to := ids[r.IntN(len(ids))]
				if e, err := a.Branch(to); err == nil {
					ids = append(ids, e.ID)
				}
			}
		}
		compareWithFresh(t, step, a, path, opts)
	}
}

// compareWithFresh fails t unless s shows what a fresh Open of path shows.
func compareWithFresh(t *testing.T, step int, s *Store, path string, opts *OpenOptions) {
	t.Helper()
	fresh, err := Open(path, opts)
	if err != nil {
		t.Fatalf("step %d: a fresh Open: %v", step, err)
	}
	defer fresh.Close()
	if s.LeafID() != fresh.LeafID() {
		t.Fatalf("step %d: leaf %q, a fresh Open's %q", step, s.LeafID(), fresh.LeafID())
	}
	got, _ := json.Marshal(s.BuildContext().Messages)
	want, _ := json.Marshal(fresh.BuildContext().Messages)
	if string(got) != string(want) {
		t.Fatalf("step %d: the context differs from a fresh Open's:\n got %s\nwant %s", step, got, want)
	}
	if gt, _ := s.Title(); gt != func() string { w, _ := fresh.Title(); return w }() {
		w, _ := fresh.Title()
		t.Fatalf("step %d: title %q, a fresh Open's %q", step, gt, w)
	}
	if !opts.Full {
		return
	}
	idsOf := func(es []*Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.ID+":"+string(e.raw))
		}
		return out
	}
	if g, w := idsOf(s.Entries()), idsOf(fresh.Entries()); !slices.Equal(g, w) {
		t.Fatalf("step %d: entries differ from a fresh Open's:\n got %q\nwant %q", step, g, w)
	}
	if g, w := s.Labels(), fresh.Labels(); fmt.Sprint(g) != fmt.Sprint(w) {
		t.Fatalf("step %d: labels %v, a fresh Open's %v", step, g, w)
	}
	if s.Malformed() != fresh.Malformed() {
		t.Errorf("step %d: %d malformed lines, a fresh Open counts %d", step, s.Malformed(), fresh.Malformed())
	}
}
