package session

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"

	"github.com/go-json-experiment/json"

	"github.com/xdev/xdev/internal/jsonx"
)

// TitleSlotWidth is the exact size of line 1, newline included. omp
// rewrites the slot in place by writing this many bytes at offset 0, so any
// other width would corrupt the header that follows.
const TitleSlotWidth = 256

// CurrentVersion is the format version xdev writes.
const CurrentVersion = 3

// TitleSource says where a session's title came from.
type TitleSource int

const (
	TitleNone     TitleSource = iota // no title yet; the slot has no "source"
	TitleAuto                        // generated; "auto" on disk
	TitleManual                      // chosen by a person; "user" on disk
	TitleSubagent                    // a subagent transcript; never written in a slot
)

// String returns the API name of the source.
func (s TitleSource) String() string {
	switch s {
	case TitleAuto:
		return "auto"
	case TitleManual:
		return "manual"
	case TitleSubagent:
		return "subagent"
	}
	return ""
}

// wire returns the value omp accepts on disk, or "" when the key is omitted.
func (s TitleSource) wire() string {
	switch s {
	case TitleAuto:
		return "auto"
	case TitleManual:
		return "user"
	}
	return ""
}

// ParseTitleSource reads a source as found in a slot, a header or a
// title_change entry. It accepts omp's "auto" and "user" and the design's
// "manual" and "subagent".
func ParseTitleSource(s string) (TitleSource, bool) {
	switch s {
	case "":
		return TitleNone, true
	case "auto":
		return TitleAuto, true
	case "user", "manual":
		return TitleManual, true
	case "subagent":
		return TitleSubagent, true
	}
	return TitleNone, false
}

// TitleSlot is the decoded line 1 of a session file.
type TitleSlot struct {
	Title     string
	Source    TitleSource
	UpdatedAt string
	// OmpAccepts reports whether omp 18.2.3 would accept the line as a slot.
	// A slot xdev reads but omp rejects (source "manual" or "subagent", no
	// pad) makes omp refuse to resume the file.
	OmpAccepts bool
}

// titleSlotWire is the slot in omp's field order.
type titleSlotWire struct {
	Type      string `json:"type"`
	V         int    `json:"v"`
	Title     string `json:"title"`
	Source    string `json:"source,omitempty"`
	UpdatedAt string `json:"updatedAt"`
	Pad       string `json:"pad"`
}

// MarshalTitleSlot returns line 1 for the given title: exactly
// TitleSlotWidth bytes including the newline, padded with spaces. A title too
// long to fit is shortened one rune at a time (measured on its escaped UTF-8
// form) until the line fits. TitleSubagent is written without a source, as
// omp writes subagent slots.
func MarshalTitleSlot(title string, source TitleSource, updatedAt string) ([]byte, error) {
	w := titleSlotWire{Type: "title", V: 1, Source: source.wire(), UpdatedAt: updatedAt}
	runes := []rune(strings.ToValidUTF8(title, "\uFFFD"))
	fits := func(n int) ([]byte, bool) {
		w.Title = string(runes[:n])
		w.Pad = ""
		line, err := json.Marshal(w)
		return line, err == nil && len(line)+1 <= TitleSlotWidth
	}
	// The longest prefix that fits: binary search, as the line grows with n.
	lo, hi := 0, len(runes)
	if _, ok := fits(0); !ok {
		return nil, fmt.Errorf("title slot: updatedAt %q leaves no room for a title", updatedAt)
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if _, ok := fits(mid); ok {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	line, _ := fits(lo)
	w.Pad = strings.Repeat(" ", TitleSlotWidth-1-len(line))
	out, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	out = append(out, '\n')
	if len(out) != TitleSlotWidth {
		return nil, fmt.Errorf("title slot: encoded %d bytes, want %d", len(out), TitleSlotWidth)
	}
	return out, nil
}

// ParseTitleSlotSource decodes line 1 (with or without its newline) as a
// title slot. It returns ok=false when the line is not a slot at all (a
// header, an entry, garbage): the slot is optional, and a file without one
// still loads.
//
// Any JSON object with "type":"title" and a string title is read as a slot,
// also one omp refuses (a source other than auto or user, a null source, a
// "v" other than 1, no pad or updatedAt): omp then fails to resume the file,
// but the slot is only a cached title, so xdev reads the session and says
// so through OmpAccepts, which verify reports. A source xdev does not know
// reads as TitleNone. Text is decoded as omp's TextDecoder decodes the file.
func ParseTitleSlotSource(line []byte) (slot TitleSlot, ok bool) {
	line = bytes.TrimRight(line, "\r\n")
	v, err := jsonx.Parse(line)
	if err != nil || !v.Get("type").Is("title") {
		return TitleSlot{}, false
	}
	title, ok := v.Get("title").Text()
	if !ok {
		return TitleSlot{}, false
	}
	slot.Title = title
	slot.UpdatedAt, _ = v.Get("updatedAt").Text()
	_, hasUpdated := v.Get("updatedAt").Text()
	_, hasPad := v.Get("pad").Text()
	v1, _ := v.Get("v").Float()
	srcOK := true
	if src := v.Get("source"); src.Defined() {
		s, _ := src.Text()
		slot.Source, _ = ParseTitleSource(s)
		srcOK = src.Is("auto") || src.Is("user")
	}
	slot.OmpAccepts = srcOK && v.Get("v").Kind() == jsonx.Number && v1 == 1 && hasUpdated && hasPad
	return slot, true
}

// CleanTitle normalizes a title the way omp does before storing it: control
// characters become spaces, runs of spaces collapse, the ends are trimmed.
func CleanTitle(title string) string {
	title = strings.ToValidUTF8(title, "\uFFFD")
	var sb strings.Builder
	space := false
	for _, r := range title {
		if unicode.IsControl(r) || r == ' ' {
			space = true
			continue
		}
		if space && sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		space = false
		sb.WriteRune(r)
	}
	return sb.String()
}

// encodeHeader encodes a header xdev creates: omp's key order, always
// "version":3, no null values.
func encodeHeader(h Header) ([]byte, error) {
	h.Type = "session"
	h.Version = CurrentVersion
	return json.Marshal(h)
}

// MarshalHeader encodes a header line (without newline) the way xdev
// writes new sessions: omp's key order, "version":3.
func MarshalHeader(h Header) ([]byte, error) { return encodeHeader(h) }
