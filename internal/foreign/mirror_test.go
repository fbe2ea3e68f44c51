package foreign

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/session"
	"github.com/xdev/xdev/internal/testctx"
)

// TestMirror: a mirror converts each session once, again only when its
// source changes, drops the mirrors of sources gone, maps every mirror
// file back to its source, and never writes beside the sources.
func TestMirror(t *testing.T) {
	root := codexRoot(t)
	src := mirroredSource(t, HarnessCodex, root)
	m := &Mirror{Dir: filepath.Join(t.TempDir(), "mirror"), Source: src}
	ctx := context.Background()
	st, err := m.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Sessions == 0 || st.Converted != st.Sessions || len(st.Errors) != 0 {
		t.Fatalf("first refresh: %+v", st)
	}
	files, err := session.Files(m.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != st.Sessions {
		t.Fatalf("%d mirror files for %d sessions", len(files), st.Sessions)
	}
	for _, f := range files {
		src := m.SourcePath(f.Path)
		if src == "" {
			t.Fatalf("%s maps to no source", f.Path)
		}
		s, err := session.Open(f.Path, nil)
		if err != nil {
			t.Fatalf("mirror of %s: %v", src, err)
		}
		if c, err := CodexSessionAt(root, src); err != nil || s.ID() != c.ID {
			t.Errorf("mirror of %s has id %s, want %s (%v)", src, s.ID(), c.ID, err)
		}
		s.Close()
	}
	// A refresh with nothing changed (every search's freshness check)
	// writes nothing: the manifest is the same file, not rewritten.
	manifest, err := os.Stat(m.manifestPath())
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := m.Refresh(ctx); st.Converted != 0 || st.Removed != 0 {
		t.Errorf("refresh with nothing changed: %+v", st)
	}
	if again, err := os.Stat(m.manifestPath()); err != nil || !os.SameFile(manifest, again) || !again.ModTime().Equal(manifest.ModTime()) {
		t.Errorf("a refresh with nothing changed rewrote the manifest (%v)", err)
	}
	// A source that grows is converted again; one deleted loses its mirror.
	list, _ := ListCodex(root)
	grown, gone := list[0].Path, list[1].Path
	fh, _ := os.OpenFile(grown, os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString(`{"timestamp":"2026-03-09T00:00:00Z","type":"event_msg","payload":{"type":"user_message","message":"appended later"}}` + "\n")
	fh.Close()
	os.Chtimes(grown, time.Now(), time.Now().Add(time.Minute))
	os.Remove(gone)
	before := snapshotTree(t, root)
	st, err = m.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Converted != 1 || st.Removed != 1 {
		t.Errorf("after one append and one deletion: %+v", st)
	}
	// A fresh handle (another process) maps paths from the manifest.
	again := &Mirror{Dir: m.Dir, Source: src}
	files, _ = session.Files(m.Dir)
	for _, f := range files {
		if again.SourcePath(f.Path) == "" {
			t.Errorf("%s: no source from the manifest", f.Path)
		}
	}
	if after := snapshotTree(t, root); after != before {
		t.Error("the Codex dir changed")
	}
}

// mirroredFiles is a Source searched through mirror files, as every
// harness's but Claude Code's and Codex's is (those are searched in
// place): the embedded interface hides its lineConverter.
type mirroredFiles struct{ Source }

// mirroredSource is the Source of harness at root, mirrored in files.
func mirroredSource(t *testing.T, harness, root string) Source {
	t.Helper()
	src, err := NewSource(harness, root)
	if err != nil {
		t.Fatal(err)
	}
	return mirroredFiles{src}
}

// snapshotTree is every file under dir with its size, mode and mtime.
func snapshotTree(t *testing.T, dir string) string {
	t.Helper()
	var out []byte
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			data, _ := os.ReadFile(p)
			if fi.IsDir() {
				data = nil
			}
			out = append(out, p+" "+fi.Mode().String()+" "+fi.ModTime().String()+" "+strconv.Itoa(len(data))+"\n"...)
			out = append(out, data...)
		}
		return nil
	})
	return string(out)
}

// TestMirrorStoppedGoesOn stops refreshes at every point between two
// conversions: each keeps what it converted, the next goes on from
// there, and once one finishes the mirror is what one refresh makes,
// every session converted once across the rounds.
func TestMirrorStoppedGoesOn(t *testing.T) {
	root := codexRoot(t)
	src := mirroredSource(t, HarnessCodex, root)
	whole := &Mirror{Dir: filepath.Join(t.TempDir(), "whole"), Source: src}
	want, err := whole.Refresh(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for after := 1; after <= want.Sessions; after++ {
		m := &Mirror{Dir: filepath.Join(t.TempDir(), "m"), Source: src}
		converted, rounds := 0, 0
		for ; ; rounds++ {
			st, err := m.Refresh(testctx.StopAfter(context.Background(), after))
			converted += st.Converted
			if err == nil {
				break
			}
			if !errors.Is(err, context.DeadlineExceeded) || rounds > want.Sessions {
				t.Fatalf("stopped after %d: round %d: %v", after, rounds, err)
			}
		}
		if converted != want.Converted {
			t.Errorf("stopped after %d: %d conversions in %d rounds, want %d", after, converted, rounds, want.Converted)
		}
		files, _ := session.Files(m.Dir)
		if len(files) != want.Sessions {
			t.Errorf("stopped after %d: %d mirror files, want %d", after, len(files), want.Sessions)
		}
		if st, err := m.Refresh(context.Background()); err != nil || st.Converted != 0 {
			t.Errorf("stopped after %d: a refresh after the finished one: %+v, %v", after, st, err)
		}
	}
}
