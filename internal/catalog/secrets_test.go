package catalog_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/catalog"
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
	err := c.Secrets(ctx, rows, func(s catalog.Secret) {
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
	secretstest.Plant(t, p.Data, p.Roots[catalog.Claude], p.Roots[catalog.Codex], planted)
	rows, _ = catalog.ListPlaces(ctx, c.Places(catalog.Every), catalog.ListOptions{Subagents: true})
	found := 0
	c.Secrets(ctx, rows, func(s catalog.Secret) {
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
const wantRealFindings = 0
