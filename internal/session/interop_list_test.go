package session

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInteropListing compares List with omp's session picker
// (SessionManager.listAll) on generated sessions: the title it shows (the
// stored one, else the last compaction's shortSummary in the file's first
// 4 KiB) and the status it reads from the last 32 KiB (the last message
// entry: complete, interrupted, aborted, error, pending, unknown). The
// files vary what decides both: slots with and without titles, titles of
// spaces, compactions with and without shortSummary inside and beyond the
// head, last messages of every role and stop reason, tool calls, entries
// and malformed lines after the last message, messages that are null or
// not objects, and a last message larger than the tail window.
func TestInteropListing(t *testing.T) {
	requireOmp(t)
	agent := t.TempDir()
	if d := os.Getenv("XDEV_KEEP_LISTING"); d != "" {
		agent = d
	}
	dir := filepath.Join(SessionsDir(agent), "-proj")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 8))
	const n = 150
	for i := range n {
		writeListingCase(t, filepath.Join(dir, fmt.Sprintf("case-%03d.jsonl", i)), r)
	}
	var omp []struct{ Path, ID, Title, Status string }
	if err := json.Unmarshal(runOmp(t, agent, "list.ts"), &omp); err != nil {
		t.Fatal(err)
	}
	infos, err := List(agent, &ListOptions{Status: true})
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]SessionInfo{}
	for _, i := range infos {
		byPath[i.Path] = i
	}
	listed := map[string]bool{}
	for _, o := range omp {
		listed[o.Path] = true
	}
	for _, x := range infos {
		if !listed[x.Path] {
			t.Errorf("%s: xdev lists it (%v), omp does not", filepath.Base(x.Path), x.Err)
		}
	}
	statuses := map[string]int{}
	for _, o := range omp {
		x, ok := byPath[o.Path]
		switch {
		case !ok || x.Err != nil:
			t.Errorf("%s: omp lists it, xdev does not (%v)", filepath.Base(o.Path), x.Err)
		case x.ListTitle() != o.Title || string(x.Status) != o.Status:
			t.Errorf("%s: omp shows %q, %s; xdev %q, %s", filepath.Base(o.Path), o.Title, o.Status, x.ListTitle(), x.Status)
		}
		statuses[o.Status]++
	}
	if len(statuses) < 6 {
		t.Errorf("the cases reach only the statuses %v", statuses)
	}
	t.Logf("%d sessions listed alike; statuses %v", len(omp), statuses)
}

// writeListingCase writes one generated session for TestInteropListing.
func writeListingCase(t *testing.T, path string, r *rand.Rand) {
	t.Helper()
	var b strings.Builder
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	title := pick("", "", "A title", "   ", "Überschrift 漢字")
	if r.IntN(4) > 0 {
		slot, err := MarshalTitleSlot(title, TitleAuto, "2026-11-01T10:00:00.000Z")
		if err != nil {
			t.Fatal(err)
		}
		b.Write(slot)
	}
	hdr := fmt.Sprintf(`{"type":"session","version":3,"id":"%s","timestamp":"2026-11-01T10:00:00.000Z","cwd":"/proj"`, filepath.Base(path))
	if r.IntN(3) == 0 {
		hdr += `,"title":"Header title"`
	}
	b.WriteString(hdr + "}\n")
	id := 0
	next := func() string { id++; return fmt.Sprintf("%08x", id) }
	parent := "null"
	line := func(typ, body string) {
		cur := next()
		fmt.Fprintf(&b, `{"type":"%s","id":"%s","parentId":%s,"timestamp":"2026-11-01T10:00:00.000Z"%s}`+"\n", typ, cur, parent, body)
		parent = `"` + cur + `"`
	}
	msg := func(m string) { line("message", `,"message":`+m) }
	compaction := func() {
		short := pick(`,"shortSummary":"Short one"`, `,"shortSummary":""`, "", `,"shortSummary":7`, `,"shortSummary":"Geography"`)
		line("compaction", `,"summary":"S","firstKeptEntryId":`+parent+short+`,"tokensBefore":10`)
	}
	msg(`{"role":"user","content":"hello","timestamp":1}`)
	if r.IntN(2) == 0 {
		compaction()
	}
	for range r.IntN(30) {
		msg(`{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("words ", r.IntN(400)) + `"}],"stopReason":"stop","timestamp":2}`)
		if r.IntN(5) == 0 {
			compaction()
		}
	}
	last := []string{
		`{"role":"assistant","content":[{"type":"text","text":"done"}],"stopReason":"stop","timestamp":3}`,
		`{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"bash","arguments":{}}],"stopReason":"toolUse","timestamp":3}`,
		`{"role":"assistant","content":[],"stopReason":"aborted","timestamp":3}`,
		`{"role":"assistant","content":[],"stopReason":"error","timestamp":3}`,
		`{"role":"assistant","content":"text","stopReason":"length","timestamp":3}`,
		`{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[],"timestamp":3}`,
		`{"role":"user","content":"are you there?","timestamp":3}`,
		`{"role":"custom","customType":"x","content":"c","timestamp":3}`,
		`{"content":"no role","timestamp":3}`,
		`null`, `0`, `""`, `"text"`, `[1]`,
		`{"role":"assistant","stopReason":7,"content":[{"type":"toolCall"}],"timestamp":3}`,
		`{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("x", 40000) + `"}],"stopReason":"stop","timestamp":3}`,
	}
	msg(pick(last...))
	for range r.IntN(4) {
		switch r.IntN(4) {
		case 0:
			line("custom", `,"customType":"session_exit","data":{}`)
		case 1:
			b.WriteString("not json at all\n")
		case 2:
			line("label", `,"targetId":"00000001","label":"x"`)
		case 3:
			b.WriteString(`  {"type":"message","message":{"role":"user","content":"indented"}}` + "\n")
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}
