package session

import (
	"bytes"
	"strconv"

	"github.com/go-json-experiment/json"
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

// readTail reads them from the tail of the session whose head is h. The
// name is looked for only when the head gives no title, which it would
// not override.
func readTail(h head, tail []byte) tailFacts {
	facts := tailFacts{status: tailStatus(tail)}
	if t, _ := h.title(); t == "" {
		facts.name = tailName(tail)
	}
	return facts
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
		// One pass over the line (jsonx.Members checks it as JSON.parse
		// would, junk after the object included); nothing is decoded but
		// the few members asked of.
		var typ, msg []byte
		end, err := jsonx.Members(line, func(k, x []byte) {
			switch string(k) {
			case "type":
				typ = x
			case "message":
				msg = x
			}
		})
		if err != nil || !jsonSpace(line[end:]) {
			continue
		}
		if !small(typ).Is("message") || !truthy(msg) {
			continue
		}
		return messageStatus(msg)
	}
	return StatusUnknown
}

// messageStatus is omp's statusFromTailMessage, of a message's bytes.
func messageStatus(raw []byte) Status {
	if len(raw) == 0 || raw[0] != '{' {
		return StatusUnknown
	}
	var role, stopReason, content []byte
	jsonx.Members(raw, func(k, x []byte) {
		switch string(k) {
		case "role":
			role = x
		case "stopReason":
			stopReason = x
		case "content":
			content = x
		}
	})
	switch r := small(role); {
	case r.Is("assistant"):
		switch sr := small(stopReason); {
		case sr.Is("error"):
			return StatusError
		case sr.Is("aborted"):
			return StatusAborted
		case sr.Is("length"):
			return StatusInterrupted
		}
		toolCall := false
		if len(content) > 0 && content[0] == '[' {
			jsonx.Elements(content, func(b []byte) {
				if !toolCall && len(b) > 0 && b[0] == '{' && small(memberOf(b, "type")).Is("toolCall") {
					toolCall = true
				}
			})
		}
		if toolCall {
			return StatusInterrupted
		}
		return StatusComplete
	case r.Is("toolResult"):
		return StatusInterrupted
	case r.Is("user"):
		return StatusPending
	}
	return StatusUnknown
}

// truthy reports whether a JSON value is truthy in JavaScript: anything
// but null, false, 0, and "". An absent value is not.
// v is a value's bytes as jsonx.Members gives them (checked, trimmed).
func truthy(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	switch c := v[0]; {
	case c == 'n' || c == 'f':
		return false
	case c == '"':
		return len(v) > 2
	case c == '-' || '0' <= c && c <= '9':
		f, err := strconv.ParseFloat(string(v), 64)
		return err != nil || f != 0
	}
	return true
}
