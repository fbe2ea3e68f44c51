package searchtext

import (
	"math"

	"github.com/xdev/xdev/internal/ai"

	"github.com/xdev/xdev/internal/jsonx"
)

// OfTruncated reads what it can of an entry cut short: the first
// session.TruncatedBytes of a line over the index's line bound. The JSON
// is incomplete, so it is scanned, not parsed: the top level's type, id
// and parentId, the role, and every string value as text (those named
// "thinking" as thinking), but the members that are not prose (ids,
// signatures, image data, names of models and APIs).
func OfTruncated(b []byte) (typ, id, parent string, d Doc) {
	var text, thinking []byte
	depth := 0
	key := ""
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '{', '[':
			depth++
			key = ""
		case '}', ']':
			depth--
		case '"':
			end := stringEnd(b, i)
			var str string
			if end < 0 {
				// The cut is inside this string (a long output, as a
				// rule): its start is the value.
				str, end = partialString(b[i:]), len(b)
			} else {
				s, _ := jsonx.Parse(b[i : end+1])
				str, _ = s.Text()
			}
			j := end + 1
			for j < len(b) && (b[j] == ' ' || b[j] == '\t') {
				j++
			}
			if j < len(b) && b[j] == ':' {
				key = str
				i = end
				continue
			}
			switch {
			case depth == 1 && key == "type":
				typ = str
			case depth == 1 && key == "id":
				id = str
			case depth == 1 && key == "parentId":
				parent = str
			case depth == 1 && key == "timestamp":
				if ms := jsonx.ParseDate(str); !math.IsNaN(ms) {
					d.TS = int64(ms)
				}
			case key == "role":
				d.Role = roleOf(ai.Role(str))
			case key == "thinking":
				thinking = appendLine(thinking, str)
			case !notProse[key]:
				text = appendLine(text, str)
			}
			i = end
		}
	}
	d.Text, d.Thinking = CapText(string(text)), CapText(string(thinking))
	if d.Role == "" && d.Text+d.Thinking != "" {
		d.Role = RoleCustom
	}
	return
}

// notProse are the members whose string values are not worth searching.
var notProse = map[string]bool{"type": true, "id": true, "parentId": true, "timestamp": true, "role": true,
	"toolCallId": true, "thinkingSignature": true, "signature": true, "data": true, "mimeType": true,
	"api": true, "provider": true, "model": true, "stopReason": true, "customType": true}

// partialString decodes a JSON string cut short (b opens with its quote),
// dropping an escape the cut split.
func partialString(b []byte) string {
	for cut := 0; cut <= 6 && cut < len(b); cut++ {
		s := append(b[:len(b)-cut:len(b)-cut], '"')
		if v, err := jsonx.Parse(s); err == nil {
			str, _ := v.Text()
			return str
		}
	}
	return ""
}

// stringEnd returns the index of the quote closing the JSON string that
// opens at b[i], or -1 if b ends first.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return -1
}

func appendLine(b []byte, s string) []byte {
	if s == "" || len(b) > MaxDocBytes {
		return b
	}
	if len(b) > 0 {
		b = append(b, '\n')
	}
	return append(b, s...)
}
