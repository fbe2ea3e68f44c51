package session

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/valyala/fastjson"
)

// scanHeadEntriesReference is scanHeadEntries as it was written with
// fastjson, before it read lines with jsonx (JSON.parse's reading: the
// last of duplicate names, no line that is not JSON). On lines that are
// JSON without duplicate names the two must agree.
func scanHeadEntriesReference(buf []byte) (firstMessage, shortSummary string) {
	var p fastjson.Parser
	found := false
	for {
		line, rest, complete := bytes.Cut(buf, []byte{'\n'})
		if !complete {
			return firstMessage, shortSummary
		}
		buf = rest
		isUser := !found && bytes.Contains(line, []byte(`"user"`))
		isSummary := bytes.Contains(line, []byte(`"shortSummary"`))
		if !isUser && !isSummary {
			continue
		}
		v, err := p.ParseBytes(line)
		if err != nil {
			continue
		}
		switch string(v.GetStringBytes("type")) {
		case TypeCompaction:
			if !isSummary || !isStrictJSON(line) {
				continue // JSON.parse would not have read it
			}
			if s := v.Get("shortSummary"); s != nil && s.Type() == fastjson.TypeString {
				shortSummary = string(s.GetStringBytes())
			}
		case TypeMessage:
			if !isUser || string(v.GetStringBytes("message", "role")) != "user" {
				continue
			}
			found = true
			c := v.Get("message", "content")
			switch {
			case c == nil:
			case c.Type() == fastjson.TypeString:
				firstMessage = string(c.GetStringBytes())
			case c.Type() == fastjson.TypeArray:
				for _, b := range c.GetArray() {
					if string(b.GetStringBytes("type")) == "text" {
						firstMessage = string(b.GetStringBytes("text"))
						break
					}
				}
			}
			if len(firstMessage) > 200 {
				// Cut where a word ends: the words that end within the
				// first 200 bytes, the last split one left out.
				words := strings.FieldsFunc(firstMessage, func(r rune) bool { return strings.ContainsRune(" \t\r\n", r) })
				n := 0
				for _, w := range words {
					at := strings.Index(firstMessage[n:], w) + n
					if at+len(w) > 200 {
						break
					}
					n = at + len(w)
				}
				firstMessage = strings.ToValidUTF8(firstMessage[:n], "")
			}
		}
	}
}

// TestScanHeadMatchesReference: on every session file under testdata and
// the differential tester's generated files, each head cut at every
// line, scanHeadEntries finds the first message and short summary the
// fastjson reading found, wherever no line holds a duplicate name or
// fails to parse, and the text is UTF-8.
func TestScanHeadMatchesReference(t *testing.T) {
	var files [][]byte
	filepath.WalkDir("testdata", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".jsonl") {
			if b, err := os.ReadFile(path); err == nil {
				files = append(files, b)
			}
		}
		return nil
	})
	g := newSessionGen(11, filepath.Join(t.TempDir(), "blobs"))
	for i := range 3000 {
		c := g.file("h" + strings.Repeat("x", i%3))
		files = append(files, c.bytes())
	}
	n := 0
	for _, b := range files {
		b = b[:min(len(b), HeadBytes)]
		lines := bytes.SplitAfter(b, []byte("\n"))
		clean := true
		for _, l := range lines {
			if !bytes.HasSuffix(l, []byte("\n")) {
				continue
			}
			// jsontext's default reading refuses duplicate names too.
			if l := bytes.TrimSuffix(l, []byte("\n")); !isStrictJSON(l) || !jsontext.Value(l).IsValid() {
				clean = false
			}
		}
		// Invalid UTF-8 and lone surrogates are differences on purpose:
		// fastjson kept the bytes, and a lone surrogate's escape as
		// written; JSON.parse (over text decoded as UTF-8) reads U+FFFD
		// and the surrogate, which the listing shows as U+FFFD.
		if !clean || !utf8.Valid(b) || loneSurrogate.Match(b) {
			continue
		}
		for k := range lines {
			head := bytes.Join(lines[:k+1], nil)
			gm, gs := scanHeadEntries(head)
			wm, ws := scanHeadEntriesReference(head)
			n++
			if gm != wm || gs != ws {
				t.Fatalf("head of %d lines:\n%s\ngives %q, %q; the fastjson reading %q, %q", k+1, head, gm, gs, wm, ws)
			}
		}
	}
	if n < 500 {
		t.Fatalf("only %d heads compared", n)
	}
	t.Logf("%d heads", n)
}

var _ = fastjson.Parser{}

var loneSurrogate = regexp.MustCompile(`(?i)\\ud[89a-f]`)
