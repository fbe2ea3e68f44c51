package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestStatuslineNamesEachSession: on every harness's real sessions, a
// status line given Claude Code's JSON naming a session (by its
// transcript's path, a symlink to it, or its id) says that session's
// cost, as `usage session` reports it: with no groups kept (a ledger of
// the day's sessions built), and with the groups kept (nothing changed
// since a report), read from the status alone.
func TestStatuslineNamesEachSession(t *testing.T) {
	work := realHome(t)
	// An hour old, so that the groups a ledger counts are kept and taken.
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(work, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	out, errs, code := xdev(t, "", "usage", "session", "--json", "-z", "UTC")
	if code != 0 {
		t.Fatalf("usage session: %d %s", code, errs)
	}
	var report struct {
		Session []struct {
			SessionID, Harness, Path string
			TotalCost                float64
			UnpricedCalls            int
		}
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatal(err)
	}
	links := t.TempDir()
	named := 0
	for k, s := range report.Session {
		want := "$" + strconv.FormatFloat(s.TotalCost, 'f', 2, 64)
		if s.UnpricedCalls > 0 {
			want = "≥" + want
		}
		inputs := []map[string]string{{"transcript_path": s.Path}}
		if fi, err := os.Stat(s.Path); err == nil && fi.Mode().IsRegular() {
			// A file of its own (not a database's or a chat history's
			// session, path#id): named through a symlink too.
			link := filepath.Join(links, strconv.Itoa(k)+filepath.Ext(s.Path))
			if err := os.Symlink(s.Path, link); err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, map[string]string{"transcript_path": link})
		}
		if s.SessionID != "" && !strings.Contains(s.Path, "#") {
			inputs = append(inputs, map[string]string{"session_id": s.SessionID})
		}
		for _, in := range inputs {
			b, _ := json.Marshal(in)
			for _, pass := range []string{"built", "kept"} {
				if pass == "built" {
					counted, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "xdev", "usage", "*.counted"))
					for _, f := range counted {
						os.Remove(f)
					}
				} else {
					xdev(t, "", "usage") // keeps the groups
				}
				line, errs, code := xdev(t, string(b), "usage", "--statusline")
				if code != 0 {
					t.Fatalf("%s %s: %d %s", s.Harness, in, code, errs)
				}
				if got, _, _ := strings.Cut(line, " session"); got != want {
					// Two sessions of one id (a harness's copies) may
					// each be the one an id names.
					if _, byID := in["session_id"]; byID && ambiguous(report.Session, s.SessionID) {
						continue
					}
					t.Errorf("%s %s, groups %s: %q, want %s session", s.Harness, in, pass, strings.TrimSpace(line), want)
				}
				named++
			}
		}
	}
	if named < 40 {
		t.Errorf("only %d status lines named a session", named)
	}
}

// ambiguous reports whether more than one session of a report has id.
func ambiguous(sessions []struct {
	SessionID, Harness, Path string
	TotalCost                float64
	UnpricedCalls            int
}, id string) bool {
	n := 0
	for _, s := range sessions {
		if s.SessionID == id {
			n++
		}
	}
	return n > 1
}
