package session

import (
	"strings"
	"testing"
)

// TestCutFirstMessage: a first message over 200 bytes is cut where a
// word ends, so that no start of a key the cut splits is kept.
func TestCutFirstMessage(t *testing.T) {
	key := "hvs." + strings.Repeat("k", 100)
	for _, tc := range []struct{ in, want string }{
		{"short", "short"},
		{strings.Repeat("a ", 90) + "use " + key, strings.TrimSpace(strings.Repeat("a ", 90)) + " use"},
		{strings.Repeat("b ", 100) + "tail", strings.TrimSpace(strings.Repeat("b ", 100))},
		{strings.Repeat("c", 250), ""},
		{strings.Repeat("é ", 70) + key, strings.TrimSpace(strings.Repeat("é ", 67))},
	} {
		got := cutFirstMessage(tc.in)
		if got != tc.want || len(got) > firstMessageBytes || strings.Contains(got, "hvs.") {
			t.Errorf("cutFirstMessage(%.30q…) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
