package session

import (
	"bytes"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/xdev/xdev/internal/jsonx"
)

// Status is how a session's last turn ended, read from the end of its
// file as omp 18.2.3's session picker reads it (session-listing.ts,
// deriveSessionStatus): the last message entry in the file's last
// TailBytes decides.
type Status string

const (
	// StatusComplete: the last assistant turn ended without unanswered tool
	// calls; the agent gave control back.
	StatusComplete Status = "complete"
	// StatusInterrupted: cut off mid-flight: a last assistant turn with tool
	// calls and no results, a tool result never continued from, or a turn
	// that hit the length limit.
	StatusInterrupted Status = "interrupted"
	// StatusAborted: the user cancelled the last turn.
	StatusAborted Status = "aborted"
	// StatusError: the last turn ended in an error.
	StatusError Status = "error"
	// StatusPending: a user message with no reply after it.
	StatusPending Status = "pending"
	// StatusUnknown: no message in the tail (an empty session, or a last
	// message larger than TailBytes).
	StatusUnknown Status = "unknown"
)

// TailBytes is how much of the end of a file List reads for its Status.
const TailBytes = 32 << 10

// tailStatus derives the Status from the last TailBytes of a file. Like
// omp, it walks the lines from the end, skips those that do not start
// with '{' or are not JSON (the window's first line is usually a
// fragment), and classifies the first entry whose type is "message" and
// whose message is truthy in JavaScript's sense.
// tailFacts are what a listing reads in a session's last TailBytes: its
// status, and the name pi gave it (the last session_info entry's name),
// the title of a session with no other.
type tailFacts struct {
	status Status
	name   string
}

func readTail(tail []byte) tailFacts {
	return tailFacts{tailStatus(tail), tailName(tail)}
}

// tailName is the name of the last session_info entry in tail, pi's
// record of a session named with /name (omp writes none), or "".
func tailName(tail []byte) string {
	// Most tails hold none: bytes.Contains is the fast scan, LastIndex
	// (which walks byte by byte) only runs where there is one.
	if !bytes.Contains(tail, []byte(`"session_info"`)) {
		return ""
	}
	for len(tail) > 0 {
		i := bytes.LastIndex(tail, []byte(`"session_info"`))
		if i < 0 {
			return ""
		}
		start := bytes.LastIndexByte(tail[:i], '\n') + 1
		end := len(tail)
		if j := bytes.IndexByte(tail[i:], '\n'); j >= 0 {
			end = i + j
		}
		var e struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}
		if json.Unmarshal(tail[start:end], &e, jsonx.DecodeOptions) == nil && e.Type == "session_info" && e.Name != "" {
			return e.Name
		}
		tail = tail[:start]
	}
	return ""
}

func tailStatus(tail []byte) Status {
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
		if stringValue(e.Type) != "message" || !truthy(e.Message) {
			continue
		}
		return messageStatus(e.Message)
	}
	return StatusUnknown
}

// messageStatus is omp's statusFromTailMessage.
func messageStatus(raw jsontext.Value) Status {
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
	switch stringValue(m.Role) {
	case "assistant":
		switch stringValue(m.StopReason) {
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
				if json.Unmarshal(b, &blk, jsonx.DecodeOptions) == nil && stringValue(blk.Type) == "toolCall" {
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
func stringValue(v jsontext.Value) string {
	var s string
	if v.Kind() != '"' || json.Unmarshal(v, &s, jsonx.DecodeOptions) != nil {
		return ""
	}
	return s
}

// truthy reports whether a JSON value is truthy in JavaScript: anything
// but null, false, 0, and "". An absent value is not.
func truthy(v jsontext.Value) bool {
	switch v.Kind() {
	case 0, 'n', 'f':
		return false
	case '"':
		return len(v) > 2
	case '0':
		f, err := strconv.ParseFloat(string(v), 64)
		return err != nil || f != 0
	}
	return true
}
