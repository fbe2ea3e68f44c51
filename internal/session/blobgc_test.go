package session

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestScanBlobs(t *testing.T) {
	data := t.TempDir()
	copyTree(t, "testdata/omp", data)
	blobs := NewBlobStore(BlobsDir(data))
	orphan, _ := blobs.Put([]byte("nobody uses me"))
	// A reference split across the scanner's read boundary still counts.
	far, _ := blobs.Put([]byte("referenced far into a file"))
	pad := strings.Repeat("x", 1<<20-20)
	writeFile(t, filepath.Join(SessionsDir(data), "-proj"), "notes.txt", pad+far+"\n")
	// A subagent transcript's reference counts too.
	sub, _ := blobs.Put([]byte("a subagent's image"))
	os.MkdirAll(filepath.Join(SessionsDir(data), "-proj", "x"), 0o700)
	writeFile(t, filepath.Join(SessionsDir(data), "-proj", "x"), "Scout.jsonl", `{"data":"`+sub+`"}`+"\n")
	// A missing one.
	writeFile(t, filepath.Join(SessionsDir(data), "-proj"), "gone.jsonl", `"blob:sha256:`+strings.Repeat("0", 64)+`"`+"\n")
	os.WriteFile(filepath.Join(BlobsDir(data), ".tmp-123"), nil, 0o600) // not a blob

	var calls int
	u, err := ScanBlobs(data, func(done, total int) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	var unref []string
	for _, b := range u.Unreferenced {
		unref = append(unref, b.Ref)
	}
	if !slices.Equal(unref, []string{orphan}) || u.Referenced != u.Blobs-1 || calls != u.Files {
		t.Errorf("usage %+v", u)
	}
	if !slices.Equal(u.Missing, []string{BlobRefPrefix + strings.Repeat("0", 64)}) {
		t.Errorf("missing %v", u.Missing)
	}
	freed, err := RemoveBlobs(data, u.Unreferenced)
	if err != nil || freed != int64(len("nobody uses me")) {
		t.Errorf("freed %d, %v", freed, err)
	}
	if _, err := blobs.Get(orphan); !os.IsNotExist(err) {
		t.Errorf("orphan still there: %v", err)
	}
	for _, ref := range []string{far, sub} {
		if _, err := blobs.Get(ref); err != nil {
			t.Errorf("%s removed: %v", ref, err)
		}
	}
	if _, err := RemoveBlobs(data, []BlobInfo{{Path: "/etc/passwd"}}); err == nil {
		t.Error("removed a file outside the blob store")
	}
}

// TestScanBlobsCostsWhatTheFilesHold: ScanBlobs reads each file in a
// buffer of its own size (pooled), so that 10,000 small sessions do not
// cost a MiB each (a data dir of 10,500 took 21 s; now 0.4 s).
func TestScanBlobsCostsWhatTheFilesHold(t *testing.T) {
	if raceEnabled {
		t.Skip("counts allocations; under the race detector sync.Pool drops what is put in it")
	}
	data := t.TempDir()
	dir := filepath.Join(SessionsDir(data), "--w--")
	os.MkdirAll(dir, 0o700)
	var size int64
	for i := range 400 {
		b := bytes.Repeat([]byte(`{"type":"message","message":{"role":"user","content":"x"}}`+"\n"), 20+i*10)
		size += int64(len(b))
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%04d.jsonl", i)), b, 0o600)
	}
	ScanBlobs(data, nil) // warm the pool
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := ScanBlobs(data, nil); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(size)/4+4<<20 {
		t.Errorf("scanning %d files (%d KB) allocated %d KB", 400, size>>10, alloc>>10)
	}
}
