package catalog_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/foreign"
	"github.com/xdev/xdev/internal/secrets/secretstest"
	"github.com/xdev/xdev/internal/testplace"
)

// TestSecretsOfEveryHarness: Secrets finds every secret planted in
// sessions of three formats, each where it was planted (an entry of the
// session, its title), and its mask names its kind; and on every real
// fixture it finds what docs/secrets.md lists and nothing else.
func TestSecretsOfEveryHarness(t *testing.T) {
	p := testplace.New(t)
	testplace.CopyRealFixtures(t, p.Roots)
	c := p.Catalog(t)
	ctx := context.Background()
	rows, failed := catalog.ListPlaces(ctx, c.Places(catalog.Every), catalog.ListOptions{Subagents: true})
	if len(failed) > 0 {
		t.Fatal(failed)
	}
	var real []string
	_, err := c.Secrets(ctx, rows, catalog.SecretsOptions{}, func(s catalog.Secret) {
		real = append(real, fmt.Sprintf("%s %s %s:%d", s.Kind, s.Harness, s.Path[strings.LastIndexByte(s.Path, '/')+1:], s.Line))
	}, func(r catalog.Row, err error) { t.Errorf("%s: %v", r.Path, err) })
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(real)
	t.Logf("%d findings on the real fixtures (%d sessions):\n%s", len(real), len(rows), strings.Join(real, "\n"))
	if len(real) != wantRealFindings {
		t.Errorf("%d findings on the real fixtures, docs/secrets.md lists %d", len(real), wantRealFindings)
	}

	planted := secretstest.Secrets(t, 60)
	secretstest.Plant(t, p.Data, p.Roots, planted)
	rows, _ = catalog.ListPlaces(ctx, c.Places(catalog.Every), catalog.ListOptions{Subagents: true})
	found := 0
	c.Secrets(ctx, rows, catalog.SecretsOptions{}, func(s catalog.Secret) {
		found++
		if !strings.HasPrefix(s.Masked, "[REDACTED "+s.Kind+" …") || s.Entry == "" {
			t.Errorf("%+v", s)
		}
	}, func(r catalog.Row, err error) { t.Errorf("%s: %v", r.Path, err) })
	if found < len(planted)+len(real) {
		t.Errorf("%d found of %d planted", found-len(real), len(planted))
	}
}

// wantRealFindings is how many secrets the real fixtures hold, each
// looked at and listed in docs/secrets.md.
const wantRealFindings = 25

// TestSecretsCache: a second scan opens no session and reports the same
// secrets in the same order; a session that changed is read again and
// alone; the cache file holds no planted value and is 0600; a damaged
// cache is read past; the filters (time, kind) apply to cached findings
// as to fresh ones; a session gone is dropped from the cache by a scan of
// every session.
func TestSecretsCache(t *testing.T) {
	p := testplace.New(t)
	c := p.Catalog(t)
	ctx := context.Background()
	planted := secretstest.Secrets(t, 60)
	files := secretstest.Plant(t, p.Data, p.Roots, planted)
	old := time.Now().Add(-time.Hour)
	for _, f := range files {
		if container, _, ok := foreign.ContainerOf(f); ok {
			f = container // a session of a file of many (Aider's chat)
		}
		os.Chtimes(f, old, old) // older than the racy window
	}
	cache := filepath.Join(t.TempDir(), "secrets", "found.json")
	scan := func(opts catalog.SecretsOptions) ([]catalog.Secret, catalog.SecretsStats) {
		t.Helper()
		rows, failed := catalog.ListPlaces(ctx, c.Places(catalog.Every), catalog.ListOptions{Subagents: true})
		if len(failed) > 0 {
			t.Fatal(failed)
		}
		opts.Cache, opts.CachePath, opts.Whole = true, cache, true
		var found []catalog.Secret
		st, err := c.Secrets(ctx, rows, opts, func(s catalog.Secret) {
			s.Time = time.UnixMilli(s.Time.UnixMilli()) // as the cache keeps it
			found = append(found, s)
		},
			func(r catalog.Row, err error) { t.Errorf("%s: %v", r.Path, err) })
		if err != nil {
			t.Fatal(err)
		}
		return found, st
	}
	cold, st := scan(catalog.SecretsOptions{})
	if st.Read != len(files) || st.Sessions != len(files) || len(cold) < len(planted) {
		t.Fatalf("cold scan: %+v, %d found of %d planted", st, len(cold), len(planted))
	}
	warm, st := scan(catalog.SecretsOptions{})
	if st.Read != 0 || !reflect.DeepEqual(warm, cold) {
		t.Errorf("warm scan: %+v read, the findings the same: %v", st, reflect.DeepEqual(warm, cold))
	}
	b, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	secretstest.Check(t, "the cache file", string(b), planted)
	if fi, _ := os.Stat(cache); fi.Mode().Perm() != 0o600 {
		t.Errorf("the cache file is %v", fi.Mode().Perm())
	}

	// One session changed: it alone is read again.
	extra := secretstest.Secrets(t, 61)[60:]
	if len(extra) == 1 {
		f, _ := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
		fmt.Fprintf(f, `{"type":"message","id":"e9","parentId":"e3","timestamp":"2026-02-01T00:00:00.000Z","message":{"role":"user","content":"and %s","timestamp":9}}`+"\n", extra[0])
		f.Close()
		os.Chtimes(files[0], old, old.Add(time.Minute))
		grown, st := scan(catalog.SecretsOptions{})
		if st.Read != 1 || len(grown) != len(cold)+1 {
			t.Errorf("after one session grew: %+v, %d found, want %d", st, len(grown), len(cold)+1)
		}
		cold = grown
	}

	// Filters apply to what the cache answers.
	late, _ := scan(catalog.SecretsOptions{Since: time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)})
	if len(extra) == 1 && (len(late) != 1 || late[0].Entry != "e9") {
		t.Errorf("--since: %d found, want the one of e9: %+v", len(late), late)
	}
	kind := cold[0].Kind
	byKind, _ := scan(catalog.SecretsOptions{Kind: kind})
	for _, s := range byKind {
		if s.Kind != kind {
			t.Errorf("--kind %s: %s", kind, s.Kind)
		}
	}
	if len(byKind) == 0 {
		t.Errorf("--kind %s: none", kind)
	}

	// A damaged cache is read past, and written again.
	os.WriteFile(cache, b[:len(b)/2], 0o600)
	again, st := scan(catalog.SecretsOptions{})
	if st.Read != len(files) || !reflect.DeepEqual(again, cold) {
		t.Errorf("over a damaged cache: %+v", st)
	}
	// A session gone is dropped.
	os.Remove(files[1])
	scan(catalog.SecretsOptions{})
	if b, _ := os.ReadFile(cache); strings.Contains(string(b), filepath.Base(files[1])) {
		t.Errorf("the cache still names %s, which is gone", files[1])
	}
}
