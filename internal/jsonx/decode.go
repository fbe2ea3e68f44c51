package jsonx

import (
	"math"
	"reflect"
	"strings"
	"sync"
)

// Decoder is implemented by types that fill themselves from a Value.
type Decoder interface {
	DecodeJS(v Value)
}

var decoderType = reflect.TypeFor[Decoder]()

// Decode fills the Go value dst points to from v, the way a JavaScript
// program reads an object it did not validate: a member whose type fits
// the field is taken, anything else leaves the field zero. It never fails.
// Struct fields are matched by their `json` tag name; a []byte-kinded
// field (such as jsontext.Value) receives the member as JSON.stringify
// writes it; numbers fill integer fields truncated toward zero.
func Decode(v Value, dst any) {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return
	}
	decodeInto(v, rv.Elem())
}

func decodeInto(v Value, f reflect.Value) {
	if f.CanAddr() && f.Addr().Type().Implements(decoderType) {
		f.Addr().Interface().(Decoder).DecodeJS(v)
		return
	}
	switch f.Kind() {
	case reflect.String:
		if v.kind == String {
			f.SetString(v.str())
		}
	case reflect.Bool:
		if v.kind == Bool {
			f.SetBool(v.b)
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		if v.kind == Number && !math.IsNaN(v.num()) && math.Abs(v.num()) < 1<<63 {
			n := int64(v.num())
			if !f.OverflowInt(n) {
				f.SetInt(n)
			}
		}
	case reflect.Float64:
		if v.kind == Number {
			f.SetFloat(v.num())
		}
	case reflect.Pointer:
		if v.Nullish() {
			return
		}
		p := reflect.New(f.Type().Elem())
		before := p.Elem().Interface()
		decodeInto(v, p.Elem())
		// A pointer says "present": set it only when the member fitted.
		if !reflect.DeepEqual(before, p.Elem().Interface()) || fits(v, f.Type().Elem()) {
			f.Set(p)
		}
	case reflect.Slice:
		if f.Type().Elem().Kind() == reflect.Uint8 {
			if v.Defined() {
				f.SetBytes(v.JSON())
			}
			return
		}
		if v.kind != Array {
			return
		}
		s := reflect.MakeSlice(f.Type(), len(v.items()), len(v.items()))
		for i, x := range v.items() {
			decodeInto(x, s.Index(i))
		}
		f.Set(s)
	case reflect.Struct:
		if v.kind != Object {
			return
		}
		for _, fi := range fieldsOf(f.Type()) {
			if m := v.Get(fi.name); m.Defined() {
				decodeInto(m, f.Field(fi.index))
			}
		}
	}
}

// fits reports whether v has the JavaScript type a Go field of type t holds.
func fits(v Value, t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String:
		return v.kind == String
	case reflect.Bool:
		return v.kind == Bool
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Float64:
		return v.kind == Number
	case reflect.Struct:
		return v.kind == Object
	}
	return v.Defined()
}

type fieldInfo struct {
	name  string
	index int
}

var fieldCache sync.Map // reflect.Type → []fieldInfo

func fieldsOf(t reflect.Type) []fieldInfo {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]fieldInfo)
	}
	var fs []fieldInfo
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name := sf.Name
		if tag, ok := sf.Tag.Lookup("json"); ok {
			if tag == "-" {
				continue
			}
			if n, _, _ := strings.Cut(tag, ","); n != "" {
				name = n
			}
		}
		fs = append(fs, fieldInfo{name, i})
	}
	fieldCache.Store(t, fs)
	return fs
}
