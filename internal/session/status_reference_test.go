package session

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/xdev/xdev/internal/jsonx"
)

// tailStatusReference is tailStatus as it was before it read lines with
// jsonx.Members: each line unmarshaled whole by encoding/json v2, as
// JSON.parse reads it. FuzzTailStatus holds the two to one answer.
func tailStatusReference(tail []byte) Status {
	for len(tail) > 0 {
		line := tail
		if i := bytes.LastIndexByte(tail, '\n'); i >= 0 {
			line, tail = tail[i+1:], tail[:i]
		} else {
			tail = nil
		}
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var e struct {
			Type    jsontext.Value `json:"type"`
			Message jsontext.Value `json:"message"`
		}
		if json.Unmarshal(line, &e, jsonx.DecodeOptions) != nil {
			continue
		}
		if stringValueReference(e.Type) != "message" || !truthy([]byte(e.Message)) {
			continue
		}
		return messageStatusReference(e.Message)
	}
	return StatusUnknown
}

// messageStatus is omp's statusFromTailMessage.
func messageStatusReference(raw jsontext.Value) Status {
	if raw.Kind() != '{' {
		return StatusUnknown
	}
	var m struct {
		Role       jsontext.Value `json:"role"`
		StopReason jsontext.Value `json:"stopReason"`
		Content    jsontext.Value `json:"content"`
	}
	if json.Unmarshal(raw, &m, jsonx.DecodeOptions) != nil {
		return StatusUnknown
	}
	switch stringValueReference(m.Role) {
	case "assistant":
		switch stringValueReference(m.StopReason) {
		case "error":
			return StatusError
		case "aborted":
			return StatusAborted
		case "length":
			return StatusInterrupted
		}
		if m.Content.Kind() == '[' {
			var blocks []jsontext.Value
			json.Unmarshal(m.Content, &blocks, jsonx.DecodeOptions)
			for _, b := range blocks {
				if b.Kind() != '{' {
					continue
				}
				var blk struct {
					Type jsontext.Value `json:"type"`
				}
				if json.Unmarshal(b, &blk, jsonx.DecodeOptions) == nil && stringValueReference(blk.Type) == "toolCall" {
					return StatusInterrupted
				}
			}
		}
		return StatusComplete
	case "toolResult":
		return StatusInterrupted
	case "user":
		return StatusPending
	}
	return StatusUnknown
}

// stringValue returns a JSON string's value, or "" for anything else, which
// no comparison with a non-empty string then matches (as === would not).
func stringValueReference(v jsontext.Value) string {
	var s string
	if v.Kind() != '"' || json.Unmarshal(v, &s, jsonx.DecodeOptions) != nil {
		return ""
	}
	return s
}

// TestTailStatusMatchesReference: every session file under testdata (omp's
// own files, the goldens, the fuzz seeds' shapes), its tail cut at every
// 7th byte and with every line's byte flipped in turn, gives the status
// the reference gives.
func TestTailStatusMatchesReference(t *testing.T) {
	n := 0
	filepath.WalkDir("testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b = b[max(0, len(b)-TailBytes):]
		check := func(tail []byte) {
			n++
			if got, want := tailStatus(tail), tailStatusReference(tail); got != want {
				t.Fatalf("%s: tail of %d bytes: %q, the reference says %q", path, len(tail), got, want)
			}
		}
		for i := 0; i < len(b); i += 7 {
			check(b[i:])
		}
		for i := len(b) - 1; i >= 0 && i > len(b)-4096; i -= 3 {
			c := append([]byte(nil), b...)
			c[i] ^= 0x22
			check(c)
		}
		return nil
	})
	if n == 0 {
		t.Fatal("no session files under testdata")
	}
	t.Logf("%d tails", n)
}
