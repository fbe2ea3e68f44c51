package session

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/ai"
)

func TestSlugs(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	home = canonical(home)
	hashed := func(scope, path string) string {
		sum := sha256.Sum256([]byte(path))
		return scope + "-" + filepath.Base(path) + "-" + hex.EncodeToString(sum[:])
	}
	cases := []struct {
		cwd    string
		slug   string
		legacy []string
	}{
		{home, "-", []string{absSlug(home), hashed("home", home)}},
		{home + "/projects/demo", "-projects-demo", []string{absSlug(home + "/projects/demo"), hashed("home", home+"/projects/demo")}},
		{home + "/a b/c:d/e.f", "-a b-c-d-e.f", []string{absSlug(home + "/a b/c:d/e.f"), hashed("home", home+"/a b/c:d/e.f")}},
		{"/opt/build/app", "--opt-build-app--", []string{hashed("abs", "/opt/build/app")}},
		{"/", "----", []string{strings.Replace(hashed("abs", "/"), "abs-/-", "abs-project-", 1)}},
	}
	for _, c := range cases {
		if got := Slug(c.cwd); got != c.slug {
			t.Errorf("Slug(%q) = %q, want %q", c.cwd, got, c.slug)
		}
		if got := legacySlugs(c.cwd); !slices.Equal(got, c.legacy) {
			t.Errorf("legacySlugs(%q) = %q, want %q", c.cwd, got, c.legacy)
		}
	}
}

// listFixture is a data dir with sessions of every kind List meets.
type listFixture struct {
	dir   string
	names map[string]string // what → path
}

func newListFixture(t *testing.T) listFixture {
	t.Helper()
	agent := t.TempDir()
	copyTree(t, "testdata/omp/sessions", SessionsDir(agent))
	fx := listFixture{dir: agent, names: map[string]string{}}
	proj := filepath.Join(SessionsDir(agent), "-proj")
	other := filepath.Join(SessionsDir(agent), "--srv-other--")
	os.MkdirAll(other, 0o700)

	s, err := Create(filepath.Join(other, FileName(fixedTime, "0190aaaa-0000-7000-8000-000000000001")), NewOptions{Cwd: "/srv/other", Title: "Other project", TitleSource: TitleManual})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	fx.names["xdev"] = s.Path()

	fx.names["foreign"] = writeFile(t, proj, "notes.jsonl", `{"hello":"world"}`+"\n")
	fx.names["empty"] = writeFile(t, proj, "empty.jsonl", "")
	fx.names["legacy-subagent"] = writeFile(t, proj, "old-sub.jsonl",
		`{"type":"title","v":1,"title":"sub","source":"subagent","updatedAt":"2025-01-01T00:00:00.000Z","pad":""}`+"\n"+
			`{"type":"session","version":3,"id":"old-sub","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/proj"}`+"\n")
	// A header longer than HeadBytes: its id comes before the cut.
	fx.names["long-header"] = writeFile(t, proj, "long.jsonl",
		`{"type":"session","version":3,"id":"long-header","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/proj","title":"`+strings.Repeat("x", 2*HeadBytes)+`"}`+"\n")
	link := filepath.Join(proj, "link.jsonl")
	if err := os.Symlink("/etc/passwd", link); err != nil {
		t.Fatal(err)
	}
	fx.names["symlink"] = link
	fifo := filepath.Join(proj, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	fx.names["fifo"] = fifo
	if p := filepath.Join(realDir, "pi-v1-large-session.jsonl"); fileExists(p) {
		b, _ := os.ReadFile(p)
		fx.names["real-v1"] = writeFile(t, proj, "2025-12-01T10-00-00-000Z_pi-v1.jsonl", string(b))
	}
	return fx
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// treeSums returns the sha256 of every regular file under dir.
func treeSums(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	sums := map[string][32]byte{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			sums[p] = fileSum(t, p)
		}
		return nil
	})
	return sums
}

func TestList(t *testing.T) {
	fx := newListFixture(t)
	before := treeSums(t, fx.dir)
	infos, err := List(fx.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]SessionInfo{}
	for _, i := range infos {
		byPath[i.Path] = i
		if i.Subagent {
			t.Errorf("subagent listed: %s", i.Path)
		}
	}
	proj := filepath.Join(SessionsDir(fx.dir), "-proj")
	for _, name := range []string{"01-all-entry-types", "02-branch-summary", "03-compaction", "08-fork", "09-branched", "11-migrated-v1"} {
		if i, ok := byPath[filepath.Join(proj, name+".jsonl")]; !ok || i.Err != nil || i.ID == "" || i.Cwd == "" || i.Created.IsZero() || i.Size == 0 {
			t.Errorf("%s: %+v", name, i)
		}
	}
	titles := map[string]struct {
		title string
		src   TitleSource
	}{
		"05-titles":                      {"Renamed by user", TitleManual},
		"09-branched":                    {"", TitleNone},
		"long":                           {strings.Repeat("x", 0), TitleNone},
		"2025-12-01T10-00-00-000Z_pi-v1": {"", TitleNone},
	}
	for name, want := range titles {
		i, ok := byPath[filepath.Join(proj, name+".jsonl")]
		if !ok {
			if strings.Contains(name, "pi-v1") {
				continue
			}
			t.Errorf("%s not listed", name)
			continue
		}
		if name == "05-titles" {
			s, _ := Open(i.Path, nil)
			want.title, want.src = s.Title()
		}
		if i.Title != want.title || i.TitleSource != want.src {
			t.Errorf("%s: title %q/%v, want %q/%v", name, i.Title, i.TitleSource, want.title, want.src)
		}
	}
	if i := byPath[fx.names["xdev"]]; i.Title != "Other project" || i.TitleSource != TitleManual || i.Cwd != "/srv/other" {
		t.Errorf("xdev session: %+v", i)
	}
	if i := byPath[fx.names["long-header"]]; i.Err != nil || i.ID != "long-header" || i.Cwd != "/proj" {
		t.Errorf("long header: %+v", i)
	}
	if i, ok := byPath[fx.names["real-v1"]]; ok && (i.Err != nil || i.Version != 1 || i.Cwd == "") {
		t.Errorf("real v1: %+v", i)
	}
	// Reported, not fatal.
	for _, what := range []string{"foreign", "empty", "symlink", "fifo"} {
		if i := byPath[fx.names[what]]; i.Err == nil {
			t.Errorf("%s: no error reported: %+v", what, i)
		}
	}
	if i := byPath[fx.names["foreign"]]; !errors.Is(i.Err, ErrNoHeader) || !strings.Contains(i.Err.Error(), "notes.jsonl: line 1") {
		t.Errorf("foreign file error = %v", i.Err)
	}
	if _, ok := byPath[fx.names["legacy-subagent"]]; ok {
		t.Error("a file with a subagent slot is listed")
	}
	// Newest first.
	for k := 1; k < len(infos); k++ {
		if infos[k].Modified.After(infos[k-1].Modified) {
			t.Errorf("not sorted by mtime at %d", k)
		}
	}
	// With subagents: the nested transcript and the legacy one.
	all, _ := List(fx.dir, &ListOptions{Subagents: true})
	var subs []string
	for _, i := range all {
		if i.Subagent {
			subs = append(subs, filepath.Base(i.Path))
		}
	}
	slices.Sort(subs)
	if !slices.Equal(subs, []string{"Scout.jsonl", "old-sub.jsonl"}) {
		t.Errorf("subagents = %v", subs)
	}
	if after := treeSums(t, fx.dir); len(after) != len(before) {
		t.Errorf("List changed the tree: %d files, was %d", len(after), len(before))
	} else {
		for p, sum := range before {
			unchanged(t, p, sum)
		}
	}
}

func TestListMissingDir(t *testing.T) {
	infos, err := List(filepath.Join(t.TempDir(), "nope"), nil)
	if err != nil || len(infos) != 0 {
		t.Errorf("List(missing) = %v, %v", infos, err)
	}
}

// TestListCwdLegacyDirs: a project's listing includes omp's older names for
// its directory, which omp would migrate and List leaves in place.
func TestListCwdLegacyDirs(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	agent := t.TempDir()
	cwd := filepath.Join(home, "code", "app")
	var want []string
	for i, name := range append([]string{Slug(cwd)}, legacySlugs(cwd)...) {
		p := filepath.Join(SessionsDir(agent), name, FileName(fixedTime.Add(time.Duration(i)*time.Second), NewID()))
		s, err := Create(p, NewOptions{Cwd: cwd})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		want = append(want, p)
	}
	s, _ := Create(filepath.Join(SessionsDir(agent), "-code-other", FileName(fixedTime, NewID())), NewOptions{Cwd: home + "/code/other"})
	s.Close()
	infos, err := List(agent, &ListOptions{Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range infos {
		got = append(got, i.Path)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("List(cwd) =\n%q\nwant\n%q", got, want)
	}
	if all, _ := List(agent, nil); len(all) != len(want)+1 {
		t.Errorf("List(all) = %d sessions, want %d", len(all), len(want)+1)
	}
}

// resumeFixture writes sessions for one cwd with known ids and mtimes.
func resumeFixture(t *testing.T) (agent, cwd string, paths []string) {
	t.Helper()
	agent = t.TempDir()
	cwd = "/srv/app"
	ids := []string{
		"01a0a0a0-0000-7000-8000-00000000aaaa",
		"01a0a0a0-0000-7000-8000-00000000aaab",
		"01b0b0b0-0000-7000-8000-00000000bbbb",
	}
	for i, id := range ids {
		p := filepath.Join(SessionsDir(agent), Slug(cwd), FileName(fixedTime.Add(time.Duration(i)*time.Minute), id))
		s, err := Create(p, NewOptions{Cwd: cwd, ID: id})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		mt := fixedTime.Add(time.Duration(i) * time.Hour)
		os.Chtimes(p, mt, mt)
		paths = append(paths, p)
	}
	// Another project holds a session only reachable globally.
	p := filepath.Join(SessionsDir(agent), Slug("/srv/elsewhere"), FileName(fixedTime, "01c0c0c0-0000-7000-8000-00000000cccc"))
	s, err := Create(p, NewOptions{Cwd: "/srv/elsewhere", ID: "01c0c0c0-0000-7000-8000-00000000cccc"})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	paths = append(paths, p)
	return agent, cwd, paths
}

func TestResolve(t *testing.T) {
	agent, cwd, paths := resumeFixture(t)
	cases := []struct {
		arg     string
		want    int // index into paths; -1: not found; -2: ambiguous
		wantErr error
	}{
		{"01a0a0a0-0000-7000-8000-00000000aaaa", 0, nil},
		{"01A0A0A0-0000-7000-8000-00000000AAAB", 1, nil}, // case-insensitive
		{"01b", 2, nil},
		{"01a0", -2, nil},
		{"01c", 3, nil}, // found in another project
		{strings.TrimSuffix(filepath.Base(paths[2]), ".jsonl")[:10], -2, nil},
		{paths[1], 1, nil},
		{"zzz", -1, ErrNotFound},
	}
	cache, none := t.TempDir(), t.TempDir()
	for _, c := range cases {
		// No cache, a cache written, read, read only; a cache read only
		// where there is none, never written.
		for _, o := range []ResolveOptions{{}, {Cache: cache}, {Cache: cache}, {Cache: cache, CacheReadOnly: true}, {Cache: none, CacheReadOnly: true}} {
			o.Cwd = cwd
			got, err := ResolveIn(agent, c.arg, &o)
			switch c.want {
			case -1:
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("Resolve(%q) = %v, %v; want ErrNotFound", c.arg, got.Path, err)
				}
			case -2:
				var amb *AmbiguousError
				if !errors.As(err, &amb) || len(amb.Matches) < 2 || !strings.Contains(err.Error(), "matches") {
					t.Errorf("Resolve(%q) = %v, %v; want ambiguous", c.arg, got.Path, err)
				}
			default:
				if err != nil || got.Path != paths[c.want] {
					t.Errorf("Resolve(%q) = %v, %v; want %s", c.arg, got.Path, err, paths[c.want])
				}
			}
		}
	}
	if _, err := Resolve(agent, cwd, ""); err == nil {
		t.Error("Resolve(\"\") succeeded")
	}
	if left, _ := os.ReadDir(none); len(left) != 0 {
		t.Errorf("a read-only cache was written: %v", left)
	}
}

func TestMostRecent(t *testing.T) {
	agent, cwd, paths := resumeFixture(t)
	got, err := mostRecent(agent, cwd)
	if err != nil || got.Path != paths[2] {
		t.Fatalf("mostRecent = %v, %v; want %s", got.Path, err, paths[2])
	}
	// A newer file that does not open is passed over.
	dir := filepath.Dir(paths[0])
	bad := writeFile(t, dir, "broken.jsonl", "garbage\n")
	os.Chtimes(bad, time.Now(), time.Now())
	if got, _ := mostRecent(agent, cwd); got.Path != paths[2] {
		t.Errorf("mostRecent picked %s", got.Path)
	}
	// Appending makes a session the most recent.
	s, err := Open(paths[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("again"), Timestamp: 1}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	os.Chtimes(bad, fixedTime, fixedTime)
	if got, _ := mostRecent(agent, cwd); got.Path != paths[0] {
		t.Errorf("after an append mostRecent = %s, want %s", got.Path, paths[0])
	}
	if _, err := mostRecent(agent, "/nowhere"); !errors.Is(err, ErrNotFound) {
		t.Errorf("mostRecent(empty project) err = %v", err)
	}
}
