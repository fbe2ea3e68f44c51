package session

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/xdev/xdev/internal/jsonx"
)

// CurrentVersion is the format version xdev writes.
const CurrentVersion = 3

// Header is line 2 of a session file (line 1 when there is no slot).
type Header struct {
	Type          string `json:"type"`
	Version       int    `json:"version,omitzero"`
	ID            string `json:"id"`
	Timestamp     string `json:"timestamp"`
	Cwd           string `json:"cwd"`
	ParentSession string `json:"parentSession,omitempty"`
	Title         string `json:"title,omitempty"`
	TitleSource   string `json:"titleSource,omitempty"`

	raw []byte // the line as read; unknown fields live here
	// version is the header's "version" as omp compares it: JavaScript's
	// Number() of the value, 1 when it is missing or null.
	version float64
}

// Raw returns the header line as read from disk (without newline), or nil.
func (h Header) Raw() []byte { return h.raw }

// FormatVersion returns the format version omp reads the file as: 1 and 2
// for the old formats it migrates, 3 or more otherwise. The header's value
// is compared as omp compares it (version < 2, version < 3), so "3" and 3.0
// are 3, and a value that is not a number at all is migrated by neither
// step: it reads as 3.
func (h *Header) FormatVersion() int {
	v := h.version
	if h.raw == nil && v == 0 { // built in Go
		v = float64(h.Version)
		if v == 0 {
			v = 1
		}
	}
	switch {
	case math.IsNaN(v):
		return CurrentVersion
	case v < 2:
		return 1
	case v < 3:
		return 2
	case v > 1<<30:
		return 1 << 30
	}
	return int(v)
}

var errNotHeader = errors.New("not a session header")

// parseHeader decodes a header line. Like omp, it requires "type":"session"
// and a string id (the empty string will do); everything else is optional
// and read as JavaScript reads it.
func parseHeader(line []byte) (Header, error) {
	v, err := jsonx.Parse(line)
	if err != nil {
		return Header{}, fmt.Errorf("%w: %v", errNotHeader, err)
	}
	return headerFromValue(v, line)
}

func headerFromValue(v jsonx.Value, line []byte) (Header, error) {
	if t := v.Get("type"); !t.Is("session") {
		return Header{}, fmt.Errorf("%w: type is %s", errNotHeader, t.JSON())
	}
	if _, ok := v.Get("id").Text(); !ok {
		return Header{}, fmt.Errorf("%w: no string id", errNotHeader)
	}
	var h Header
	jsonx.Decode(v, &h)
	h.version = jsNumber(v.Get("version"))
	h.raw = bytes.Clone(line)
	return h, nil
}

// jsNumber converts a header version as `(version ?? 1) < n` does.
func jsNumber(v jsonx.Value) float64 {
	switch v.Kind() {
	case jsonx.Undefined, jsonx.Null:
		return 1
	case jsonx.Number:
		f, _ := v.Float()
		return f
	case jsonx.Bool:
		if b, _ := v.Boolean(); b {
			return 1
		}
		return 0
	case jsonx.String:
		return stringToNumber(v.String())
	case jsonx.Array:
		switch items := v.Items(); len(items) {
		case 0:
			return 0
		case 1:
			return stringToNumber(items[0].ToString())
		}
	}
	return math.NaN()
}

// stringToNumber is JavaScript's Number(string) for the forms a version
// field can plausibly hold: decimal, with surrounding white space, or hex.
func stringToNumber(s string) float64 {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0
	}
	if rest, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		if n, err := strconv.ParseUint(rest, 16, 64); err == nil {
			return float64(n)
		}
		return math.NaN()
	}
	switch s {
	case "Infinity", "+Infinity":
		return math.Inf(1)
	case "-Infinity":
		return math.Inf(-1)
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
			return math.NaN()
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

// encodeHeader encodes a header xdev creates: omp's key order, always
// "version":3, no null values.
func encodeHeader(h Header) ([]byte, error) {
	h.Type = "session"
	h.Version = CurrentVersion
	return jsonx.Marshal(h)
}

// MarshalHeader encodes a header line (without newline) the way xdev
// writes new sessions: omp's key order, "version":3.
func MarshalHeader(h Header) ([]byte, error) { return encodeHeader(h) }
