package foreign

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/fakeharness"
	"github.com/xdev/xdev/internal/session"
)

// TestRefreshPathsIsRefresh: over random histories of a Claude Code and
// a Codex dir (fakeharness.ClaudeChanges, CodexChanges), a mirror refreshed from the paths a watcher names holds, file
// for file, what a mirror refreshed whole holds: the same manifest, the
// same listing stamp, the same transcripts for its index, and a refresh
// after it finds nothing changed by its stats alone. Most rounds are by
// paths.
func TestRefreshPathsIsRefresh(t *testing.T) {
	byPaths, rounds := 0, 0
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 77))
		tmp := t.TempDir()
		for _, h := range fakeHarnesses(t, rng, tmp, 4) {
			ms := refreshedMirrors(t, h.src, filepath.Join(tmp, "paths"), filepath.Join(tmp, "whole"))
			paths, whole := ms[0], ms[1]
			for round := range 30 {
				// A session a person opens now and then: its mirror file
				// made, to be removed once its transcript changes.
				if list, err := h.src.List(true); err == nil && len(list) > 0 && rng.IntN(3) == 0 {
					if s := list[rng.IntN(len(list))]; s.Err == nil {
						for _, m := range []*Mirror{paths, whole} {
							m.Ensure(context.Background(), s)
						}
					}
				}
				var changed []string
				for range 1 + rng.IntN(3) {
					c, err := h.changes[rng.IntN(len(h.changes))]()
					if err != nil {
						t.Fatal(err)
					}
					changed = append(changed, c.Paths...)
				}
				_, ok, err := paths.RefreshPaths(context.Background(), changed)
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					if _, err := paths.Refresh(context.Background()); err != nil {
						t.Fatal(err)
					}
				} else {
					byPaths++
				}
				rounds++
				if _, err := whole.Refresh(context.Background()); err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("seed %d, %s round %d (by paths %v, %q)", seed, h.src.Harness(), round, ok, changed)
				sameMirror(t, what, paths, whole)
			}
		}
	}
	t.Logf("%d of %d rounds by paths", byPaths, rounds)
	if byPaths < rounds/2 {
		t.Errorf("only %d of %d rounds by paths", byPaths, rounds)
	}
}

// A fakeHarness is a harness's source over a dir fakeharness writes, and
// the random changes it makes there.
type fakeHarness struct {
	src     Source
	changes []func() (fakeharness.Change, error)
}

// fakeHarnesses are a Claude Code and a Codex dir under tmp, of n
// transcripts and n rollouts each, written an hour ago (every file past
// the racy window: the stamps are written), changed as rng draws.
func fakeHarnesses(t *testing.T, rng *rand.Rand, tmp string, n int) []fakeHarness {
	t.Helper()
	d := fakeharness.New(tmp, time.Now().Add(-time.Hour))
	d.Step = func() time.Duration { return time.Duration(1+rng.IntN(3)) * time.Second }
	for range n {
		if _, err := d.Transcript("-w-p", "first"); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Rollout("01", true, "first"); err != nil {
			t.Fatal(err)
		}
	}
	return []fakeHarness{{claudeSource{root: d.Claude}, d.ClaudeChanges(rng)}, {codexSource{root: d.Codex}, d.CodexChanges(rng)}}
}

// refreshedMirrors are mirrors of src at each of dirs (their names
// suffixed with src's harness), each refreshed.
func refreshedMirrors(t *testing.T, src Source, dirs ...string) []*Mirror {
	t.Helper()
	var ms []*Mirror
	for _, d := range dirs {
		m := &Mirror{Dir: d + "-" + src.Harness(), Source: src}
		if _, err := m.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}

// sameMirror fails t where a and b differ in what a search or a refresh
// reads of them: manifest, listing stamp (its unlisted in any order),
// transcripts; and where a refresh of a does not find it unchanged.
func sameMirror(t *testing.T, what string, a, b *Mirror) {
	t.Helper()
	// When a session was opened, and its mirror file's time, are each
	// mirror's own.
	own := regexp.MustCompile(`,"(mirrorMtimeNs|openedNs)":\d+`)
	ma, _ := os.ReadFile(a.manifestPath())
	mb, _ := os.ReadFile(b.manifestPath())
	ma, mb = own.ReplaceAll(ma, nil), own.ReplaceAll(mb, nil)
	if !bytes.Equal(ma, mb) {
		t.Fatalf("%s: manifests differ:\n%s\nwant:\n%s", what, ma, mb)
	}
	sa, oka := a.readListingStamp()
	sb, okb := b.readListingStamp()
	if oka != okb {
		t.Fatalf("%s: a listing stamp %v, want %v", what, oka, okb)
	}
	sortUnlisted := func(s *listingStamp) {
		slices.SortFunc(s.Unlisted, func(x, y unlistedFile) int { return strings.Compare(x.Path, y.Path) })
	}
	sortUnlisted(&sa)
	sortUnlisted(&sb)
	if fmt.Sprint(sa) != fmt.Sprint(sb) {
		t.Fatalf("%s: listing stamps differ:\n%+v\nwant:\n%+v", what, sa, sb)
	}
	ta, erra := a.Transcripts()
	tb, errb := b.Transcripts()
	for _, ts := range [][]session.SessionFile{ta, tb} { // a walk's order, or the manifest's
		slices.SortFunc(ts, func(x, y session.SessionFile) int { return strings.Compare(x.Path, y.Path) })
	}
	if (erra == nil) != (errb == nil) || fmt.Sprint(ta) != fmt.Sprint(tb) {
		t.Fatalf("%s: transcripts differ: %v %v\nwant: %v %v", what, ta, erra, tb, errb)
	}
	// The mirror files: those of the sessions opened and unchanged since.
	names := func(m *Mirror) []string {
		ents, _ := os.ReadDir(filepath.Join(session.SessionsDir(m.Dir), mirrorSub))
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return out
	}
	if fa, fb := names(a), names(b); !slices.Equal(fa, fb) {
		t.Fatalf("%s: mirror files %v, want %v", what, fa, fb)
	}
	if _, _, same := a.unchanged(); oka && !same {
		if _, _, same := b.unchanged(); same {
			t.Fatalf("%s: a refresh after it finds something changed", what)
		}
	}
}
