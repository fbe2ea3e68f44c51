package session

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/testscale"
)

// Fuzz targets for every parser. Seeds: the corpus in testdata/fuzz plus
// the hand-made session files. Each must finish without a panic, without
// unbounded work, and (for Open) without changing the file.

func FuzzParseTitleSlot(f *testing.F) {
	f.Add([]byte(`{"type":"title","v":1,"title":"x","source":"auto","updatedAt":"t","pad":"  "}`))
	f.Add([]byte(`{"type":"title","v":1,"title":"\u00e9\ud83d","source":"manual","updatedAt":"t"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		slot, ok := ParseTitleSlot(line)
		if !ok {
			return
		}
		out, err := MarshalTitleSlot(slot.Title, slot.Source, "2026-01-01T00:00:00.000Z")
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != TitleSlotWidth {
			t.Fatalf("re-marshaled slot is %d bytes", len(out))
		}
		// The slot xdev writes is one omp accepts, and its title is a
		// prefix (in code points, lone surrogates kept) of the original.
		again, ok := ParseTitleSlot(out)
		if !ok || !again.OmpAccepts || !strings.HasPrefix(slot.Title, again.Title) {
			t.Fatalf("round trip: %+v -> %s", slot, out)
		}
	})
}

func FuzzEnvelope(f *testing.F) {
	f.Add([]byte(`{"type":"message","id":"00000001","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}`))
	f.Add([]byte(`{"type":"compaction","id":"a","parentId":"b","firstKeptEntryId":"c","firstKeptEntryIndex":3}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var sc scanner
		env, err := sc.scan(line)
		if err != nil {
			return
		}
		if env.typ == "" {
			return
		}
		// A line the envelope accepts must not crash the body decoder.
		_, _ = decodeBody(env.typ, line)
	})
}

// FuzzOpen writes arbitrary bytes after a valid slot and header, or
// instead of them, and opens the file.
func FuzzOpen(f *testing.F) {
	files, _ := filepath.Glob("testdata/context/*.jsonl")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(testHeader + "null\n{\"type\":\"x\"}\n\xff\xfe"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		sum := fileSum(t, path)
		for _, full := range []bool{false, true} {
			s, err := Open(path, &OpenOptions{Full: full, MaxLineBytes: 1 << 16})
			if err != nil {
				continue
			}
			ctx := s.BuildContext()
			for _, e := range s.Entries() {
				s.BuildContextAt(e.ID)
			}
			_ = ctx
		}
		unchanged(t, path, sum)
	})
}

// FuzzBuildContext builds trees from a compact description: each byte pair
// picks an entry type and a parent among earlier ids (or a missing one, or
// itself), so cycles, self-parents, duplicate ids and deep chains all occur.
func FuzzBuildContext(f *testing.F) {
	f.Add([]byte{0, 0, 1, 1, 2, 2, 3, 3})
	f.Add([]byte{4, 200, 5, 1, 6, 2, 7, 0, 0, 9})
	f.Add([]byte(strings.Repeat("\x00\x01", 2000)))
	f.Fuzz(checkTree)
}

// treeTypes are the entries checkTree builds trees from: every kind in the
// window's keep rule (keep.go) and the boundaries that open a window.
var treeTypes = []string{
	`"message","message":{"role":"user","content":"u","timestamp":1}`,
	`"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":{}}],"provider":"p","model":"m","stopReason":"toolUse","timestamp":1}`,
	`"message","message":{"role":"toolResult","toolCallId":"c","toolName":"n","content":[],"isError":false,"timestamp":1}`,
	`"compaction","summary":"s","firstKeptEntryId":"e0000001","tokensBefore":1`,
	`"reset_boundary"`,
	`"branch_summary","fromId":"e0000000","summary":"b"`,
	`"custom_message","customType":"c","content":"x","display":true`,
	`"model_change","model":"a/b"`,
	`"message","message":{"role":"assistant","content":[],"stopReason":"aborted","timestamp":1}`,
	`"thinking_level_change","thinkingLevel":"high"`,
	`"model_change","model":"x/smol","role":"smol"`,
	`"model_change","model":""`,
	`"model_change","model":"c/d"`,
	// Every kind keep.go keeps from before a window: notebooks valid and
	// not, a thinking level reset to off.
	`"custom","customType":"experimental_context_notes","data":{"version":1,"text":"notes"}`,
	`"custom","customType":"experimental_context_notes","data":{"version":2,"text":"ignored"}`,
	`"thinking_level_change","thinkingLevel":null`,
	`"service_tier_change","serviceTier":"flex"`,
}

// checkTree builds a session from spec (two bytes an entry: its type and
// where its parent is, including missing, self, forward and duplicate ids)
// and checks that the windowed Open builds the same context as the full
// one.
func checkTree(t *testing.T, spec []byte) {
	types := treeTypes
	{
		dir := t.TempDir()
		if len(spec) > 8000 {
			spec = spec[:8000]
		}
		var b strings.Builder
		b.WriteString(testHeader)
		n := len(spec) / 2
		for i := range n {
			typ := types[int(spec[2*i])%len(types)]
			p := int(spec[2*i+1])
			parent := "null"
			switch {
			case p == 255:
				parent = `"missing"`
			case p == 254:
				parent = `"` + entryID(i) + `"` // self
			case p < 250 && i > 0:
				parent = `"` + entryID(i-1-p%i) + `"`
			case p >= 250 && i > 0:
				parent = `"` + entryID(i+1) + `"` // forward: cycles
			}
			id := entryID(i)
			if p == 253 && i > 0 {
				id = entryID(i - 1) // duplicate
			}
			b.WriteString(`{"type":` + typ + `,"id":"` + id + `","parentId":` + parent + `,"timestamp":"2026-01-01T00:00:00.000Z"}` + "\n")
		}
		path := filepath.Join(dir, "tree.jsonl")
		os.WriteFile(path, []byte(b.String()), 0o600)
		w, err := Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		full, err := Open(path, &OpenOptions{Full: true})
		if err != nil {
			t.Fatal(err)
		}
		if t.Failed() {
			return
		}
		defer func() {
			if t.Failed() {
				t.Logf("window %+v models %v / %v\n%s", w.WindowStats(), w.BuildContext().Models, full.BuildContext().Models, b.String())
			}
		}()
		assertSameContext(t, w.BuildContext(), full.BuildContext())
	}
}

// TestWindowedEqualsFullRandomTrees runs checkTree over random trees, in
// every test run (the fuzz engine explores further).
func TestWindowedEqualsFullRandomTrees(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := testscale.N(1000, 3000)
	if testing.Short() {
		n = 300
	}
	if v, err := strconv.Atoi(os.Getenv("XDEV_RANDOM_TREES")); err == nil {
		n = v // a longer run: XDEV_RANDOM_TREES=50000
	}
	for i := range n {
		spec := make([]byte, 2*(1+r.IntN(120)))
		for j := range spec {
			spec[j] = byte(r.IntN(256))
			if j%2 == 1 && r.IntN(4) != 0 {
				spec[j] = byte(r.IntN(8)) // mostly near parents: long chains
			}
		}
		t.Run("", func(t *testing.T) {
			checkTree(t, spec)
			if t.Failed() {
				t.Logf("tree %d", i)
			}
		})
	}
}

func entryID(i int) string {
	const hex = "0123456789abcdef"
	b := []byte("e0000000")
	for j := 7; j > 0 && i > 0; j-- {
		b[j] = hex[i%16]
		i /= 16
	}
	return string(b)
}

// FuzzIndex: an Index of any file holds exactly the entries a full Open
// keeps, in order, with the same ids, parents, types and lines; its path
// to the leaf is the store's; every entry reads back with the store's
// bytes; and the file is not changed.
func FuzzIndex(f *testing.F) {
	files, _ := filepath.Glob("testdata/context/*.jsonl")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(testHeader + "{\"type\":\"message\",\"id\":\"a\",\"parentId\":\"b\",\"message\":{\"content\":\"\x01\"}}\n{\"type\":\"label\",\"id\":\"b\",\"parentId\":\"a\"}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		sum := fileSum(t, path)
		opts := &OpenOptions{Full: true, MaxLineBytes: 1 << 16}
		s, serr := Open(path, opts)
		x, xerr := OpenIndex(path, opts)
		if (serr == nil) != (xerr == nil) {
			t.Fatalf("Open: %v; OpenIndex: %v", serr, xerr)
		}
		if serr != nil {
			return
		}
		defer x.Close()
		es := s.Entries()
		if len(es) != x.Len() || s.Malformed() != x.Malformed() {
			t.Fatalf("Open keeps %d entries (%d malformed), the index %d (%d)", len(es), s.Malformed(), x.Len(), x.Malformed())
		}
		for i, e := range es {
			raw, err := x.Raw(i)
			if err != nil || e.ID != x.ID(i) || e.ParentID != x.ParentID(i) || e.Type != x.Type(i) || e.Line() != x.Line(i) || string(raw) != string(e.Raw()) {
				t.Fatalf("entry %d: store %s/%s/%s line %d; index %s/%s/%s line %d (%v)", i, e.ID, e.ParentID, e.Type, e.Line(), x.ID(i), x.ParentID(i), x.Type(i), x.Line(i), err)
			}
		}
		if x.Len() > 0 {
			var want, got []string
			for _, e := range s.EntriesTo(s.LeafID()) {
				want = append(want, e.ID)
			}
			for _, i := range x.PathTo(x.Leaf()) {
				got = append(got, x.ID(i))
			}
			if strings.Join(want, " ") != strings.Join(got, " ") {
				t.Fatalf("path: store %v, index %v", want, got)
			}
		}
		unchanged(t, path, sum)
	})
}

// FuzzTailStatus: the status reader takes any bytes without a panic and
// answers one of the statuses.
func FuzzTailStatus(f *testing.F) {
	f.Add([]byte("{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\"}]}}\n"))
	f.Add([]byte("x\n{\"type\":\"message\",\"message\":0}\n{\"type\":\"message\",\"message\":{\"role\":\"user\"}}"))
	f.Add([]byte("{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"stopReason\":\"aborted\"}}\r\n"))
	f.Add([]byte("{\"type\":\"message\",\"message\":{\"role\":\"assistant\"}} junk\n{\"type\":\"message\",\"type\":\"x\",\"message\":{\"role\":\"user\"}}"))
	f.Add([]byte("{\"type\":\"message\",\"message\":{\"role\":\"toolResult\",\"role\":\"assistant\",\"content\":[null,1,{\"type\":\"text\"}]}}"))
	f.Fuzz(func(t *testing.T, tail []byte) {
		st := tailStatus(tail)
		switch st {
		case StatusComplete, StatusInterrupted, StatusAborted, StatusError, StatusPending, StatusUnknown:
		default:
			t.Fatalf("status %q", st)
		}
		if want := tailStatusReference(tail); st != want {
			t.Fatalf("tailStatus = %q, the reference (encoding/json v2) says %q", st, want)
		}
	})
}
