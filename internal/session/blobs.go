package session

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// BlobRefPrefix starts every blob reference.
const BlobRefPrefix = "blob:sha256:"

// imageBlobThreshold is the size of base64 image data, in characters, from
// which omp stores the image in the blob store instead of inline.
const imageBlobThreshold = 1024

// ErrBadBlobRef is returned for a reference that is not exactly
// "blob:sha256:" followed by 64 lowercase hex digits.
var ErrBadBlobRef = errors.New("malformed blob reference")

// BlobStore is a content-addressed store of binary payloads (decoded image
// bytes), shared by every session of a data dir: <dataDir>/blobs/<sha256>.
type BlobStore struct {
	dir   string
	fetch func(digest string) ([]byte, error) // NewBlobSource's; nil for a directory
}

// NewBlobStore returns the blob store in dir (usually <dataDir>/blobs).
func NewBlobStore(dir string) *BlobStore { return &BlobStore{dir: dir} }

// NewBlobSource returns a read-only blob store whose blobs fetch returns
// by their hex digest: the blobs of a session stored elsewhere than in a
// data dir (a database), for OpenOptions.Blobs. name stands for its
// directory in messages. Its Put fails.
func NewBlobSource(name string, fetch func(digest string) ([]byte, error)) *BlobStore {
	return &BlobStore{dir: name, fetch: fetch}
}

// read returns the bytes stored under digest, unchecked.
func (b *BlobStore) read(digest string) ([]byte, error) {
	if b.fetch != nil {
		return b.fetch(digest)
	}
	return readNoFollow(filepath.Join(b.dir, digest))
}

// Dir returns the directory holding the blobs.
func (b *BlobStore) Dir() string { return b.dir }

// IsBlobRef reports whether s looks like a blob reference (valid or not).
func IsBlobRef(s string) bool { return strings.HasPrefix(s, BlobRefPrefix) }

// parseBlobRef validates ref and returns its hex digest. Nothing else may
// become a path: the digest is checked before any file name is built.
func parseBlobRef(ref string) (string, error) {
	hexDigest, ok := strings.CutPrefix(ref, BlobRefPrefix)
	if !ok || len(hexDigest) != 64 {
		return "", fmt.Errorf("%w: %.80q", ErrBadBlobRef, ref)
	}
	for i := 0; i < len(hexDigest); i++ {
		c := hexDigest[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", fmt.Errorf("%w: %.80q", ErrBadBlobRef, ref)
		}
	}
	return hexDigest, nil
}

// Put stores data and returns its reference. It is idempotent: identical
// content is one file, written once through a temp file and a rename.
func (b *BlobStore) Put(data []byte) (string, error) {
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	ref := BlobRefPrefix + digest
	if b.fetch != nil {
		return "", fmt.Errorf("blob store %s: read-only", b.dir)
	}
	path := filepath.Join(b.dir, digest)
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(data)) {
		return ref, nil // already stored; a damaged copy is replaced below
	}
	if err := os.MkdirAll(b.dir, 0o700); err != nil {
		return "", fmt.Errorf("blob store: %w", err)
	}
	if err := replaceFile(path, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
		return "", fmt.Errorf("blob store: %w", err)
	}
	return ref, nil
}

// ErrBlobCorrupt is returned by Get when a blob's content no longer
// matches its name.
var ErrBlobCorrupt = errors.New("blob content does not match its sha256")

// Get returns the bytes a reference names, after checking they still hash
// to it.
func (b *BlobStore) Get(ref string) ([]byte, error) {
	digest, err := parseBlobRef(ref)
	if err != nil {
		return nil, err
	}
	data, err := b.read(digest)
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != digest {
		return nil, fmt.Errorf("%s: %w", filepath.Join(b.dir, digest), ErrBlobCorrupt)
	}
	return data, nil
}

// PutImage stores base64 image data as omp does: the blob holds the decoded
// bytes and is named by their sha256.
func (b *BlobStore) PutImage(base64Data string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(base64Data)
	if err != nil {
		return "", fmt.Errorf("image data is not base64: %w", err)
	}
	return b.Put(raw)
}

// GetImage returns the base64 form of an image blob, as omp resolves it.
func (b *BlobStore) GetImage(ref string) (string, error) {
	raw, err := b.Get(ref)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(raw), nil
}

// readNoFollow reads a regular file that is not a symlink: a blob that
// links elsewhere could put any file of the machine into a model's context.
func readNoFollow(path string) ([]byte, error) {
	f, _, err := openRegular(path, syscall.O_NOFOLLOW)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s: a symlink; blobs must be regular files", path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// getUnchecked returns the bytes a reference names without checking their
// hash, as omp reads a blob when it resolves a session: a damaged blob
// still reaches the model there, so a context built here must carry the
// same bytes. Verify reports the damage.
func (b *BlobStore) getUnchecked(ref string) ([]byte, error) {
	digest, err := parseBlobRef(ref)
	if err != nil {
		return nil, err
	}
	return b.read(digest)
}

// size returns the size of the blob a reference names, without reading it.
func (b *BlobStore) size(ref string) (int64, error) {
	digest, err := parseBlobRef(ref)
	if err != nil {
		return 0, err
	}
	if b.fetch != nil {
		data, err := b.fetch(digest)
		return int64(len(data)), err
	}
	fi, err := os.Lstat(filepath.Join(b.dir, digest))
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file", fi.Name())
	}
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func encodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
