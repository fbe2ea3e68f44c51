package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// BlobInfo describes one file of a blob store.
type BlobInfo struct {
	Ref  string `json:"ref"` // blob:sha256:<hex>
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// BlobUsage is what ScanBlobs found.
type BlobUsage struct {
	Files        int        // files scanned for references
	Blobs        int        // blob files in the store
	Referenced   int        // of those, how many some file names
	Unreferenced []BlobInfo // blob files no file names
	Missing      []string   // refs some file names that the store lacks
}

// ScanBlobs finds the blobs of dataDir that nothing references. It reads
// every file under the sessions directory, whatever its name or depth
// (sessions, subagent transcripts, backups, files of another program that
// shares the dir: omp may), and counts as a reference any
// "blob:sha256:<hex>" in its bytes. A file it cannot read makes it fail:
// a blob that file might name could otherwise be called unreferenced.
// progress, when not nil, is called after each file.
func ScanBlobs(dataDir string, progress func(done, total int)) (BlobUsage, error) {
	var u BlobUsage
	var files []string
	root := SessionsDir(dataDir)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				return filepath.SkipDir
			}
			return err
		}
		switch {
		case d.Type().IsRegular():
			files = append(files, p)
		case d.Type()&fs.ModeSymlink != 0:
			// Read through a link to a regular file: a blob it names must
			// not be called unreferenced. Reading cannot harm the target.
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				files = append(files, p)
			}
		}
		return nil
	})
	if err != nil {
		return u, fmt.Errorf("scanning %s: %w", root, err)
	}
	refs := map[string]bool{}
	for i, p := range files {
		if err := CollectBlobRefs(p, refs); err != nil {
			return u, fmt.Errorf("cannot rule out references in %s: %w", p, err)
		}
		u.Files++
		if progress != nil {
			progress(i+1, len(files))
		}
	}
	ents, err := os.ReadDir(BlobsDir(dataDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return u, err
	}
	have := map[string]bool{}
	for _, e := range ents {
		digest, _, _ := strings.Cut(e.Name(), ".") // omp may add an extension
		if !e.Type().IsRegular() || !isDigest(digest) {
			continue // temp files and anything else are not ours to judge
		}
		u.Blobs++
		have[digest] = true
		if refs[digest] {
			u.Referenced++
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		u.Unreferenced = append(u.Unreferenced, BlobInfo{Ref: BlobRefPrefix + digest, Path: filepath.Join(BlobsDir(dataDir), e.Name()), Size: fi.Size()})
	}
	for d := range refs {
		if !have[d] {
			u.Missing = append(u.Missing, BlobRefPrefix+d)
		}
	}
	return u, nil
}

// RemoveBlobs deletes the given unreferenced blobs and returns how many
// bytes it freed. Each path must be a blob file of dataDir's store.
func RemoveBlobs(dataDir string, blobs []BlobInfo) (int64, error) {
	var freed int64
	dir := BlobsDir(dataDir)
	for _, b := range blobs {
		if filepath.Dir(b.Path) != dir {
			return freed, fmt.Errorf("%s is not in the blob store %s", b.Path, dir)
		}
		if err := os.Remove(b.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return freed, err
		}
		freed += b.Size
	}
	return freed, nil
}

func isDigest(s string) bool {
	_, err := parseBlobRef(BlobRefPrefix + s)
	return err == nil
}

// blobScanBuffers are CollectBlobRefs's read buffers.
var blobScanBuffers = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

// CollectBlobRefs adds to refs the digest of every blob reference
// (BlobRefPrefix and 64 hex digits) in the file at p, read in blocks that
// overlap by a reference's length, whatever its lines hold: the one walk for a garbage collection
// and a pull of the blobs a session names. An error reading the file is
// returned, not taken for "no references".
func CollectBlobRefs(p string, refs map[string]bool) error {
	f, fi, err := openRegular(p, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	const refLen = len(BlobRefPrefix) + 64
	prefix := []byte(BlobRefPrefix)
	// The file's size, up to 1 MiB, from a pool: a walk of 10,000 small
	// sessions must not allocate and clear a MiB for each.
	bp := blobScanBuffers.Get().(*[]byte)
	defer blobScanBuffers.Put(bp)
	buf := (*bp)[:max(min(fi.Size()+1, 1<<20), int64(2*refLen))]
	keep := 0
	for {
		n, err := f.Read(buf[keep:])
		data := buf[:keep+n]
		for i := 0; ; {
			j := bytes.Index(data[i:], prefix)
			if j < 0 {
				break
			}
			start := i + j
			if start+refLen > len(data) {
				break
			}
			if d := string(data[start+len(prefix) : start+refLen]); isDigest(d) {
				refs[d] = true
			}
			i = start + len(prefix)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		// Carry the tail that could start a reference into the next read.
		keep = min(len(data), refLen-1)
		copy(buf, data[len(data)-keep:])
	}
}
