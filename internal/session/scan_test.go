package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestReadFromResumes: reading a file in pieces, stopping wherever a write
// stopped, gives the entries one read gives, each once; an unfinished last
// line waits for its newline.
func TestReadFromResumes(t *testing.T) {
	lines := []string{
		`{"type":"session","version":3,"id":"s","timestamp":"2026-11-01T00:00:00.000Z","cwd":"/p"}`,
		`{"type":"message","id":"a","parentId":null,"timestamp":"2026-11-01T00:00:01.000Z","message":{"role":"user","content":"one"}}`,
		`not json`,
		``,
		`{"type":"message","id":"b","parentId":"a","timestamp":"2026-11-01T00:00:02.000Z","message":{"role":"user","content":"two"}} junk`,
		`{"type":"model_change","id":"c","parentId":"b","model":"x/y"}`,
	}
	var all []byte
	for _, l := range lines {
		all = append(all, l+"\n"...)
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	read := func(c Cursor) (Cursor, []string, ReadStats) {
		var ids []string
		c, st, err := ReadFrom(path, c, nil, func(r Read) error {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			ids = append(ids, r.Entry.ID+"@"+string(all[r.Offset : r.Offset+int64(r.Size)][:12]))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return c, ids, st
	}
	if err := os.WriteFile(path, all, 0o600); err != nil {
		t.Fatal(err)
	}
	end, want, st := read(Cursor{})
	if st.Malformed != 1 || end.Offset != int64(len(all)) || end.Entries != 3 || end.LastID() != "c" {
		t.Fatalf("one read: %+v, %+v", end, st)
	}
	// Every cut of the file: the read up to the cut, then the rest.
	for cut := 0; cut <= len(all); cut++ {
		os.WriteFile(path, all[:cut], 0o600)
		c, first, _ := read(Cursor{})
		if c.Offset > int64(cut) || c.Offset > 0 && all[c.Offset-1] != '\n' {
			t.Fatalf("cut %d: cursor at %d, not after a line", cut, c.Offset)
		}
		os.WriteFile(path, all, 0o600)
		_, rest, _ := read(c)
		if got := append(first, rest...); !slices.Equal(got, want) {
			t.Fatalf("cut %d: read %v, want %v", cut, got, want)
		}
	}
	if _, _, err := ReadFrom(path, Cursor{Offset: int64(len(all)) + 1, Version: 3}, nil, func(Read) error { return nil }); err == nil {
		t.Error("a cursor past the end of the file was taken")
	}
}

// TestReadFromTruncated: a line over the line bound is handed on as its
// first TruncatedBytes, counted as skipped, and the read goes on after it.
func TestReadFromTruncated(t *testing.T) {
	long := `{"type":"message","id":"b","parentId":"a","message":{"role":"user","content":"` + strings.Repeat("x", 3*TruncatedBytes) + `"}}`
	data := `{"type":"session","version":3,"id":"s","timestamp":"2026-11-01T00:00:00.000Z","cwd":"/p"}` + "\n" +
		`{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"one"}}` + "\n" + long + "\n" +
		`{"type":"message","id":"c","parentId":"b","message":{"role":"user","content":"three"}}` + "\n"
	path := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(path, []byte(data), 0o600)
	var got []string
	_, st, err := ReadFrom(path, Cursor{}, &OpenOptions{MaxLineBytes: 2 * TruncatedBytes}, func(r Read) error {
		switch {
		case r.Entry != nil:
			got = append(got, r.Entry.ID)
		case len(r.Truncated) != TruncatedBytes || !strings.HasPrefix(long, string(r.Truncated)) || r.Line != 3:
			t.Errorf("truncated line %d: %d bytes", r.Line, len(r.Truncated))
		default:
			got = append(got, "truncated")
		}
		return nil
	})
	if err != nil || st.Malformed != 1 || strings.Join(got, " ") != "a truncated c" {
		t.Fatalf("read %v, %+v, %v", got, st, err)
	}
}

// TestReadFromOneEntryOfLargeFile: reading one entry of a large session
// again and again (a search's snippets, one a hit) reads each right and
// does not allocate a read buffer of a MiB each time: the buffers are used
// again, from one read to the next and between files.
func TestReadFromOneEntryOfLargeFile(t *testing.T) {
	dir := t.TempDir()
	var offs []int64
	var paths []string
	for f := range 2 {
		var b strings.Builder
		b.WriteString(`{"type":"session","version":3,"id":"s","timestamp":"2026-11-01T00:00:00.000Z","cwd":"/p"}` + "\n")
		for i := range 4000 {
			if f == 0 {
				offs = append(offs, int64(b.Len()))
			}
			fmt.Fprintf(&b, `{"type":"message","id":"e%d","parentId":null,"timestamp":"2026-11-01T00:00:01.000Z","message":{"role":"user","content":"%d %s"}}`+"\n", i, f, strings.Repeat("x", 500))
		}
		paths = append(paths, filepath.Join(dir, fmt.Sprintf("s%d.jsonl", f)))
		if err := os.WriteFile(paths[f], []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	errStop := errors.New("stop")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const reads = 64
	for k := range reads {
		i := k * 61 % len(offs)
		path := paths[k%2]
		var got string
		_, _, err := ReadFrom(path, Cursor{Offset: offs[i], Line: i + 1, HeaderLine: 1, Version: 3, Entries: 1}, nil, func(r Read) error {
			got = r.Entry.ID
			return errStop
		})
		if err != errStop || got != fmt.Sprintf("e%d", i) {
			t.Fatalf("read %d of %s: %q, %v", i, path, got, err)
		}
	}
	runtime.ReadMemStats(&after)
	// Under the race detector a pool drops a quarter of what it is given.
	if n := after.TotalAlloc - before.TotalAlloc; n > reads*maxReadBuffer/4 && !raceEnabled {
		t.Errorf("%d reads of one entry allocated %d bytes", reads, n)
	}
}
