package session

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/ai"
)

func TestBlobStorePutGet(t *testing.T) {
	old := syscallUmask(0)
	defer syscallUmask(old)
	b := NewBlobStore(filepath.Join(t.TempDir(), "blobs"))
	ref, err := b.Put([]byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	const want = "blob:sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
	if ref != want {
		t.Errorf("ref = %s, want %s", ref, want)
	}
	again, err := b.Put([]byte("hello"))
	if err != nil || again != ref {
		t.Errorf("second Put = %s, %v", again, err)
	}
	ents, _ := os.ReadDir(b.Dir())
	if len(ents) != 1 {
		t.Errorf("blob dir holds %d files, want 1", len(ents))
	}
	for p, mode := range map[string]os.FileMode{b.Dir(): 0o700, filepath.Join(b.Dir(), ref[len(BlobRefPrefix):]): 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v (%v)", p, fi.Mode().Perm(), mode, err)
		}
	}
	if got, err := b.Get(ref); err != nil || string(got) != "hello" {
		t.Errorf("Get = %q, %v", got, err)
	}
	// A damaged blob is detected, and a Put of the same content repairs it.
	path := filepath.Join(b.Dir(), ref[len(BlobRefPrefix):])
	os.WriteFile(path, []byte("hellx"), 0o600)
	if _, err := b.Get(ref); !errors.Is(err, ErrBlobCorrupt) {
		t.Errorf("Get of a damaged blob: %v", err)
	}
	os.WriteFile(path, []byte("hel"), 0o600)
	b.Put([]byte("hello"))
	if got, err := b.Get(ref); err != nil || string(got) != "hello" {
		t.Errorf("after repair Get = %q, %v", got, err)
	}
	if _, err := b.Get(BlobRefPrefix + strings.Repeat("0", 64)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Get of a missing blob: %v", err)
	}
}

func TestParseBlobRef(t *testing.T) {
	hex64 := strings.Repeat("ab", 32)
	cases := []struct {
		ref string
		ok  bool
	}{
		{BlobRefPrefix + hex64, true},
		{BlobRefPrefix + strings.ToUpper(hex64), false},
		{BlobRefPrefix + hex64[:63], false},
		{BlobRefPrefix + hex64 + "0", false},
		{BlobRefPrefix + "../../../../etc/passwd" + hex64[:42], false},
		{BlobRefPrefix + hex64[:62] + "/x", false},
		{BlobRefPrefix + hex64[:63] + "\x00", false},
		{"blob:sha1:" + hex64, false},
		{hex64, false},
		{"", false},
	}
	for _, c := range cases {
		d, err := parseBlobRef(c.ref)
		if (err == nil) != c.ok || (!c.ok && !errors.Is(err, ErrBadBlobRef)) || (c.ok && d != hex64) {
			t.Errorf("parseBlobRef(%q) = %q, %v", c.ref, d, err)
		}
	}
}

// TestImageExternalization: images of 1024 base64 characters and more go
// to the blob store (as their decoded bytes), smaller ones stay inline,
// text is never touched, and a load resolves the refs back.
func TestImageExternalization(t *testing.T) {
	s, path := newSession(t)
	blobs := NewBlobStore(BlobsDir(filepath.Dir(filepath.Dir(filepath.Dir(path)))))
	small := base64.StdEncoding.EncodeToString(make([]byte, 765)) // 1020 chars
	big := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("px", 384)))
	if len(small) >= imageBlobThreshold || len(big) != imageBlobThreshold {
		t.Fatalf("sizes %d %d", len(small), len(big))
	}
	text := "blob:sha256:" + strings.Repeat("0", 64) + " is just text"
	mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.BlockContent(ai.Text(text), ai.Image(small, "image/png"), ai.Image(big, "image/png")), Timestamp: 1}))
	s.Close()
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), big) || !strings.Contains(string(raw), small) || !strings.Contains(string(raw), text) {
		t.Errorf("file = %s", raw)
	}
	ref, _ := blobs.Put([]byte(strings.Repeat("px", 384)))
	if !strings.Contains(string(raw), `"data":"`+ref+`"`) {
		t.Errorf("the big image is not %s", ref)
	}
	re, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := re.BuildContext()
	blocks := ctx.Messages[0].Content.Blocks
	if ctx.MissingBlobs != 0 || blocks[0].Text != text || blocks[1].Data != small || blocks[2].Data != big {
		t.Errorf("resolved: missing %d, %+v", ctx.MissingBlobs, blocks)
	}
}
