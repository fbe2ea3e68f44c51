package foreign

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/session"
)

// TestManifestLines: a mirror that has not refreshed names the sources
// of mirror files, and what their listing called them, from the
// manifest's lines as the whole manifest's rows do, over random
// manifests (sources with quotes, escapes, non-ASCII; failed
// conversions), for every row and for paths that are none of its; an
// older xdev's manifest.json is read until a write replaces it; a
// damaged manifest names nothing rather than the wrong source.
func TestManifestLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	pieces := []string{"a", "é", `"`, `\`, "/", " ", "\u2028", "日本", "<&>", "\t"}
	for round := range 60 {
		dir := t.TempDir()
		files := filepath.Join(session.SessionsDir(dir), mirrorSub)
		var rows []mirrorRow
		for i := range rng.IntN(80) {
			src := fmt.Sprintf("/home/u/.claude/projects/p%d/", i)
			for range rng.IntN(6) {
				src += pieces[rng.IntN(len(pieces))]
			}
			r := mirrorRow{Source: src, ID: fmt.Sprint(i), Mirror: mirrorName(src), Title: "title " + src, FirstMessage: fmt.Sprint("first ", i)}
			if rng.IntN(8) == 0 {
				r.Err = "bad"
			}
			rows = append(rows, r)
		}
		legacy := round%4 == 0
		if legacy {
			b, _ := json.Marshal(rows)
			os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o600)
		} else if err := (&Mirror{Dir: dir}).writeManifest(rows, nil); err != nil {
			t.Fatal(err)
		}
		m := &Mirror{Dir: dir}
		for _, r := range rows {
			if got := m.SourcePath(filepath.Join(files, r.Mirror)); got != r.Source {
				t.Fatalf("round %d: SourcePath of %s = %q, want %q", round, r.Mirror, got, r.Source)
			}
			if title, first := m.Listed(r.Source); title != r.Title || first != r.FirstMessage {
				t.Fatalf("round %d: Listed(%q) = %q, %q", round, r.Source, title, first)
			}
		}
		for _, p := range []string{filepath.Join(files, mirrorName("/elsewhere")), filepath.Join(dir, "x.jsonl"), filepath.Join(files, "0.jsonl"), ""} {
			if got := m.SourcePath(p); got != "" {
				t.Fatalf("round %d: SourcePath(%q) = %q", round, p, got)
			}
		}
		if legacy {
			// A write replaces the older manifest, which then goes.
			if err := m.writeManifest(rows, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, "manifest.json")); !os.IsNotExist(err) {
				t.Fatalf("round %d: manifest.json left beside manifest.jsonl (%v)", round, err)
			}
			if _, got := m.readManifestRows(); len(got) != len(rows) {
				t.Fatalf("round %d: %d rows read back of %d", round, len(got), len(rows))
			}
		}
	}

	// Damaged lines: swapped (out of order), cut, not JSON.
	dir := t.TempDir()
	files := filepath.Join(session.SessionsDir(dir), mirrorSub)
	rows := []mirrorRow{{Source: "/a", Mirror: mirrorName("/a")}, {Source: "/b", Mirror: mirrorName("/b")}, {Source: "/c", Mirror: mirrorName("/c")}}
	if err := (&Mirror{Dir: dir}).writeManifest(rows, nil); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(filepath.Join(dir, "manifest.jsonl"))
	lines := strings.SplitAfter(string(good), "\n")
	for name, bad := range map[string]string{
		"swapped":  lines[1] + lines[0] + lines[2],
		"cut":      lines[0] + lines[1] + lines[2][:20],
		"not json": lines[0] + "junk\n" + lines[2],
	} {
		os.WriteFile(filepath.Join(dir, "manifest.jsonl"), []byte(bad), 0o600)
		m := &Mirror{Dir: dir}
		for _, r := range rows {
			if got := m.SourcePath(filepath.Join(files, r.Mirror)); got != "" && got != r.Source {
				t.Errorf("%s: SourcePath of %s's mirror = %q", name, r.Source, got)
			}
		}
	}
}
