package foreign

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestEnsureSplicedIsWhole: over random histories of a Claude Code and a
// Codex dir (fakeharness's changes, refreshes now and then), sessions
// opened one after another (unchanged since their last opening, grown,
// never opened, gone, a FIFO) by a mirror that splices their rows into
// its manifest leave it, file for file, as a mirror that reads and writes
// every row (ensureWholeWay, Ensure as it was) leaves its own: the same answers, manifest
// (when each was opened too, on one clock), listing stamp and mirror
// files, with few enough bytes of them allowed that older ones are
// removed; and the manifest's lines stay searchable, or become so once
// it is written (one an older xdev wrote, one out of order).
func TestEnsureSplicedIsWhole(t *testing.T) {
	defer func(b int64, c func() int64) { openedBytes, clockNanos = b, c }(openedBytes, clockNanos)
	openedBytes = 2 << 10
	opened, converted := 0, 0
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 1234))
		tmp := t.TempDir()
		for _, h := range fakeHarnesses(t, rng, tmp, 6) {
			ms := refreshedMirrors(t, h.src, filepath.Join(tmp, "spliced"), filepath.Join(tmp, "whole"))
			spliced, whole := ms[0], ms[1]
			refresh := func() {
				for _, m := range ms {
					if _, err := m.Refresh(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
			}
			var clock int64
			for round := range 40 {
				if round == 20 {
					// A manifest whose lines cannot be searched: an older
					// xdev's, one out of order. (Not a damaged one: a line
					// the binary search finds is trusted, as a search
					// trusts it, where the whole way converted every
					// session again.)
					for _, m := range ms {
						spoilManifest(t, m, seed%3)
					}
				}
				list, _ := h.src.List(true)
				for range 1 + rng.IntN(4) {
					if len(list) == 0 {
						break
					}
					s := list[rng.IntN(len(list))]
					if s.Err != nil {
						continue
					}
					what := fmt.Sprintf("seed %d, %s round %d, %s", seed, h.src.Harness(), round, filepath.Base(s.Path))
					if rng.IntN(3) > 0 { // else a coarse clock: the time of the last
						clock += 1000
					}
					var got [2]string
					searchable, wrote := spliced.searchableManifest() != nil, false
					for k, m := range []*Mirror{spliced, whole} {
						c := clock
						clockNanos = func() int64 { c++; return c }
						before, _ := os.ReadFile(m.manifestPath())
						ensure := m.Ensure
						if k == 1 {
							ensure = m.ensureWholeWay
						}
						f, err := ensure(context.Background(), s)
						rel, _ := filepath.Rel(m.Dir, f.Path)
						got[k] = fmt.Sprintf("%s skipped %d err %v", rel, f.Skipped, err)
						if after, _ := os.ReadFile(m.manifestPath()); k == 0 && string(after) != string(before) {
							converted, wrote = converted+1, true
						}
					}
					opened++
					if got[0] != got[1] {
						t.Fatalf("%s: Ensure gave %s, want %s", what, got[0], got[1])
					}
					for _, m := range ms {
						// What the last comparison's refresh check kept of a
						// manifest spoilManifest changed behind its back.
						m.manifest, m.walked = nil, nil
					}
					sameOpened(t, what, spliced, whole)
					if (searchable || wrote) && spliced.searchableManifest() == nil {
						t.Fatalf("%s: the manifest's lines cannot be searched", what)
					}
				}
				for range rng.IntN(3) {
					if _, err := h.changes[rng.IntN(len(h.changes))](); err != nil {
						t.Fatal(err)
					}
				}
				if rng.IntN(4) == 0 {
					refresh()
				}
			}
		}
	}
	t.Logf("%d sessions opened, %d converted", opened, converted)
	if converted < opened/4 {
		t.Errorf("only %d of %d openings converted", converted, opened)
	}
}

// spoilManifest makes m's manifest one whose lines cannot be searched:
// how 1, an older xdev's (manifest.json, a JSON array); 2, its first two
// lines swapped; 0 leaves it.
func spoilManifest(t *testing.T, m *Mirror, how uint64) {
	t.Helper()
	data, err := os.ReadFile(m.manifestPath())
	if err != nil || how == 0 {
		return
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	switch how {
	case 1:
		_, rows := m.readManifestRows()
		b, _ := json.Marshal(rows)
		os.WriteFile(m.legacyManifestPath(), b, 0o600)
		os.Remove(m.manifestPath())
		return
	case 2:
		if len(lines) > 2 {
			lines[0], lines[1] = lines[1], lines[0]
		}
	}
	os.WriteFile(m.manifestPath(), bytes.Join(lines, nil), 0o600)
}

// sameOpened is sameMirror with when each session was opened compared
// too (the two mirrors open on one clock).
func sameOpened(t *testing.T, what string, a, b *Mirror) {
	t.Helper()
	own := regexp.MustCompile(`,"mirrorMtimeNs":\d+`)
	ma, _ := os.ReadFile(a.manifestPath())
	mb, _ := os.ReadFile(b.manifestPath())
	if x, y := own.ReplaceAll(ma, nil), own.ReplaceAll(mb, nil); string(x) != string(y) {
		t.Fatalf("%s: manifests differ:\n%s\nwant:\n%s", what, x, y)
	}
	sameMirror(t, what, a, b)
}

// ensureWholeWay is Ensure as it was, the way of this test's oracle: the
// manifest's every row read, the session's looked up among them, and,
// where it is converted, every row written again.
func (m *Mirror) ensureWholeWay(ctx context.Context, s Session) (MirrorFile, error) {
	row, target, unlock, err := m.opening(ctx, s)
	if err != nil {
		return MirrorFile{}, err
	}
	defer unlock()
	rows, oldRows := m.readManifestRows()
	if prev, ok := rows[s.Path]; ok && prev.Err == "" && !prev.InPlace && prev.current(row, target) {
		return MirrorFile{target, prev.Skipped}, nil
	}
	if row.Skipped, err = m.convert(s, target); err != nil {
		return MirrorFile{}, err
	}
	if mfi, err := os.Stat(target); err == nil {
		row.MirrorSize, row.MirrorMtime = mfi.Size(), mfi.ModTime().UnixNano()
	}
	var last int64
	for _, r := range rows {
		last = max(last, r.Opened)
	}
	row.Opened = max(clockNanos(), last+1)
	if prev, ok := rows[s.Path]; ok && prev.Size == row.Size && prev.ModTime == row.ModTime && prev.ID == row.ID {
		row.Title, row.FirstMessage = prev.Title, prev.FirstMessage
	} else if err := m.dropListingStamp(); err != nil {
		return MirrorFile{}, err
	}
	rows[s.Path] = row
	m.trimOpened(rows, s.Path)
	if err := m.writeManifest(slices.Collect(maps.Values(rows)), oldRows); err != nil {
		return MirrorFile{}, err
	}
	return MirrorFile{target, row.Skipped}, nil
}
