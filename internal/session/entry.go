package session

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/jsonx"
)

// Entry is one node of a session's tree: one line of the file after the
// header.
//
// An entry read from disk keeps the exact bytes of its line. Whatever is
// copied or rewritten later emits those bytes, never a re-encoding, so
// fields and entry types xdev does not know survive every program of ours.
type Entry struct {
	Type      string
	ID        string // 8 lowercase hex digits in files omp or xdev wrote
	ParentID  string // "" for a root; null on disk
	Timestamp string // ISO-8601 UTC with milliseconds
	Body      Body   // nil for an entry type xdev does not know

	raw  []byte // the line without its newline; nil until encoded or read
	line int    // 1-based line number in the file, 0 if not read from disk
	// parsed is the line as JSON.parse reads it, when a load decoded it
	// for the body: kept for the first context build, which reads the
	// same values, then dropped (Store.buildContext).
	parsed jsonx.Value
}

// Raw returns the line of the entry as it is on disk (no newline), or nil
// for an entry that has not been written. The entry's body shares its
// bytes: the caller must not change them.
func (e *Entry) Raw() []byte { return e.raw }

// Line returns the 1-based line number the entry was read from, or 0.
func (e *Entry) Line() int { return e.line }

// Message returns the message of a message entry, or nil.
func (e *Entry) Message() *ai.Message {
	if m, ok := e.Body.(*Message); ok {
		return &m.Message
	}
	return nil
}

// uniqueID draws entry ids until one is not taken: the one id-drawing
// loop (omp's generateId), for appends and for the label entries of a
// branched copy.
func uniqueID(taken func(id string) bool) string {
	for {
		if id := NewID(); !taken(id) {
			return id
		}
	}
}

// NewID returns a fresh entry id: 8 lowercase hex digits, as omp draws them.
// Store.Append re-draws on the rare collision within a session.
func NewID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Now returns the current time as omp's toISOString writes it.
func Now() string { return FormatTime(time.Now()) }

// FormatTime formats t as ISO-8601 UTC with milliseconds, like JavaScript's
// Date.prototype.toISOString.
func FormatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// ParseTime parses the timestamps found in session files. It accepts
// RFC 3339 with or without fractional seconds.
func ParseTime(s string) (time.Time, error) {
	return time.Parse(time.RFC3339Nano, s)
}

// encodeEntry encodes e as one line without its newline, with omp's key
// order: "type", then the envelope and the body, or for custom and
// custom_message the body first. parentId "" is written as null.
func encodeEntry(e *Entry) ([]byte, error) {
	if e.Body != nil && e.Body.EntryType() != e.Type {
		return nil, fmt.Errorf("entry %s: body is %s, type is %s", e.ID, e.Body.EntryType(), e.Type)
	}
	body := []byte("{}")
	if e.Body != nil {
		var err error
		if body, err = jsonx.Marshal(e.Body); err != nil {
			return nil, fmt.Errorf("entry %s (%s): %w", e.ID, e.Type, err)
		}
	}
	// A parent is a key (ids.go): a numeric id is written back as the
	// number it is, so that omp's Map finds it.
	env, err := jsonx.Marshal(struct {
		ID        string         `json:"id"`
		ParentID  jsontext.Value `json:"parentId"`
		Timestamp string         `json:"timestamp"`
	}{e.ID, IDValue(e.ParentID).JSON(), e.Timestamp})
	if err != nil {
		return nil, err
	}
	typ, _ := jsonx.Marshal(e.Type)

	members := body[1 : len(body)-1] // between the braces
	env = env[1 : len(env)-1]
	var out bytes.Buffer
	out.Grow(len(body) + len(env) + 16)
	out.WriteString(`{"type":`)
	out.Write(typ)
	first, second := env, members
	if payloadFirst(e.Type) {
		first, second = members, env
	}
	for _, part := range [][]byte{first, second} {
		if len(part) > 0 {
			out.WriteByte(',')
			out.Write(part)
		}
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// decodeBody decodes the body of a known entry type from its line, as
// decodeEntry does; only a line that is not JSON fails.
func decodeBody(typ string, line []byte) (Body, error) {
	b := newBody(typ)
	if b == nil {
		return nil, nil
	}
	v, err := jsonx.Parse(line)
	if err != nil {
		return nil, err
	}
	jsonx.Decode(v, b)
	return b, nil
}

// MarshalEntry encodes e as one session line, without its newline, exactly
// as Append writes it: omp's key order, no HTML escaping. Tools that write
// session files in bulk (the benchmark corpus) use it.
func MarshalEntry(e *Entry) ([]byte, error) { return encodeEntry(e) }
