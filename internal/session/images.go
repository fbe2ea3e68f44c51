package session

import (
	"os"
	"path/filepath"

	"github.com/go-json-experiment/json"

	"github.com/xdev/xdev/internal/ai"
)

// blobStore returns the blob store for this session: the one in the
// options, else <dataDir>/blobs for a file under <dataDir>/sessions/.
func (s *Store) blobStore() *BlobStore {
	if s.opts.Blobs != nil {
		return s.opts.Blobs
	}
	dir := filepath.Dir(s.path)
	for range 4 {
		if filepath.Base(dir) == "sessions" {
			return NewBlobStore(filepath.Join(filepath.Dir(dir), "blobs"))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return nil
}

// resolveImages replaces blob references in image blocks with the base64
// data they name, as omp does on load. A missing blob leaves the reference
// and is counted.
func (s *Store) resolveImages(msgs []ai.Message) ([]ai.Message, int) {
	var blobs *BlobStore
	missing := 0
	for i := range msgs {
		m := &msgs[i]
		changed := false
		blocks := m.Content.Blocks
		for j, b := range blocks {
			if b.Type != ai.BlockImage || !IsBlobRef(b.Data) {
				continue
			}
			if blobs == nil {
				if blobs = s.blobStore(); blobs == nil {
					blobs = NewBlobStore(os.DevNull)
				}
			}
			data, err := blobs.GetImage(b.Data)
			if err != nil {
				missing++
				continue
			}
			if !changed {
				blocks = append([]ai.Block(nil), blocks...)
				changed = true
			}
			nb, err := withImageData(b, data)
			if err != nil {
				missing++
				continue
			}
			blocks[j] = nb
		}
		if changed {
			if nm, err := m.WithContent(ai.BlockContent(blocks...)); err == nil {
				msgs[i] = nm
			}
		}
	}
	return msgs, missing
}

// withImageData returns the image block with its data replaced, keeping
// every other member's bytes.
func withImageData(b ai.Block, data string) (ai.Block, error) {
	enc, err := json.Marshal(data)
	if err != nil {
		return b, err
	}
	raw := b.Raw()
	if raw == nil {
		b.Data = data
		return b, nil
	}
	nraw, err := ai.ReplaceMember(raw, "data", enc)
	if err != nil {
		return b, err
	}
	var nb ai.Block
	err = nb.UnmarshalJSON(nraw)
	return nb, err
}

// externalizeImages moves image data of ImageBlobThreshold or more base64
// characters into the blob store, leaving its reference in the block, as
// omp does on every write. Only image blocks are touched: a reference in a
// text field would reach the model verbatim.
func (s *Store) externalizeImages(m ai.Message) (ai.Message, error) {
	blobs := s.blobStore()
	if blobs == nil || m.Content.IsString {
		return m, nil
	}
	var blocks []ai.Block
	for i, b := range m.Content.Blocks {
		if b.Type != ai.BlockImage || len(b.Data) < ImageBlobThreshold || IsBlobRef(b.Data) {
			continue
		}
		ref, err := blobs.PutImage(b.Data)
		if err != nil {
			return m, err
		}
		if blocks == nil {
			blocks = append([]ai.Block(nil), m.Content.Blocks...)
		}
		if blocks[i], err = withImageData(b, ref); err != nil {
			return m, err
		}
	}
	if blocks == nil {
		return m, nil
	}
	return m.WithContent(ai.BlockContent(blocks...))
}
