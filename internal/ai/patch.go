package ai

import (
	"reflect"
	"strings"

	"github.com/xdev/xdev/internal/jsonx"
)

// decodedFrom is what a message or block decoded from raw held: decoded
// again when it is encoded, so that what was read need not be held twice
// (a message of a million blocks would hold three copies of each). The
// text never changes once decoded (see Message.Raw), and the same text
// decodes to the same fields.
func decodedFrom[T message | block](raw []byte) *T {
	v, err := jsonx.ParseOwned(raw)
	if err != nil {
		return nil
	}
	var out T
	switch p := any(&out).(type) {
	case *message:
		(*Message)(p).decode(v)
	case *block:
		(*Block)(p).decode(v)
	}
	return &out
}

// patchChanged returns raw with every exported field of cur that differs
// from old re-encoded in place: removed when it is zero and its tag says
// omitempty or omitzero, replaced (or added last) otherwise. Members xdev
// does not model keep their bytes.
func patchChanged[T message | block](raw []byte, cur *T) ([]byte, error) {
	old := decodedFrom[T](raw)
	if old == nil {
		return raw, nil
	}
	cv, ov := reflect.ValueOf(cur).Elem(), reflect.ValueOf(old).Elem()
	if ov.Kind() != reflect.Struct {
		return raw, nil
	}
	ed := jsonx.Edit(raw)
	changed := false
	t := cv.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("json")
		if !f.IsExported() || !ok {
			continue
		}
		a, b := cv.Field(i), ov.Field(i)
		if reflect.DeepEqual(a.Interface(), b.Interface()) {
			continue
		}
		changed = true
		name, opts, _ := strings.Cut(tag, ",")
		if isZero(a) && (strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")) {
			ed.Remove(name)
			continue
		}
		enc, err := jsonx.Marshal(a.Interface())
		if err != nil {
			return nil, err
		}
		ed.SetRaw(name, enc)
	}
	if !changed {
		return raw, nil
	}
	return ed.Bytes()
}

// isZero reports a zero field as encoding/json/v2's omitzero does: by its
// IsZero method when it has one.
func isZero(v reflect.Value) bool {
	if z, ok := v.Interface().(interface{ IsZero() bool }); ok {
		return z.IsZero()
	}
	return v.IsZero()
}
