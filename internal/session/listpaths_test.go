package session

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestListPathsDescribesAsList holds ListPaths to List on a data dir of
// every kind of file List meets (newListFixture's, plus subagent
// transcripts nested two deep, a symlinked project and session directory,
// files List skips): every path of the tree, one at a time, is described
// exactly as List lists it, or not at all where List lists nothing, and
// every directory of the tree or above it asks for a whole listing.
func TestListPathsDescribesAsList(t *testing.T) {
	fx := newListFixture(t)
	root := SessionsDir(fx.dir)
	proj := filepath.Join(root, "-proj")
	parent := fx.names["xdev"]
	sessDir := parent[:len(parent)-len(".jsonl")]
	for _, sub := range []string{"Scout.jsonl", "deeper/Task.jsonl"} {
		p := filepath.Join(sessDir, sub)
		os.MkdirAll(filepath.Dir(p), 0o700)
		c, err := Create(p, NewOptions{Cwd: "/srv/other", ParentSession: parent})
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	writeFile(t, sessDir, "notes.txt", "not a session\n")
	writeFile(t, proj, "README.md", "not a session\n")
	writeFile(t, root, "stray.jsonl", `{"type":"session"}`+"\n") // the sessions directory's own files are not listed
	for _, l := range [][2]string{
		{proj, filepath.Join(root, "--linked-project--")},
		{sessDir, filepath.Join(proj, "linked-session")},
		{parent, filepath.Join(sessDir, "linked.jsonl")}, // a walk under a session follows no symlink
	} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}

	var files, dirs []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		} else if err == nil {
			files = append(files, p)
		}
		return nil
	})
	dirs = append(dirs, fx.dir, filepath.Dir(fx.dir))
	// Paths through the symlinks, which no walk of List's takes.
	files = append(files, filepath.Join(proj, "linked-session", "Scout.jsonl"),
		filepath.Join(root, "--linked-project--", "empty.jsonl"), filepath.Join(proj, "linked-session", "deeper", "Task.jsonl"))
	os.MkdirAll(BlobsDir(fx.dir), 0o700)
	outside := writeFile(t, BlobsDir(fx.dir), "0123.bin", "a blob")

	for _, opts := range []ListOptions{{}, {Subagents: true}, {Status: true}, {Subagents: true, Status: true}} {
		want, err := List(fx.dir, &opts)
		if err != nil {
			t.Fatal(err)
		}
		listed := map[string]SessionInfo{}
		for _, i := range want {
			listed[i.Path] = i
		}
		for _, p := range append(files, outside) {
			got, ok := ListPaths(fx.dir, []string{p}, &opts)
			if !ok {
				t.Errorf("%+v: ListPaths(%s) asks for a whole listing of a file", opts, p)
				continue
			}
			var wantOne []SessionInfo
			if i, ok := listed[p]; ok {
				wantOne = []SessionInfo{i}
			}
			if d := listsDiffer(got, wantOne); d != "" {
				t.Errorf("%+v: ListPaths(%s): %s", opts, p, d)
			}
		}
		for _, d := range dirs {
			if _, ok := ListPaths(fx.dir, []string{files[0], d}, &opts); ok {
				t.Errorf("%+v: ListPaths(%s), a directory, did not ask for a whole listing", opts, d)
			}
		}
	}
	if len(files) < 12 {
		t.Fatalf("the tree has %d files: the fixture lost some", len(files))
	}
	gone := filepath.Join(proj, "gone.jsonl")
	if got, ok := ListPaths(fx.dir, []string{gone}, nil); !ok || len(got) != 0 {
		t.Errorf("a file gone: %v, %v; want nothing, ok", got, ok)
	}
	if _, ok := ListPaths(fx.dir, []string{parent}, &ListOptions{Cwd: "/srv/other"}); ok {
		t.Error("ListPaths with a Cwd did not ask for a whole listing")
	}
}
