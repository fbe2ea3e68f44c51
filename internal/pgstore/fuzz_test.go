package pgstore

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/xdev/xdev/internal/session"
)

// FuzzScanLines: whatever a file holds, the rows a push stores are its
// complete lines, in order, at their offsets, byte for byte, and the text
// columns are what PostgreSQL's text type accepts; a file the core
// reader refuses is an error naming it.
func FuzzScanLines(f *testing.F) {
	files, _ := filepath.Glob("../session/testdata/context/*.jsonl")
	for _, p := range files[:min(len(files), 12)] {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte("junk\n{\"type\":\"session\",\"version\":3,\"id\":\"x\"}\n{\"type\":\"message\",\"id\":\"\\u0000\\ud800\"}\ntorn"))
	f.Add([]byte("\n\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got []byte
		cur, err := scanLines("fuzz", bytes.NewReader(data), int64(len(data)), session.Cursor{}, func(r lineRow) error {
			if r.off != int64(len(got)) {
				t.Fatalf("a row at offset %d, want %d", r.off, len(got))
			}
			got = append(append(got, r.line...), '\n')
			for _, s := range []*string{r.entryID, r.parentID, r.typ, r.role, r.doc} {
				if s != nil && (!utf8.ValidString(*s) || strings.IndexByte(*s, 0) >= 0) {
					t.Fatalf("a text column PostgreSQL refuses: %q", *s)
				}
			}
			return nil
		})
		if err != nil {
			// A file the core reader refuses (JSON before the header that
			// is not one) fails its push, naming it; what went before is
			// still the file's bytes, and the push's transaction drops it.
			if !strings.HasPrefix(err.Error(), "fuzz: ") || !bytes.HasPrefix(data, got) {
				t.Fatalf("%v (after %d bytes of rows)", err, len(got))
			}
			return
		}
		want := data[:bytes.LastIndexByte(data, '\n')+1]
		if !bytes.Equal(got, want) || cur.Offset != int64(len(want)) {
			t.Fatalf("rows make %d bytes (cursor %d), the complete lines are %d", len(got), cur.Offset, len(want))
		}
	})
}
