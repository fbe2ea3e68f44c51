package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/foreign"
	"github.com/xdev/xdev/internal/realfixtures"
	"github.com/xdev/xdev/internal/testplace"
)

// realHome makes a machine of the real fixtures and points the process
// at it, working in its top directory, which it returns: xdev's data dir
// (work/agent) holds the sessions real omp wrote, and every other
// harness's real sessions are where it keeps them by default, under
// work/home. Under CI the fixtures' absence fails the test; else skips.
func realHome(t *testing.T) string {
	t.Helper()
	realfixtures.Dir(t)
	work := t.TempDir()
	data := filepath.Join(work, "agent")
	corpus, _ := filepath.Abs("../../internal/session/testdata/omp")
	copyTree(t, corpus, data)
	t.Setenv("HOME", filepath.Join(work, "home"))
	t.Setenv("XDEV_DATA_DIR", data)
	t.Setenv("PI_CODING_AGENT_DIR", "")
	roots := map[catalog.Harness]string{}
	for _, k := range foreign.Kinds {
		for _, v := range k.Env {
			t.Setenv(v, "")
		}
		root, err := k.DefaultRoot()
		if err != nil {
			t.Fatal(err)
		}
		roots[catalog.Harness(k.Name)] = root
	}
	testplace.CopyRealFixtures(t, roots)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(work, "cache"))
	t.Chdir(work)
	return work
}

// listed is one row of `xdev list --json`.
type listed struct {
	Harness, ID, Path string
	Subagent          bool
}

// names are the ways a person names the session s: its path (absolute
// and relative to wd), its file name with and without .jsonl and a
// prefix of it (for the data dir's), its id and an id prefix no other
// session shares, upper-cased too.
func names(t *testing.T, s listed, ids []string, wd string) []string {
	var out []string
	out = append(out, s.Path)
	if rel, err := filepath.Rel(wd, s.Path); err == nil && strings.Contains(rel, "/") {
		out = append(out, rel)
	}
	if s.Harness == "xdev" {
		base := filepath.Base(s.Path)
		out = append(out, base, strings.TrimSuffix(base, ".jsonl"), strings.TrimSuffix(base, "l"))
	}
	out = append(out, s.ID, strings.ToUpper(s.ID))
	for n := 8; n < len(s.ID); n++ {
		shared := false
		for _, other := range ids {
			if other != s.ID && strings.HasPrefix(strings.ToLower(other), strings.ToLower(s.ID[:n])) {
				shared = true
				break
			}
		}
		if !shared {
			out = append(out, s.ID[:n])
			break
		}
	}
	return out
}

// TestEveryNameResolves walks every session `list --all --subagents`
// shows (omp's samples in the data dir, and every other harness's real
// sessions laid out where that harness keeps them)
// through show, show --tree, export, verify and fork, named every way a
// person names one: each name finds the same session, and fork never
// writes outside the data dir. The harnesses' directories are unchanged.
func TestEveryNameResolves(t *testing.T) {
	work := realHome(t)
	home, data := filepath.Join(work, "home"), filepath.Join(work, "agent")
	before := treeDigest(t, home)

	out, errs, code := xdev(t, "", "list", "--all", "--subagents", "--json")
	if code != 0 {
		t.Fatalf("list: %d %s", code, errs)
	}
	var rows []listed
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	var ids []string
	harnesses := map[string]int{}
	for _, r := range rows {
		ids = append(ids, r.ID)
		harnesses[r.Harness]++
	}
	for _, h := range catalog.Every {
		if h != catalog.Omp && harnesses[string(h)] == 0 {
			t.Errorf("list shows no %s session: %v", h, harnesses)
		}
	}
	// Every name of every session resolves to it (show --json); every
	// command takes each session by one of its names, in turn, so that
	// each command meets each way of naming one (one command per name,
	// not each command with each name, which made this the suite's
	// longest test under -race).
	turn := 0
	for _, s := range rows {
		converted := catalog.Harness(s.Harness).Converted()
		all := names(t, s, ids, work)
		for _, name := range all {
			out, errs, code := xdev(t, "", "show", "--json", name)
			if code != 0 {
				t.Errorf("show %q (%s %s): %d %s", name, s.Harness, s.Path, code, errs)
				continue
			}
			var shown struct{ Path string }
			if err := json.Unmarshal([]byte(out), &shown); err != nil || shown.Path != s.Path {
				t.Errorf("show %q: path %q, want %q (%v)", name, shown.Path, s.Path, err)
			}
		}
		next := func() string { turn++; return all[turn%len(all)] }
		tree, exported, verified, forked := next(), next(), next(), next()
		if _, errs, code := xdev(t, "", "show", "--tree", tree); code != 0 {
			t.Errorf("show --tree %q: %d %s", tree, code, errs)
		}
		if out, errs, code := xdev(t, "", "export", exported); code != 0 || out == "" {
			t.Errorf("export %q: %d %s", exported, code, errs)
		}
		_, errs, code := xdev(t, "", "verify", verified)
		switch {
		case converted && (code != exitError || !strings.Contains(errs, "xdev import")):
			t.Errorf("verify %q of a %s session: %d %s, want a pointer to xdev import", verified, s.Harness, code, errs)
		case !converted && code != exitOK && code != exitProblems:
			t.Errorf("verify %q: %d %s", verified, code, errs)
		}
		out, errs, code := xdev(t, "", "fork", forked)
		switch {
		case converted && (code != exitError || !strings.Contains(errs, "xdev import")):
			t.Errorf("fork %q of a %s session: %d %s, want a pointer to xdev import", forked, s.Harness, code, errs)
		case !converted && code != exitOK:
			t.Errorf("fork %q: %d %s", forked, code, errs)
		case !converted && !strings.HasPrefix(strings.TrimSpace(out), filepath.Join(data, "sessions")+"/"):
			t.Errorf("fork %q wrote %q, outside the data dir %s", forked, out, data)
		}
	}
	if after := treeDigest(t, home); after != before {
		t.Errorf("the harnesses' directories changed:\nbefore %s\nafter  %s", before, after)
	}
}

// copyTree copies the files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// treeDigest lists every file under dir with its size and bytes' digest.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		data, _ := os.ReadFile(p)
		if d.Type().IsRegular() {
			b.WriteString(p + " " + digest(data) + "\n")
		} else {
			b.WriteString(p + " " + d.Type().String() + "\n")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
