package session

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/ai"
)

// TestInteropLifecycle: sessions xdev forks, branches, creates lazily and
// runs as subagents, next to those omp wrote, in one agent dir. omp resumes
// every one xdev wrote with the same context, and omp's listing and xdev's
// List agree on what is a session, its id, cwd, parent and title.
func TestInteropLifecycle(t *testing.T) {
	requireOmp(t)
	agent := t.TempDir()
	copyTree(t, "testdata/omp", agent)
	proj := filepath.Join(SessionsDir(agent), "-proj")
	blobs := NewBlobStore(BlobsDir(agent))
	corpus := func(name string) string { return filepath.Join(proj, name+".jsonl") }

	var written []string
	add := func(s *Store, err error) *Store {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		written = append(written, s.Path())
		return s
	}
	// Forks of omp's files: a compaction, an image in the blob store, a
	// file omp itself forked, and one with a label as the new title.
	add(ForkSession(corpus("03-compaction"), "", ""))
	add(ForkSession(corpus("06-image-blob"), "", ""))
	add(ForkSession(corpus("08-fork"), "", ""))
	add(ForkSession(corpus("05-titles"), "", "forked with a label"))
	// A fork of a real pi v1 session becomes a v3 file omp resumes as is.
	if p := filepath.Join(realDir, "pi-v1-before-compaction.jsonl"); fileExists(p) {
		b, _ := os.ReadFile(p)
		v1 := writeFile(t, proj, "2025-12-01T10-00-00-000Z_pi-v1.jsonl", string(b))
		add(ForkSession(v1, "", ""))
	}
	// Branched sessions: from omp's labelled file at an entry before its
	// label, and from an xdev file with labels on and off the path.
	all, err := Open(corpus("01-all-entry-types"), &OpenOptions{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	path := all.pathTo(all.LeafID())
	add(ForkBranch(corpus("01-all-entry-types"), "", path[len(path)/2].ID))
	ls, lsrc, at, _ := labelled(t)
	ls.Close()
	lcopy := filepath.Join(proj, FileName(time.Now(), NewID()))
	b, _ := os.ReadFile(lsrc)
	os.WriteFile(lcopy, b, 0o600)
	written = append(written, lcopy)
	add(ForkBranch(lcopy, "", at))
	// Lazy persistence: a session appears on its first assistant message.
	lazy, err := New(filepath.Join(proj, FileName(time.Now(), NewID())), NewOptions{Cwd: "/proj", Blobs: blobs})
	if err != nil {
		t.Fatal(err)
	}
	lazy.EnableAutoPersist()
	mustE(t)(lazy.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("hello"), Timestamp: 1}))
	if lazy.OnDisk() {
		t.Fatal("session written before the assistant answered")
	}
	mustE(t)(lazy.AppendMessage(ai.Message{Role: ai.RoleAssistant, Content: ai.BlockContent(ai.Text("hi")), Provider: "p", Model: "m", StopReason: ai.StopEnd, Timestamp: 2}))
	add(lazy, nil)
	// A subagent of an xdev session, and one of omp's.
	parent := add(Create(filepath.Join(proj, FileName(time.Now(), NewID())), NewOptions{Cwd: "/proj", Title: "Parent", TitleSource: TitleManual}))
	sub := add(CreateSubagent(parent.Path(), "Scout", &SessionInit{SystemPrompt: "You are Scout.", Task: "look", Tools: []string{"read"}}, NewOptions{}))
	mustE(t)(sub.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("look"), Timestamp: 1}))
	add(CreateSubagent(corpus("01-all-entry-types"), "Helper-2", &SessionInit{SystemPrompt: "s", Task: "t", Tools: []string{}}, NewOptions{}))

	sums := sortedSums(t, written)
	views := ompContexts(t, agent, written...)
	for _, f := range written {
		t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
			compareWithOmp(t, f, blobs, views[f])
			unchanged(t, f, sums[f])
		})
	}

	// omp lists exactly what xdev lists (subagents excluded), with the
	// same ids, cwds, parents and titles.
	var listed []struct{ Path, ID, Title, Cwd, ParentSession string }
	if err := json.Unmarshal(runOmp(t, agent, "list.ts"), &listed); err != nil {
		t.Fatal(err)
	}
	infos, err := List(agent, nil)
	if err != nil {
		t.Fatal(err)
	}
	mine := map[string]SessionInfo{}
	for _, i := range infos {
		if i.Err == nil {
			mine[i.Path] = i
		}
	}
	var ompPaths, xdevPaths []string
	for _, l := range listed {
		ompPaths = append(ompPaths, l.Path)
		i, ok := mine[l.Path]
		if !ok {
			continue
		}
		// omp names an untitled session by a compaction's short summary.
		if i.ID != l.ID || i.Cwd != l.Cwd || i.ParentSession != l.ParentSession || (i.Title != l.Title && i.Title != "") {
			t.Errorf("%s: omp lists %+v; xdev %+v", l.Path, l, i)
		}
	}
	for p := range mine {
		xdevPaths = append(xdevPaths, p)
	}
	slices.Sort(ompPaths)
	slices.Sort(xdevPaths)
	if !slices.Equal(ompPaths, xdevPaths) {
		t.Errorf("listings differ:\nomp  %q\nxdev %q", ompPaths, xdevPaths)
	}
	t.Logf("omp resumed %d sessions xdev forked, branched or created; both list %d", len(written), len(ompPaths))
}

// TestInteropResolve: for one project, xdev's mostRecent and Resolve pick
// what omp's --continue and --resume <arg> pick.
func TestInteropResolve(t *testing.T) {
	requireOmp(t)
	agent, cwd, paths := resumeFixture(t)
	args := []string{
		"01a0a0a0-0000-7000-8000-00000000aaaa", "01b", "01c",
		filepath.Base(paths[1]), "zzz",
	}
	var omp struct {
		Continue string             `json:"continue"`
		Resume   map[string]*string `json:"resume"`
	}
	if err := json.Unmarshal(runOmp(t, agent, "resolve.ts", append([]string{cwd}, args...)...), &omp); err != nil {
		t.Fatal(err)
	}
	if got, err := mostRecent(agent, cwd); err != nil || got.Path != omp.Continue {
		t.Errorf("continue: xdev %s (%v), omp %s", got.Path, err, omp.Continue)
	}
	for _, arg := range args {
		got, err := Resolve(agent, cwd, arg)
		want := omp.Resume[arg]
		if strings.HasSuffix(arg, ".jsonl") && want == nil {
			// omp matches a file name without its .jsonl only; xdev
			// takes the whole name too, as its help says a file name
			// works (issue 22).
			want = &paths[1]
		}
		switch {
		case want == nil && err == nil:
			t.Errorf("resume %q: xdev %s, omp nothing", arg, got.Path)
		case want != nil && got.Path != *want:
			t.Errorf("resume %q: xdev %s (%v), omp %s", arg, got.Path, err, *want)
		}
	}
	// Where omp takes the newest of several matches, xdev asks which.
	var amb *AmbiguousError
	if _, err := Resolve(agent, cwd, "01a0"); !errorsAs(err, &amb) {
		t.Errorf("ambiguous prefix: %v", err)
	}
}
