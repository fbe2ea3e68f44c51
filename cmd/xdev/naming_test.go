package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/pgtest"
	"github.com/xdev/xdev/internal/session"
)

// TestEveryCommandNamesAlike: every command that names a session, in
// every place sessions live, takes every way a person names one to the
// same outcome with the same words. The same four sessions (three of
// whose ids share "0a1b") are put in xdev's data dir, omp's (--omp), pi's
// dir (read in place), and a PostgreSQL store in xdev's tables and in
// omp's table (--db, --db --omp-table); each is named by its path
// (absolute and relative, where a place has files), its file name with
// and without .jsonl, its id and an id prefix in both cases, an ambiguous
// prefix in both cases, and an unknown name, through show, export,
// search --session, and where the place is local verify and fork. A name
// that finds a session finds that session; an ambiguous one fails (exit
// 1) with the one text of every place; an unknown one fails (exit 1).
// (The drifts this holds: a stored session's ambiguous prefix searched
// every session it named, an unknown one searched nothing and exited 0,
// and its upper-case prefix was not found.)
func TestEveryCommandNamesAlike(t *testing.T) {
	work := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(work, "cache"))
	for _, k := range []string{"XDEV_DATA_DIR", "PI_CODING_AGENT_DIR", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "GEMINI_CLI_HOME", "XDG_DATA_HOME", "XDEV_DATABASE_URL"} {
		t.Setenv(k, "")
	}
	ids := []string{
		"0a1b2c3d-0000-4000-8000-000000000001",
		"0a1b2c3d-0000-4000-8000-000000000002",
		"0a1bffff-0000-4000-8000-000000000003",
		"9f8e7d6c-0000-4000-8000-000000000004",
	}
	// sessions writes the four sessions into the data dir dir (omp's
	// layout) and returns their paths.
	sessions := func(dir string) []string {
		var paths []string
		for k, id := range ids {
			path := filepath.Join(session.SessionsDir(dir), "--work-p--", fmt.Sprintf("2026-01-0%dT00-00-00-000Z_%s.jsonl", k+1, id))
			s, err := session.Create(path, session.NewOptions{Cwd: "/work/p", ID: id})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.AppendJSON([]byte(`{"type":"message","message":{"role":"user","content":"hello from ` + id + `","timestamp":1}}`)); err != nil {
				t.Fatal(err)
			}
			s.Close()
			paths = append(paths, path)
		}
		return paths
	}

	// A place is a HOME holding one place's sessions, and the flags that
	// read it.
	type place struct {
		name  string
		home  string
		flags []string
		paths []string // the files, where the place has them
		local bool     // verify and fork read it
	}
	var places []place
	for _, p := range []struct {
		name, dir string
		flags     []string
	}{
		{"xdev's data dir", ".xdev/agent", nil},
		{"omp's data dir", ".omp/agent", []string{"--omp"}},
		{"pi's dir", ".pi/agent", nil},
	} {
		home := filepath.Join(work, strings.ReplaceAll(p.name, " ", "-"))
		places = append(places, place{p.name, home, p.flags, sessions(filepath.Join(home, p.dir)), true})
	}
	switch _, err := pgtest.Shared(); {
	case errors.Is(err, pgtest.ErrNoServer) && os.Getenv("CI") == "":
		t.Logf("%v: the local places only", err)
	case err != nil:
		t.Fatal(err)
	default:
		home := filepath.Join(work, "pg")
		t.Setenv("HOME", home)
		sessions(filepath.Join(home, ".xdev", "agent"))
		for _, omp := range []bool{false, true} {
			db := pgtest.NewDB(t)
			flags := []string{"--db", db}
			name := "xdev's tables"
			if omp {
				flags, name = append(flags, "--omp-table"), "omp's table"
			}
			if _, errs, code := xdev(t, "", append([]string{"sync"}, flags...)...); code != 0 {
				t.Fatalf("sync %v: %d %s", flags, code, errs)
			}
			places = append(places, place{name, filepath.Join(work, "pg-"+fmt.Sprint(omp)), flags, nil, false})
		}
	}

	type outcome struct {
		code int
		says string // the session found, or the first line of the error
	}
	for _, p := range places {
		t.Run(p.name, func(t *testing.T) {
			t.Setenv("HOME", p.home)
			os.MkdirAll(p.home, 0o700)
			t.Chdir(p.home)
			type named struct{ name, want string }
			var cases []named
			for k, id := range ids {
				if k == 3 {
					if p.paths != nil {
						rel, _ := filepath.Rel(p.home, p.paths[k])
						base := filepath.Base(p.paths[k])
						cases = append(cases, named{p.paths[k], id}, named{rel, id}, named{base, id}, named{strings.TrimSuffix(base, ".jsonl"), id})
					}
					cases = append(cases, named{id, id}, named{strings.ToUpper(id), id}, named{id[:8], id}, named{strings.ToUpper(id[:6]), id})
				}
			}
			cases = append(cases, named{ids[0], ids[0]}, named{"0a1bf", ids[2]}, named{"0A1BF", ids[2]},
				named{"0a1b", "ambiguous"}, named{"0A1B", "ambiguous"}, named{"nosuch", "unknown"})
			commands := map[string]func(name string) []string{
				"show":   func(n string) []string { return append(append([]string{"show"}, p.flags...), "--json", n) },
				"export": func(n string) []string { return append(append([]string{"export"}, p.flags...), n) },
				"search --session": func(n string) []string {
					return append(append([]string{"search"}, p.flags...), "--json", "--session", n, "hello")
				},
			}
			if p.name == "omp's table" {
				delete(commands, "search --session") // omp's table has no index to search
			}
			if p.local {
				commands["verify"] = func(n string) []string { return append(append([]string{"verify"}, p.flags...), "--json", n) }
				// fork writes the data dir, and reads any place.
				commands["fork"] = func(n string) []string {
					return []string{"fork", "--json", "--data-dir", filepath.Join(p.home, "forks"), n}
				}
			}
			for _, c := range cases {
				var first *outcome
				for cmd, args := range commands {
					out, errs, code := xdev(t, "", args(c.name)...)
					got := outcome{code: code}
					switch {
					case code == 0 && c.want != "ambiguous" && c.want != "unknown":
						if !strings.Contains(out, c.want) && !strings.Contains(out, "hello from "+c.want) {
							t.Errorf("%s %s %q: exit 0 without %s: %.300s", p.name, cmd, c.name, c.want, out)
						}
						for _, other := range ids {
							if other != c.want && cmd == "search --session" && strings.Contains(out, "hello from "+other+`"`) {
								t.Errorf("%s %s %q: a hit of %s too", p.name, cmd, c.name, other)
							}
						}
						got.says = c.want
					case code == 0:
						t.Errorf("%s %s %q: exit 0, want it %s: %.300s", p.name, cmd, c.name, c.want, out)
					default:
						got.says = strings.SplitN(errs, "\n", 2)[0]
						got.says = got.says[strings.Index(got.says, ":")+1:] // past "xdev show:"
					}
					switch c.want {
					case "ambiguous":
						if code != exitError || !strings.Contains(got.says, `matches 3 sessions; give more of the id:`) {
							t.Errorf("%s %s %q: exit %d, %q; want the ambiguous error", p.name, cmd, c.name, code, errs)
						}
					case "unknown":
						if code != exitError {
							t.Errorf("%s %s %q: exit %d, %q; want exit 1", p.name, cmd, c.name, code, errs)
						}
					default:
						if code != 0 && !(cmd == "verify" && code == exitProblems) {
							t.Errorf("%s %s %q: exit %d, %s", p.name, cmd, c.name, code, errs)
						}
					}
					if c.want == "ambiguous" {
						if first == nil {
							first = &got
						} else if got != *first {
							t.Errorf("%s %q: %s says %q, another command %q", p.name, c.name, cmd, got.says, first.says)
						}
					}
				}
			}
		})
	}
}
