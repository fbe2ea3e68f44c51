package ai

import (
	"bytes"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
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
		keyJSON, _ := json.Marshal(key)
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
		keyJSON, _ := json.Marshal(name)
		emit(keyJSON, value)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}
