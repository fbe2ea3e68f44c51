package foreign

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/session"
)

// mirrorHarnesses are the sources a mirror checks by their stats alone
// (transcriptWalker), each with a data dir of hand-made transcripts and
// the files a listing reads besides them.
type mirrorHarness struct {
	harness string
	// files are where the hand-made transcripts go, by testdata name.
	files map[string]string
	// index is the listing's own file and a line of it naming id.
	index string
	line  func(id string, at time.Time, text string) string
	// fresh is where a new transcript of id goes; junk is where a file
	// the listing looks at but cannot list goes.
	fresh, junk func(id string) string
}

var mirrorHarnesses = []mirrorHarness{
	{
		harness: HarnessClaude,
		files: map[string]string{
			"claude/handmade.jsonl":      "projects/-work-app/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
			"claude/v21-compacted.jsonl": "projects/-work-app/2bf7fc5e-8455-4414-9ccd-011d40f70b2b.jsonl",
			"claude/agent-v21sub.jsonl":  "projects/-work-app/agent-v21sub.jsonl",
		},
		index: "history.jsonl",
		line: func(id string, at time.Time, text string) string {
			return fmt.Sprintf(`{"display":%q,"timestamp":%d,"project":"/work/app","sessionId":%q}`, text, at.UnixMilli(), id)
		},
		fresh: func(id string) string { return "projects/-work-app/" + id + ".jsonl" },
		junk:  func(id string) string { return "projects/-work-app/" + id + ".jsonl" },
	},
	{
		harness: HarnessCodex,
		files: map[string]string{
			"codex/handmade.jsonl": "sessions/2026/03/01/rollout-2026-03-01T10-00-00-019d0000-aaaa-7bbb-8ccc-000000000001.jsonl",
			"codex/fork.jsonl":     "sessions/2026/03/02/rollout-2026-03-02T10-00-00-019d0000-aaaa-7bbb-8ccc-000000000003.jsonl",
			"codex/no-meta.jsonl":  "sessions/2026/03/03/rollout-2026-03-03T10-00-00-019d0000-aaaa-7bbb-8ccc-000000000004.jsonl",
			"codex/archived.jsonl": "archived_sessions/rollout-2026-01-05T08-00-00-019d0000-aaaa-7bbb-8ccc-000000000002.jsonl",
		},
		index: "session_index.jsonl",
		line: func(id string, at time.Time, text string) string {
			return fmt.Sprintf(`{"id":%q,"thread_name":%q,"updated_at":%q}`, id, text, at.UTC().Format(time.RFC3339))
		},
		fresh: func(id string) string { return "sessions/2026/03/05/rollout-2026-03-05T10-00-00-" + id + ".jsonl" },
		junk:  func(id string) string { return "sessions/2026/03/04/rollout-2026-03-04T10-00-00-" + id + ".jsonl" },
	},
}

// TestMirrorUnchangedAgreesWithListing: a refresh that ends on the
// sources' stats alone (Mirror.unchanged) leaves exactly the mirror a
// refresh that lists the harness leaves, whatever changed between two
// refreshes. Seeded rounds of random changes (a transcript appended to,
// touched, added, removed; a file that is no transcript, added and
// removed; the listing's own file appended to; a mirror file edited; a
// transcript grown and read through Ensure; nothing at all) are each
// followed by a refresh of a mirror
// that keeps its stamp and of one that never has a stamp: the manifests'
// rows (but for the mirror files' own stats), the sessions counted and
// the errors reported are the same. A round that changed nothing never
// lists.
func TestMirrorUnchangedAgreesWithListing(t *testing.T) {
	for _, h := range mirrorHarnesses {
		t.Run(h.harness, func(t *testing.T) {
			for seed := range uint64(6) {
				t.Run(fmt.Sprint(seed), func(t *testing.T) { mirrorUnchangedRounds(t, h, seed) })
			}
		})
	}
}

func mirrorUnchangedRounds(t *testing.T, h mirrorHarness, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 42))
	root := t.TempDir()
	clock := time.Now().Add(-10 * time.Hour) // every change older than racyWindow
	tick := func(path string) {
		clock = clock.Add(time.Minute)
		if err := os.Chtimes(path, clock, clock); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path string, data []byte, flag int) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(path, flag|os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(data)
		f.Close()
		tick(path)
	}
	// grow appends a copy of the transcript's first line to it.
	grow := func(path string) {
		data, _ := os.ReadFile(path)
		first, _, _ := strings.Cut(string(data), "\n")
		write(path, []byte(first+"\n"), os.O_APPEND)
	}
	var templates [][]byte
	for td, rel := range h.files {
		data, err := os.ReadFile(filepath.Join("testdata", td))
		if err != nil {
			t.Fatal(err)
		}
		templates = append(templates, data)
		write(filepath.Join(root, rel), data, os.O_TRUNC)
	}
	write(filepath.Join(root, h.index), []byte(h.line("1af7fc5e-8455-4414-9ccd-011d40f70b2a", clock, "first typed")+"\n"), os.O_TRUNC)
	src, err := NewSource(h.harness, root)
	if err != nil {
		t.Fatal(err)
	}
	listings := 0
	stamped := &Mirror{Dir: filepath.Join(t.TempDir(), "stamped"), Source: src,
		Listing: func() ([]Session, error) { listings++; return src.List(true) }}
	listed := &Mirror{Dir: filepath.Join(t.TempDir(), "listed"), Source: src}
	transcripts := func() []string {
		var out []string
		src.(transcriptWalker).walkTranscripts(func(p string) { out = append(out, p) })
		slices.Sort(out)
		return out
	}
	ctx := context.Background()
	for round := range 30 {
		var did []string
		changed := false
		for range 1 + rng.IntN(2) {
			all := transcripts()
			pick := func() string { return all[rng.IntN(len(all))] }
			switch k := rng.IntN(10); {
			case k == 0 && len(all) > 0:
				p := pick()
				grow(p)
				did, changed = append(did, "append "+filepath.Base(p)), true
			case k == 1 && len(all) > 0:
				p := pick()
				tick(p)
				did, changed = append(did, "touch "+filepath.Base(p)), true
			case k == 2:
				name := h.fresh(fmt.Sprintf("019d0000-aaaa-7bbb-8ccc-%012d", 100+rng.IntN(1000)))
				write(filepath.Join(root, name), templates[rng.IntN(len(templates))], os.O_TRUNC)
				did, changed = append(did, "add "+filepath.Base(name)), true
			case k == 3 && len(all) > 1:
				p := pick()
				os.Remove(p)
				did, changed = append(did, "remove "+filepath.Base(p)), true
			case k == 4:
				name := h.junk(fmt.Sprintf("0000000%d-0000-4000-8000-00000000junk", rng.IntN(3)))
				write(filepath.Join(root, name), []byte("not a transcript\n"), os.O_TRUNC)
				did, changed = append(did, "junk "+filepath.Base(name)), true
			case k == 5:
				ids := []string{"1af7fc5e-8455-4414-9ccd-011d40f70b2a", "019d0000-aaaa-7bbb-8ccc-000000000001"}
				write(filepath.Join(root, h.index), []byte(h.line(ids[rng.IntN(2)], clock, fmt.Sprint("typed ", round))+"\n"), os.O_APPEND)
				did, changed = append(did, "index"), true
			case k == 6:
				mirrors, _ := filepath.Glob(filepath.Join(session.SessionsDir(stamped.Dir), mirrorSub, "*.jsonl"))
				if len(mirrors) > 0 {
					write(mirrors[rng.IntN(len(mirrors))], []byte("edited\n"), os.O_APPEND)
					did, changed = append(did, "edit a mirror"), true
				}
			case k == 7 && len(all) > 0:
				// A reader's Ensure of a transcript that grew converts it
				// ahead of the refresh.
				p := pick()
				grow(p)
				if s, err := src.At(p); err == nil {
					stamped.Ensure(ctx, s)
					did, changed = append(did, "ensure "+filepath.Base(p)), true
				}
			case k == 8:
				// A file the listing could not list, gone.
				for _, p := range all {
					if strings.Contains(p, "junk") {
						os.Remove(p)
						did, changed = append(did, "remove junk "+filepath.Base(p)), true
						break
					}
				}
			default:
				did = append(did, "nothing")
			}
		}
		before := listings
		got, err := stamped.Refresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(listed.listingStampPath())
		want, err := listed.Refresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if round > 0 && !changed && listings != before {
			t.Errorf("round %d (%v): a refresh with nothing changed listed the harness", round, did)
		}
		if got.Sessions != want.Sessions || fmt.Sprint(got.Errors) != fmt.Sprint(want.Errors) {
			t.Errorf("round %d (%v): refreshed %d sessions, errors %v; listing: %d, %v", round, did, got.Sessions, got.Errors, want.Sessions, want.Errors)
		}
		if g, w := manifestRows(t, stamped), manifestRows(t, listed); g != w {
			t.Fatalf("round %d (%v): manifest\n%s\nwant (listed)\n%s", round, did, g, w)
		}
		// The index in place reads the same transcripts, stated alike,
		// whether the refresh walked them (a stamp's digest) or listed.
		if g, w := transcriptFiles(t, stamped), transcriptFiles(t, listed); g != w {
			t.Fatalf("round %d (%v): transcripts\n%s\nwant (listed)\n%s", round, did, g, w)
		}
		if s, ok := stamped.readListingStamp(); ok && s.Digest == "" {
			t.Errorf("round %d (%v): a stamp of a source read in place has no digest", round, did)
		}
		// Hits are named the same, from either.
		for _, p := range transcripts() {
			gt, gf := stamped.Listed(p)
			wt, wf := listed.Listed(p)
			if gt != wt || gf != wf {
				t.Errorf("round %d (%v): %s listed as %q/%q, want %q/%q", round, did, filepath.Base(p), gt, gf, wt, wf)
			}
			if m := MirrorPath(stamped.Dir, p); stamped.SourcePath(m) != listed.SourcePath(MirrorPath(listed.Dir, p)) {
				t.Errorf("round %d (%v): %s: mirror names %q", round, did, filepath.Base(p), stamped.SourcePath(m))
			}
		}
	}
}

// manifestRows is the manifest's rows as a listing makes them: without
// the mirror files' own stats, which differ between two mirrors.
func manifestRows(t *testing.T, m *Mirror) string {
	t.Helper()
	if _, err := regularfile.Stat(m.manifestPath()); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range (&Mirror{Dir: m.Dir}).readManifest() {
		// Whether a person opened the session (Ensure made its mirror
		// file, whose conversion counted the lines it skipped) is not the
		// listing's to say.
		r.MirrorSize, r.MirrorMtime, r.InPlace, r.Skipped, r.Opened = 0, 0, false, 0, 0
		fmt.Fprintf(&b, "%+v\n", r)
	}
	lines := strings.Split(b.String(), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// transcriptFiles is what m's Transcripts answers, in order of path.
func transcriptFiles(t *testing.T, m *Mirror) string {
	t.Helper()
	files, err := m.Transcripts()
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(files, func(a, b session.SessionFile) int { return strings.Compare(a.Path, b.Path) })
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "%s %d %d %d %v\n", f.Path, f.Size, f.ModTime.UnixNano(), f.Ino, f.Subagent)
	}
	return b.String()
}
