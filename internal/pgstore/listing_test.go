package pgstore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/session"
)

// TestListingMatchesLocal: a stored session is listed by the rules its
// file is (session.Describe over the stored head and tail): the same
// status, first message, short summary and fallback title as a local
// listing of the same files, in xdev's tables and in omp's; and a
// subagent's transcript is one there too, left out unless asked for.
func TestListingMatchesLocal(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	src := shapes(t, 40)
	// A subagent's transcript, where omp keeps it: beside its parent.
	parents, _ := filepath.Glob(filepath.Join(session.SessionsDir(src), "--omp--", "*.jsonl"))
	sub, err := session.SubagentPath(parents[0], "Scout")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(sub), 0o700)
	b, _ := os.ReadFile(parents[1])
	os.WriteFile(sub, b, 0o600)
	if _, err := db.Push(ctx, src, PushOptions{}); err != nil {
		t.Fatal(err)
	}
	local, err := session.List(src, &session.ListOptions{Subagents: true, Status: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]session.SessionInfo{} // by the path under sessions/
	subagents := 0
	for _, i := range local {
		rel, _ := filepath.Rel(session.SessionsDir(src), i.Path)
		want[filepath.ToSlash(rel)] = i
		if i.Subagent {
			subagents++
		}
	}
	same := func(where, key string, got session.SessionInfo) {
		t.Helper()
		w, ok := want[key]
		if !ok || w.Err != nil {
			return
		}
		if got.Err != nil || got.Status != w.Status || got.FirstMessage != w.FirstMessage ||
			got.ShortSummary != w.ShortSummary || got.ListTitle() != w.ListTitle() || got.Subagent != w.Subagent {
			t.Errorf("%s %s: listed as %q %q %q %q subagent=%v (%v); the file as %q %q %q %q subagent=%v",
				where, key, got.Status, got.FirstMessage, got.ShortSummary, got.ListTitle(), got.Subagent, got.Err,
				w.Status, w.FirstMessage, w.ShortSummary, w.ListTitle(), w.Subagent)
		}
	}
	stored, err := db.List(ctx, ListOptions{Subagents: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stored {
		same("xdev's table", s.Path, s.Listing)
	}
	if len(stored) < 40 {
		t.Fatalf("%d sessions stored", len(stored))
	}
	tbl, err := db.OmpTable("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Push(ctx, src, OmpPushOptions{Root: "/omp/agent/sessions"}); err != nil {
		t.Fatal(err)
	}
	rows, err := tbl.Rows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	subs := 0
	for _, r := range rows {
		key := strings.TrimPrefix(r.Path, "/omp/agent/sessions/")
		if b, _ := os.ReadFile(filepath.Join(session.SessionsDir(src), key)); !strings.Contains(string(b), session.BlobRefPrefix) {
			// (A row holds its images inline, as omp's table holds them:
			// its head is another text than the file's.)
			same("omp's table", key, r.Listing)
		}
		if r.Listing.Subagent {
			subs++
		}
	}
	if subs != subagents || subagents == 0 {
		t.Errorf("%d subagents in omp's table, %d in the data dir", subs, subagents)
	}
}
