package session

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// countingReader is an io.ReaderAt that counts the bytes read from it.
type countingReader struct {
	b    []byte
	read int64
}

func (r *countingReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(r.b)) {
		return 0, errors.New("read past the end")
	}
	n := copy(p, r.b[off:])
	r.read += int64(n)
	if n < len(p) {
		return n, errors.New("short read")
	}
	return n, nil
}

// TestOpenReader: a session opened from an io.ReaderAt reads as the same
// file opened by Open (the same context, window and diagnostics), and
// its store refuses writes.
func TestOpenReader(t *testing.T) {
	files, _ := filepath.Glob("testdata/context/*.jsonl")
	omp, _ := filepath.Glob("testdata/omp/sessions/*/*.jsonl")
	files = append(files, omp...)
	if len(files) < 20 {
		t.Fatalf("only %d sample sessions", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want, werr := Open(path, nil)
			r := &countingReader{b: b}
			got, gerr := OpenReader(path, r, int64(len(b)), nil)
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("Open: %v; OpenReader: %v", werr, gerr)
			}
			if werr != nil {
				return
			}
			wc, gc := want.BuildContext(), got.BuildContext()
			if !reflect.DeepEqual(wc.Messages, gc.Messages) || wc.LeafID != gc.LeafID || wc.ThinkingLevel != gc.ThinkingLevel {
				t.Errorf("contexts differ")
			}
			if want.WindowStats() != got.WindowStats() || want.Malformed() != got.Malformed() {
				t.Errorf("window %+v malformed %d; from a reader %+v %d", want.WindowStats(), want.Malformed(), got.WindowStats(), got.Malformed())
			}
			if _, err := got.AppendJSON([]byte(`{"type":"custom","customType":"x"}`)); !errors.Is(err, ErrReadOnly) {
				t.Errorf("append to a reader's store: %v, want ErrReadOnly", err)
			}
		})
	}
	// The window is all a reader's store holds: of a long session with a
	// compaction near its end, two entries.
	path := filepath.Join(t.TempDir(), "long.jsonl")
	s, err := Create(path, NewOptions{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 4000)
	for range 3000 {
		if _, err := s.AppendMessage(user(big)); err != nil {
			t.Fatal(err)
		}
	}
	last, _ := s.AppendMessage(user("kept"))
	if _, err := s.Append(&Compaction{Summary: "s", FirstKeptEntryID: &last.ID, TokensBefore: 1}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	b, _ := os.ReadFile(path)
	r := &countingReader{b: b}
	got, err := OpenReader("long", r, int64(len(b)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got.BuildContext().Messages); n != 2 {
		t.Errorf("%d messages, want the summary and the kept one", n)
	}
	if st := got.WindowStats(); !st.Backward || st.Retained > 3 {
		t.Errorf("window %+v, want the backward load of 2 or 3 entries", st)
	}
}
