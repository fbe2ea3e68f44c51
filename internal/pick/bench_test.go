package pick

import (
	"fmt"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/catalog"
)

// BenchmarkKeystroke is what a key typed costs the picker at 25,000
// sessions: the list filtered again (every item's texts looked at, once
// lower-cased where they are not ASCII) and the frame drawn. Run it with
//
//	go test -run '^$' -bench Keystroke ./internal/pick
//
// docs/performance.md has the figures.
func BenchmarkKeystroke(b *testing.B) {
	words := strings.Fields("refactor the parser lock window größe 日本語 session store test fix flaky resume harness picker")
	rs := rows(25000, func(k int) string {
		return fmt.Sprintf("%s %s %s %d", strings.ToUpper(words[k%len(words)][:1])+words[k%len(words)][1:], words[(k/3)%len(words)], words[(k/7)%len(words)], k)
	})
	for k := range rs {
		rs[k].FirstMessage = strings.Repeat(words[(k/5)%len(words)]+" and then ", 12)
	}
	for _, query := range []string{"r", "re", "ref", "refactor", "refactor pars", "rfctr", "größe", "zzzz"} {
		b.Run(query, func(b *testing.B) {
			m := New(Options{Rows: rs, Now: nowFunc})
			defer m.Close()
			m.Update(keyPress("x")) // the first query lower-cases what is not ASCII
			m.Update(keyPress("backspace"))
			b.ResetTimer()
			for range b.N {
				m.query = []rune(query[:len(query)-1])
				m.Update(keyPress(query[len(query)-1:]))
				m.Frame()
			}
			b.ReportMetric(float64(len(m.view)), "shown")
		})
	}
	_ = catalog.Row{}
}
