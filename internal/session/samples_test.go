package session

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSamplesLookReal: the omp-written samples the README runs on read
// like a real data dir (issue 11): pictures that are real PNGs (in the
// blob store and inline), a cwd that is not a temp path, and sessions
// created over days, not in one second. And the README installs the
// command before its usage calls it xdev.
func TestSamplesLookReal(t *testing.T) {
	blobs, _ := filepath.Glob("testdata/omp/blobs/*.png")
	if len(blobs) == 0 {
		t.Fatal("no picture in the blob store")
	}
	for _, b := range blobs {
		f, err := os.Open(b)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(f); err != nil {
			t.Errorf("%s is not a PNG: %v", b, err)
		}
		f.Close()
	}
	infos, err := List("testdata/omp", &ListOptions{Subagents: true})
	if err != nil {
		t.Fatal(err)
	}
	var first, last time.Time
	inline := 0
	for _, i := range infos {
		if i.Err != nil {
			t.Errorf("%s: %v", i.Path, i.Err)
			continue
		}
		if strings.HasPrefix(i.Cwd, os.TempDir()) || strings.HasPrefix(i.Cwd, "/tmp/") {
			t.Errorf("%s: cwd %s is a temp path", filepath.Base(i.Path), i.Cwd)
		}
		if i.Version >= CurrentVersion && i.ID != "legacy-1" {
			if first.IsZero() || i.Created.Before(first) {
				first = i.Created
			}
			if i.Created.After(last) {
				last = i.Created
			}
		}
		s, err := Open(i.Path, &OpenOptions{Full: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range s.Entries() {
			m := e.Message()
			if m == nil {
				continue
			}
			for _, b := range m.Content.Blocks {
				if b.MimeType != "image/png" || IsBlobRef(b.Data) {
					continue
				}
				inline++
				raw, err := base64.StdEncoding.DecodeString(b.Data)
				if err == nil {
					_, err = png.Decode(bytes.NewReader(raw))
				}
				if err != nil {
					t.Errorf("%s: an inline picture is not a PNG: %v", filepath.Base(i.Path), err)
				}
			}
		}
	}
	if inline == 0 {
		t.Error("no inline picture")
	}
	if last.Sub(first) < 48*time.Hour {
		t.Errorf("the sessions were created within %v", last.Sub(first))
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	install := bytes.Index(readme, []byte("go install ./cmd/xdev"))
	use := bytes.Index(readme, []byte("\n    xdev "))
	if install < 0 || use < 0 || install > use {
		t.Errorf("the README calls xdev (at %d) before it installs it (at %d)", use, install)
	}
}
