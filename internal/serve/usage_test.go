package serve

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/xdev/xdev/internal/usage"
)

// TestOwnStringsKeepsNoneOfTheBody: a usage view outlives the cache body
// its ledger's strings are substrings of, so what it keeps of a report
// must be copies (equal, and of none of the body's bytes).
func TestOwnStringsKeepsNoneOfTheBody(t *testing.T) {
	body := strings.Repeat("-", 4096) + "/work/proj claude-sonnet-4-5 xdev 2026-12-02"
	f := strings.Fields(body[4096:])
	row := usage.Row{Key: f[0], Models: []usage.ModelRow{{Model: f[1]}}, Harnesses: []string{f[2]}, Session: &usage.Session{}}
	r := usage.Report{View: usage.ByProject, Rows: []usage.Row{row, {Key: f[3]}}, Total: row}
	got := ownStrings{}.report(r)
	lo := uintptr(unsafe.Pointer(unsafe.StringData(body)))
	hi := lo + uintptr(len(body))
	check := func(what, s, want string) {
		t.Helper()
		if s != want {
			t.Errorf("%s is %q, want %q", what, s, want)
		}
		if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); p >= lo && p < hi {
			t.Errorf("%s %q is kept as a substring of the body", what, s)
		}
	}
	for _, x := range []usage.Row{got.Rows[0], got.Total} {
		check("key", x.Key, f[0])
		check("model", x.Models[0].Model, f[1])
		check("harness", x.Harnesses[0], f[2])
		if x.Session != nil {
			t.Error("a row keeps its session")
		}
	}
	check("key", got.Rows[1].Key, f[3])
	if r.Rows[0].Models[0].Model != f[1] || r.Rows[0].Session == nil {
		t.Error("the report given was changed")
	}
}
