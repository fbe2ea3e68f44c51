package ai

import (
	"reflect"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/xdev/xdev/internal/jsonx"
)

// snapshot copies the typed fields of a decoded message or block, so that
// MarshalJSON can tell which ones were changed since. Content's blocks are
// copied too: a block changed in place must not change the snapshot.
func snapshot[T message | block](v *T) *T {
	c := *v
	if m, ok := any(&c).(*message); ok && m.Content.Blocks != nil {
		m.Content.Blocks = append([]Block(nil), m.Content.Blocks...)
	}
	return &c
}

// patchChanged returns raw with every exported field of cur that differs
// from old re-encoded in place: removed when it is zero and its tag says
// omitempty or omitzero, replaced (or added last) otherwise. Members xdev
// does not model keep their bytes.
func patchChanged(raw []byte, cur, old any) ([]byte, error) {
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
		enc, err := json.Marshal(a.Interface())
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
