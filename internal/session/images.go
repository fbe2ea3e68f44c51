package session

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/jsonx"
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
			// Unchecked, as omp reads it: a damaged blob shows what the
			// model is sent (verify reports the damage).
			raw, err := blobs.getUnchecked(b.Data)
			if err != nil {
				missing++
				continue
			}
			data := encodeBase64(raw)
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

// withImageData returns the image block with its data replaced; every
// other member keeps its bytes (Block.MarshalJSON writes changed fields in
// place).
func withImageData(b ai.Block, data string) (ai.Block, error) {
	b.Data = data
	return b, nil
}

// externalizeImages moves the large images of a message into the blob
// store, as omp does on every write; see externalizeValue.
func (s *Store) externalizeImages(m ai.Message) (ai.Message, error) {
	blobs := s.blobStore()
	raw, err := m.MarshalJSON()
	if blobs == nil || err != nil {
		return m, err
	}
	v, err := jsonx.Parse(raw)
	if err != nil {
		return m, err
	}
	nv, changed, err := externalizeValue(v, "", blobs)
	if err != nil || !changed {
		return m, err
	}
	var out ai.Message
	out.DecodeJS(nv)
	return out, nil
}

// ExternalizeImages moves the large images of one entry, given as its
// JSON line, into blobs, as Append and AppendJSONLines do before writing:
// for a writer that streams entries into a new file itself. It returns
// the line unchanged when nothing moved.
func ExternalizeImages(entry []byte, blobs *BlobStore) ([]byte, error) {
	v, err := jsonx.Parse(entry)
	if err != nil {
		return nil, err
	}
	nv, changed, err := externalizeValue(v, "", blobs)
	if err != nil || !changed {
		return entry, err
	}
	return nv.JSON(), nil
}

// externalizeValue is the image part of omp's truncateForPersistence
// (session-persistence.ts): image data of imageBlobThreshold base64
// characters or more, where omp resolves images on load (see
// isExternalizableImage), moves to the blob store and leaves its
// reference; so does the result of an image_generation_call, and an
// "image_url" data URL of an image (stored as its text). Signed and
// encrypted blocks are left whole, as omp leaves them.
func externalizeValue(v jsonx.Value, key string, blobs *BlobStore) (jsonx.Value, bool, error) {
	if v.Kind() == jsonx.Object {
		if res, ok := v.Get("result").Text(); ok && v.Get("type").Is("image_generation_call") && !IsBlobRef(res) && utf16Len(res) >= imageBlobThreshold {
			ref, err := blobs.Put(decodeBase64Lenient(res))
			return v.With("result", jsonx.Str(ref)), err == nil, err
		}
		if data, ok := v.Get("data").Text(); ok && isExternalizableImage(v, key) && !IsBlobRef(data) && utf16Len(data) >= imageBlobThreshold {
			ref, err := blobs.Put(decodeBase64Lenient(data))
			return v.With("data", jsonx.Str(ref)), err == nil, err
		}
		if isAtomicBlock(v, key) {
			return v, false, nil
		}
	}
	switch v.Kind() {
	case jsonx.String:
		if s := v.String(); key == "image_url" && strings.HasPrefix(s, "data:image/") && strings.Contains(s, ";base64,") {
			ref, err := blobs.Put([]byte(s))
			return jsonx.Str(ref), err == nil, err
		}
	case jsonx.Array:
		items := make([]jsonx.Value, len(v.Items()))
		changed := false
		for i, x := range v.Items() {
			nx, c, err := externalizeValue(x, key, blobs)
			if err != nil {
				return v, false, err
			}
			items[i], changed = nx, changed || c
		}
		if changed {
			return jsonx.ArrayOf(items...), true, nil
		}
	case jsonx.Object:
		members := make([]jsonx.Member, len(v.Members()))
		changed := false
		for i, m := range v.Members() {
			nx, c, err := externalizeValue(m.Value, m.Name, blobs)
			if err != nil {
				return v, false, err
			}
			members[i], changed = jsonx.Member{Name: m.Name, Value: nx}, changed || c
		}
		if changed {
			return jsonx.ObjectOf(members...), true, nil
		}
	}
	return v, false, nil
}

// isAtomicBlock reports the blocks omp persists byte for byte: signed
// thinking, text and tool calls, redacted thinking, encrypted reasoning,
// Anthropic server compaction state and server tool history.
func isAtomicBlock(v jsonx.Value, key string) bool {
	nonEmpty := func(name string) bool { s, ok := v.Get(name).Text(); return ok && s != "" }
	t := v.Get("type")
	switch {
	case t.Is("thinking") && nonEmpty("thinkingSignature"),
		t.Is("text") && nonEmpty("textSignature"),
		t.Is("toolCall") && nonEmpty("thoughtSignature"),
		t.Is("redactedThinking") && nonEmpty("data"),
		t.Is("reasoning") && nonEmpty("encrypted_content"),
		t.Is("anthropicCompaction"),
		t.Is("anthropicServerTool") && v.Get("block").Get("type").Kind() == jsonx.String:
		return true
	}
	_, content := v.Get("content").Text()
	return key == "anthropicCompaction" && content
}

// utf16Len is JavaScript's string length.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// decodeBase64Lenient decodes base64 as Node's Buffer.from(s, "base64")
// does: characters outside the alphabet are skipped, padding is optional,
// and the URL-safe alphabet is accepted too.
func decodeBase64Lenient(s string) []byte {
	var clean []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/':
			clean = append(clean, c)
		case c == '-':
			clean = append(clean, '+')
		case c == '_':
			clean = append(clean, '/')
		case c == '=':
			i = len(s) // padding ends the data
		}
	}
	if len(clean)%4 == 1 {
		clean = clean[:len(clean)-1]
	}
	out, _ := base64.RawStdEncoding.DecodeString(string(clean))
	return out
}

// InlineImages returns entry (one JSON line) with every blob reference in
// an image position, where omp resolves them on load, replaced by the
// data it names from blobs: the line as omp holds it once loaded, for a
// store that keeps no blobs (omp's SQL table). A line without a reference
// comes back as it is, byte for byte. A reference whose blob is missing
// stays, and is counted.
func InlineImages(entry []byte, blobs *BlobStore) (line []byte, missing int, err error) {
	if !bytes.Contains(entry, []byte(BlobRefPrefix)) {
		return entry, 0, nil
	}
	v, err := jsonx.Parse(entry)
	if err != nil {
		return entry, 0, nil // not JSON: omp skips it; carried as it is
	}
	r := &blobResolver{store: blobs}
	out := r.resolve(v, "").JSON()
	if bytes.Equal(out, v.JSON()) {
		return entry, r.missing, nil
	}
	return out, r.missing, nil
}
