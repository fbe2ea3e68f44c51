package corpus

import (
	"fmt"
	"os"
	"path/filepath"
)

// CacheDir is where CachedFile and CachedDir keep what they write, so that
// benchmarks in several packages and processes share one copy:
// $TMPDIR/xdev-bench-corpus.
func CacheDir() string { return filepath.Join(os.TempDir(), "xdev-bench-corpus") }

// generation names what the generator writes: bump it when its output
// changes, so that cached copies of the old output are not used.
const generation = 2

// CachedFile returns the path of a session generated with opts, writing it
// the first time. The file is shared: callers must not change it (copy it
// first). Concurrent callers may both write it; each writes to a temp name
// and renames, so a reader never sees a partial file.
func CachedFile(opts Options) (string, error) {
	name := fmt.Sprintf("v%d-size%d-seed%d-tail%d", generation, opts.Size, opts.Seed, opts.TailSeed)
	if opts.Uncompacted {
		name += "-uncompacted"
	}
	path := filepath.Join(CacheDir(), name+".jsonl")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	os.Remove(tmp)
	if _, err := WriteFile(tmp, opts); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return path, os.Rename(tmp, path)
}

// CachedDir returns a data dir of n generated sessions (see WriteDir),
// writing it the first time. It is shared, like CachedFile's files.
func CachedDir(n int, seed uint64) (string, error) {
	dir := filepath.Join(CacheDir(), fmt.Sprintf("v%d-dir-%d-seed%d", generation, n, seed))
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir, nil
	}
	tmp := fmt.Sprintf("%s.%d.tmp", dir, os.Getpid())
	os.RemoveAll(tmp)
	if _, err := WriteDir(tmp, n, seed); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o600); err != nil {
		return "", err
	}
	os.RemoveAll(dir)
	return dir, os.Rename(tmp, dir)
}
