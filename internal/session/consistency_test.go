package session_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/export"
	"github.com/xdev/xdev/internal/session"
)

// TestExportAgreesWithContext reads the differential tester's files (odd
// writers, loose types, numeric and missing ids) three ways: the context,
// the Markdown export and the HTML export. The exports must succeed on
// every file xdev opens and show every plain-text message the model is
// sent, so a reader of the export sees what the model saw.
func TestExportAgreesWithContext(t *testing.T) {
	dir := t.TempDir()
	files := session.GenerateSessions(t, 7, 300, dir)
	blobs := session.NewBlobStore(dir + "/blobs")
	plain := map[string]bool{"hello": true, "Run the tests": true, "naïve café": true}
	checked := 0
	for _, f := range files {
		s, err := session.Open(f, &session.OpenOptions{Blobs: blobs})
		if err != nil {
			continue // both omp and xdev refuse it: nothing to export
		}
		ctx := s.BuildContext()
		x, err := session.OpenIndex(f, &session.OpenOptions{Blobs: blobs})
		if err != nil {
			t.Fatalf("%s: the context opens, the index does not: %v", f, err)
		}
		var md, html bytes.Buffer
		if err := export.Markdown(&md, x, nil); err != nil {
			t.Errorf("%s: markdown: %v", f, err)
		}
		if err := export.HTML(&html, x, nil); err != nil {
			t.Errorf("%s: html: %v", f, err)
		}
		x.Close()
		for _, m := range ctx.Messages {
			if m.Role != "user" && m.Role != "assistant" {
				continue
			}
			text := m.Text()
			if !plain[text] {
				continue
			}
			checked++
			if !strings.Contains(md.String(), text) || !strings.Contains(html.String(), text) {
				t.Errorf("%s: the model is sent %q (%s), the export does not show it", f, text, m.Role)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no message checked")
	}
	t.Logf("%d files, %d context messages found in both exports", len(files), checked)
}
