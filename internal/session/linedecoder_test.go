package session_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/session"
)

// decoded is what a reader of a session's entries sees of one Read.
type decoded struct {
	Type, ID, Parent string
	Raw              string
	Body, Err        bool
	Truncated        string
	Line             int
}

func decodedOf(r session.Read, lineBase int) decoded {
	d := decoded{Truncated: string(r.Truncated), Line: r.Line - lineBase, Err: r.Err != nil}
	if e := r.Entry; e != nil {
		d.Type, d.ID, d.Parent, d.Raw, d.Body = e.Type, e.ID, e.ParentID, string(e.Raw()), e.Body != nil
	}
	// An object id is a key of its own at each read (a JavaScript Map
	// compares objects by identity): numbered in the order read.
	for _, id := range []*string{&d.ID, &d.Parent} {
		if strings.HasPrefix(*id, "\xff{}") {
			*id = "\xff{}"
		}
	}
	return d
}

// TestLineDecoderReadsAsReadFrom: a LineDecoder given a session's lines
// after its header, one at a time, reads what ReadFrom reads of the file
// (each entry, its body, a line too long as its first part, the lines
// skipped), on the hand-made sessions of every entry type, generated
// sessions, and each of those spoiled at random (junk, torn and blank
// lines, text after an entry, lines over the bound).
func TestLineDecoderReadsAsReadFrom(t *testing.T) {
	files, _ := filepath.Glob("testdata/context/*.jsonl")
	tmp := t.TempDir()
	for seed := range uint64(3) {
		path := filepath.Join(tmp, fmt.Sprintf("corpus-%d.jsonl", seed))
		if _, err := corpus.WriteFile(path, corpus.Options{Size: 100 << 10, Seed: seed, SmallOutputs: true}); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	opts := &session.OpenOptions{MaxLineBytes: 4 << 10}
	rng := rand.New(rand.NewPCG(3, 4))
	checked := 0
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(data, []byte("\n"))
		head := -1
		for k, l := range lines {
			if bytes.Contains(l, []byte(`"type":"session"`)) && bytes.Contains(l, []byte(`"version":3`)) {
				head = k
				break
			}
		}
		if head < 0 {
			continue // not of the current version: its ids are given by position
		}
		for round := range 20 {
			body := slicesClone(lines[head+1:])
			if round > 0 {
				body = spoilLines(rng, body)
			}
			compareLineDecoder(t, fmt.Sprintf("%s round %d", path, round), filepath.Join(tmp, "s.jsonl"), body, opts)
			checked++
		}
	}
	if checked < 100 {
		t.Fatalf("only %d sessions checked", checked)
	}
}

// compareLineDecoder checks that a LineDecoder given body's lines reads
// what ReadFrom reads of a file of them from a cursor past a header of
// the current version (a position-derived id, of an entry whose id is
// not a string, is of the line's number).
func compareLineDecoder(t *testing.T, name, file string, body [][]byte, opts *session.OpenOptions) {
	t.Helper()
	whole := bytes.Join(body, nil)
	if len(whole) > 0 && whole[len(whole)-1] != '\n' {
		whole = append(whole, '\n')
		body = slicesClone(body)
		body[len(body)-1] = append(body[len(body)-1], '\n')
	}
	if err := os.WriteFile(file, whole, 0o600); err != nil {
		t.Fatal(err)
	}
	var want []decoded
	_, wst, err := session.ReadFrom(file, session.Cursor{Version: session.CurrentVersion}, opts, func(r session.Read) error {
		want = append(want, decodedOf(r, 0))
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var got []decoded
	dec := session.NewLineDecoder(file, opts)
	for _, l := range body {
		if r, ok := dec.Decode(bytes.TrimSuffix(l, []byte("\n"))); ok {
			got = append(got, decodedOf(r, 0))
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: LineDecoder read\n%+v\nReadFrom\n%+v", name, got, want)
	}
	if g, w := dec.Stats().Malformed, wst.Malformed; g != w {
		t.Fatalf("%s: LineDecoder skipped %d lines, ReadFrom %d", name, g, w)
	}
}

// FuzzLineDecoder: any lines read as ReadFrom reads them past a header.
func FuzzLineDecoder(f *testing.F) {
	f.Add([]byte(`{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}` + "\n\nnot json\n[1]\n"))
	f.Add([]byte(`{"type":"compaction","id":"c","parentId":"a","summary":"s","firstKeptEntryId":"a"} x` + "\n"))
	dir := f.TempDir()
	opts := &session.OpenOptions{MaxLineBytes: 256}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareLineDecoder(t, "fuzz", filepath.Join(dir, "s.jsonl"), bytes.SplitAfter(data, []byte("\n")), opts)
	})
}

func slicesClone(ls [][]byte) [][]byte {
	out := make([][]byte, len(ls))
	for i, l := range ls {
		out[i] = bytes.Clone(l)
	}
	return out
}

// spoilLines changes a session's entry lines at random.
func spoilLines(rng *rand.Rand, lines [][]byte) [][]byte {
	var out [][]byte
	for _, l := range lines {
		switch rng.IntN(12) {
		case 0:
			out = append(out, []byte("not json\n"))
		case 1:
			out = append(out, []byte("\n"), []byte("  \t\n"))
		case 2:
			if n := len(l); n > 2 {
				l = append(l[:rng.IntN(n-1)], '\n')
			}
		case 3:
			l = bytes.Replace(l, []byte("}\n"), []byte("} junk\n"), 1)
		case 4:
			out = append(out, []byte(`{"type":"message","id":"long`+fmt.Sprint(rng.IntN(1000))+`","parentId":null,"message":{"role":"user","content":"`+strings.Repeat("y", 5000+rng.IntN(5000))+`"}}`+"\n"))
		case 5:
			out = append(out, []byte("[1,2]\n"), []byte("\"a string\"\n"))
		}
		out = append(out, l)
	}
	return out
}
