package jsonx

import (
	"bytes"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// DecodeOptions are the options every typed decode of session data uses:
// like JavaScript's JSON.parse, the last of duplicate names wins and
// invalid UTF-8 is tolerated rather than fatal.
var DecodeOptions = json.JoinOptions(
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
)

// ReplaceMember returns a copy of the JSON object obj with the value of
// member name replaced by value (appended when absent). The other members
// keep their bytes and their order.
func ReplaceMember(obj jsontext.Value, name string, value []byte) (jsontext.Value, error) {
	return editMember(obj, name, value)
}

// RemoveMember returns a copy of the JSON object obj without member name.
func RemoveMember(obj jsontext.Value, name string) (jsontext.Value, error) {
	return editMember(obj, name, nil)
}

// editMember rewrites obj with member name set to value, or removed when
// value is nil. Working on the bytes rather than a decoded map is what keeps
// members xdev does not model exactly as they were.
func editMember(obj jsontext.Value, name string, value []byte) (jsontext.Value, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(obj), DecodeOptions)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, fmt.Errorf("edit member %q: not a JSON object", name)
	}
	var out bytes.Buffer
	out.Grow(len(obj) + len(value))
	out.WriteByte('{')
	first, found := true, false
	emit := func(key, val []byte) {
		if !first {
			out.WriteByte(',')
		}
		first = false
		out.Write(key)
		out.WriteByte(':')
		out.Write(val)
	}
	for dec.PeekKind() != '}' {
		keyTok, err := dec.ReadToken()
		if err != nil {
			return nil, fmt.Errorf("edit member %q: %w", name, err)
		}
		key := keyTok.String()
		val, err := dec.ReadValue()
		if err != nil {
			return nil, fmt.Errorf("edit member %q: %w", name, err)
		}
		keyJSON, _ := Marshal(key)
		if key != name {
			emit(keyJSON, val)
			continue
		}
		found = true
		if value != nil {
			emit(keyJSON, value)
		}
	}
	if !found && value != nil {
		keyJSON, _ := Marshal(name)
		emit(keyJSON, value)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// Editor changes members of a JSON object's bytes in turn, keeping every
// other member byte for byte: the one place session code patches a line
// (forks, migrations, repairs, appends). The first error sticks.
type Editor struct {
	obj []byte
	err error
}

// Edit starts editing obj.
func Edit(obj []byte) *Editor { return &Editor{obj: obj} }

// Set sets member name to v as encoding/json/v2 encodes it (nil: null).
func (e *Editor) Set(name string, v any) *Editor {
	if e.err != nil {
		return e
	}
	b, err := Marshal(v)
	if err != nil {
		e.err = fmt.Errorf("edit member %q: %w", name, err)
		return e
	}
	return e.SetRaw(name, b)
}

// SetRaw sets member name to the JSON text raw.
func (e *Editor) SetRaw(name string, raw []byte) *Editor {
	if e.err == nil {
		e.obj, e.err = ReplaceMember(e.obj, name, raw)
	}
	return e
}

// Remove removes member name, if present.
func (e *Editor) Remove(name string) *Editor {
	if e.err == nil {
		e.obj, e.err = RemoveMember(e.obj, name)
	}
	return e
}

// Bytes returns the edited object, or the first error.
func (e *Editor) Bytes() ([]byte, error) { return e.obj, e.err }
