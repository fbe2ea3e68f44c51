package foreign

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestStatAllAsLstat: statAll answers for each path what os.Lstat says of
// it (a regular file's size and modification time; not ok for anything
// else or nothing), whatever the paths' order and directories: random
// trees of files, symlinks (to files and to nothing), FIFOs, directories
// and names gone, named in runs of one directory, alone, and shuffled.
func TestStatAllAsLstat(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 42))
	for round := range 20 {
		root := t.TempDir()
		var paths []string
		for d := range 1 + rng.IntN(6) {
			dir := filepath.Join(root, fmt.Sprint("d", d), "sub")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			for f := range rng.IntN(30) {
				p := filepath.Join(dir, fmt.Sprintf("f%d.jsonl", f))
				switch rng.IntN(8) {
				case 0:
					os.Symlink(filepath.Join(dir, "f0.jsonl"), p)
				case 1:
					os.Symlink(filepath.Join(dir, "nowhere"), p)
				case 2:
					syscall.Mkfifo(p, 0o600)
				case 3:
					os.Mkdir(p, 0o700)
				case 4:
					// named, never made
				default:
					if err := os.WriteFile(p, make([]byte, rng.IntN(5000)), 0o600); err != nil {
						t.Fatal(err)
					}
					at := time.Unix(rng.Int64N(2e9), rng.Int64N(1e9))
					os.Chtimes(p, at, at)
				}
				paths = append(paths, p)
			}
		}
		if round%3 == 2 {
			rng.Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
		}
		got := statAll(paths)
		if len(got) != len(paths) {
			t.Fatalf("round %d: %d stats of %d paths", round, len(got), len(paths))
		}
		for i, p := range paths {
			var want fileStat
			if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
				want = fileStat{size: fi.Size(), mtime: fi.ModTime(), ok: true}
			}
			g := got[i]
			if g.ok != want.ok || g.size != want.size || !g.mtime.Equal(want.mtime) {
				t.Errorf("round %d: %s: %+v, want %+v", round, p, g, want)
			}
		}
	}
}
