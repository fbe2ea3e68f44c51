package secrets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/realfixtures"
)

// fixtureText is every real fixture's bytes, as one text.
func fixtureText(tb testing.TB) string {
	tb.Helper()
	root := realfixtures.Dir(tb)
	var b strings.Builder
	filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() || strings.HasSuffix(p, ".db") || strings.HasSuffix(p, ".gz") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err == nil {
			b.Write(data)
			b.WriteByte('\n')
		}
		return nil
	})
	return b.String()
}

// BenchmarkFind reads every real fixture's text; its MB/s is what masking
// costs a byte shown.
func BenchmarkFind(b *testing.B) {
	text := fixtureText(b)
	d := Default()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		d.Find(text)
	}
}

// BenchmarkKeywords is the keyword pass alone: the floor of what masking
// costs a byte shown.
func BenchmarkKeywords(b *testing.B) {
	text := fixtureText(b)
	d := Default()
	b.SetBytes(int64(len(text)))
	n := 0
	for b.Loop() {
		d.words.each(text, func(int, int) { n++ })
	}
}

// BenchmarkDefault makes the default detector, as the first masked text
// of every command does: the rule set read, the keyword tables made
// (each rule's expression is compiled later, when a text holds one of
// its keywords).
func BenchmarkDefault(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		New(loadRules())
	}
}
