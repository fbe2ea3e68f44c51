package catalog

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSnapshotRoundTrips(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	texts := []string{"", "plain", "größe 日本語", strings.Repeat("界", 400), "\x00\xff\x1b[2J", strings.Repeat("a", 1000)}
	text := func() string { return texts[r.IntN(len(texts))] }
	path := filepath.Join(t.TempDir(), "rows")
	for round := range 50 {
		rows := make([]Row, r.IntN(40)+[]int{0, snapshotHead, snapshotHead + snapshotChunk}[r.IntN(3)])
		for k := range rows {
			rows[k] = Row{Harness: Harness(text()), ID: text(), Title: text(), Cwd: text(), Path: text(), FirstMessage: text(),
				Modified: time.Unix(0, r.Int64N(1<<62)-1<<61), Size: r.Int64N(1 << 40), Subagent: r.IntN(2) == 0}
		}
		if err := WriteSnapshot(path, rows); err != nil {
			t.Fatal(err)
		}
		got, err := ReadSnapshot(path)
		if err != nil || len(got) != len(rows) {
			t.Fatalf("round %d: %d rows, %v; want %d", round, len(got), err, len(rows))
		}
		// The first screen's rows in their order, then the rest by harness.
		head := min(snapshotHead, len(rows))
		slices.SortStableFunc(rows[head:], func(a, b Row) int { return strings.Compare(string(a.Harness), string(b.Harness)) })
		for k, w := range rows {
			w.Title, w.FirstMessage = cutUTF8(w.Title, snapshotTitle), cutUTF8(w.FirstMessage, snapshotMessage)
			g := got[k]
			if g.Harness != w.Harness || g.ID != w.ID || g.Title != w.Title || g.Cwd != w.Cwd || g.Path != w.Path ||
				g.FirstMessage != w.FirstMessage || !g.Modified.Equal(w.Modified) || g.Size != w.Size || g.Subagent != w.Subagent {
				t.Fatalf("round %d, row %d: %+v, want %+v", round, k, g, w)
			}
		}
	}
}

// A snapshot cut, changed or of another version is none.
func TestSnapshotDamaged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows")
	rows := []Row{{Harness: Claude, ID: "a", Title: "t", Path: "/p", Modified: time.Unix(5, 0)}, {Harness: Xdev, ID: "b"}}
	if err := WriteSnapshot(path, rows); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	for k := range len(good) {
		for _, b := range [][]byte{good[:k], append(append([]byte{}, good[:k]...), append([]byte{good[k] ^ 0x40}, good[k+1:]...)...)} {
			os.WriteFile(path, b, 0o600)
			if got, err := ReadSnapshot(path); err == nil {
				t.Fatalf("%d bytes, byte %d changed: read %d rows", len(b), k, len(got))
			}
		}
	}
	// A damaged chunk ends what is read; the chunks before it are read.
	many := make([]Row, snapshotHead+10)
	for k := range many {
		many[k] = Row{Harness: Claude, ID: strconv.Itoa(k)}
	}
	if err := WriteSnapshot(path, many); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	b[len(b)-20] ^= 1
	os.WriteFile(path, b, 0o600)
	if got, err := ReadSnapshot(path); err == nil || len(got) != snapshotHead {
		t.Errorf("read %d rows, %v; want the first chunk's %d and an error", len(got), err, snapshotHead)
	}
	if _, err := ReadSnapshot(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("no file read as a snapshot")
	}
}

func FuzzReadSnapshot(f *testing.F) {
	path := filepath.Join(f.TempDir(), "rows")
	WriteSnapshot(path, []Row{{Harness: Claude, ID: "a", Title: "t", Path: "/p", Modified: time.Unix(5, 0), Subagent: true}})
	good, _ := os.ReadFile(path)
	f.Add(good)
	f.Add([]byte(snapshotMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "rows")
		os.WriteFile(p, b, 0o600)
		rows, err := ReadSnapshot(p)
		if err == nil {
			if err := WriteSnapshot(p, rows); err != nil {
				t.Fatal(err)
			}
			again, err := ReadSnapshot(p)
			if err != nil || len(again) != len(rows) {
				t.Fatalf("a snapshot read does not read back: %v", err)
			}
		}
	})
}
