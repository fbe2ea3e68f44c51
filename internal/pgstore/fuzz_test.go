package pgstore

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/xdev/xdev/internal/jsonx"
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

// FuzzMaskedLines: whatever a file holds, its masked view has its lines,
// one for one, each JSON where the file's is, and ends where its last
// complete line ends; masking it again changes nothing; any window of it
// reads as the whole does; and an append masks as the whole file does.
func FuzzMaskedLines(f *testing.F) {
	files, _ := filepath.Glob("../session/testdata/context/*.jsonl")
	for _, p := range files[:min(len(files), 8)] {
		b, _ := os.ReadFile(p)
		f.Add(b, uint16(len(b)/2))
	}
	f.Add([]byte("\xef\xbb\xbf{\"a\":\"password=Zq8xLm2Pw9Rt4Kv7\"}\r\nnot json token=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB\n{\"k\":\"\\u0067hp_0123456789abcdefghijklmnopqrstuvwxyzAB\"}\n"), uint16(40))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		end := int64(bytes.LastIndexByte(data, '\n') + 1)
		data = data[:end]
		out, v, err := maskedBytes("fuzz", data)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Count(out, []byte("\n")) != bytes.Count(data, []byte("\n")) || v.end != int64(len(out)) {
			t.Fatalf("%d lines masked of %d (view end %d, %d bytes)", bytes.Count(out, []byte("\n")), bytes.Count(data, []byte("\n")), v.end, len(out))
		}
		again, _, _ := maskedBytes("fuzz", out)
		if !bytes.Equal(again, out) {
			t.Fatalf("masked twice:\n%q\nonce:\n%q", again, out)
		}
		fl, ml := bytes.Split(data, []byte("\n")), bytes.Split(out, []byte("\n"))
		for i := range fl {
			trim := func(b []byte) []byte { return bytes.TrimSpace(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))) }
			if jsonx.Valid(trim(fl[i])) != jsonx.Valid(trim(ml[i])) {
				t.Fatalf("line %d: %q masked to %q", i+1, fl[i], ml[i])
			}
		}
		if len(out) > 0 {
			lo := int64(cut) % int64(len(out))
			b := make([]byte, int64(len(out))-lo)
			if _, err := v.ReadAt(b, lo); err != nil || !bytes.Equal(b, out[lo:]) {
				t.Fatalf("a read from %d: %v", lo, err)
			}
		}
		// An append: the lines after a line boundary, masked from where
		// the first lines' masks end, are the whole file's masked tail.
		at := int64(bytes.IndexByte(data, '\n') + 1)
		if at > 0 && at < end {
			head, _, _ := maskedBytes("fuzz", data[:at])
			tail, err := maskView("fuzz", bytes.NewReader(data), at, end, int64(len(head)))
			if err != nil {
				t.Fatal(err)
			}
			b := make([]byte, tail.end-tail.base)
			tail.ReadAt(b, tail.base)
			if !bytes.Equal(append(head, b...), out) && session.SlotLine(data[:at]) == nil {
				t.Fatalf("masked in two pushes:\n%q\nin one:\n%q", append(head, b...), out)
			}
		}
	})
}
