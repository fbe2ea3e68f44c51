// Package jsonx reads and writes JSON the way JavaScript does.
//
// omp reads every session line with JSON.parse and hands the model what
// JSON.stringify makes of the result. Go's JSON packages differ from that
// pair in ways a session file can expose: they reject or keep duplicate
// names where JSON.parse keeps the last, keep number spellings ("1.0",
// "5e0") that JavaScript normalizes, order members as written where a
// JavaScript object puts integer-like names first, cannot hold the lone
// surrogates "\ud800" denotes, and replace invalid UTF-8 byte by byte where
// the WHATWG decoder replaces each maximal invalid subpart. A [Value] is a
// parsed JavaScript value; [Parse] and [Value.AppendJSON] are JSON.parse and
// JSON.stringify, so reading a line with Parse and writing it back gives
// exactly the bytes omp would send.
//
// Strings are Go strings holding WTF-8: valid UTF-8, except that a lone
// surrogate is encoded as the three bytes UTF-8 would use for its code
// point. Text read from the file never holds invalid UTF-8 after Parse.
package jsonx

import (
	"math"
	"strconv"
	"strings"
	"unsafe"
)

// Kind is the JavaScript type of a value.
type Kind uint8

// The kinds of value. Undefined is what a missing member or index reads as.
const (
	Undefined Kind = iota
	Null
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	return [...]string{"undefined", "null", "boolean", "number", "string", "array", "object"}[k]
}

// Value is one JavaScript value. The zero Value is undefined.
//
// A value is 32 bytes, whatever its kind: a parsed line holds one per
// JSON value in it, and a line can hold millions. The payload is one
// pointer and one word, read by kind: a string's bytes and length, an
// array's items or an object's members and their count, a number's bits.
type Value struct {
	kind  Kind
	b     bool
	owned bool // v comes from ParseOwned, whose text never changes: src (see JSONText) and its strings share it
	// src is the text v was parsed from when that text is exactly what
	// JSON.stringify writes for v (no white space, duplicate names,
	// reordered names, or other spellings of numbers and escapes), as
	// omp's own lines are: writing v copies it instead of encoding. A
	// text over 4 GiB is not kept (v is then encoded).
	srcLen uint32
	srcPtr *byte
	ptr    unsafe.Pointer // String: *byte; Array: *Value; Object: *Member
	u      uint64         // String, Array, Object: the length; Number: the float64's bits
}

// Member is one property of an object.
type Member struct {
	Name  string
	Value Value
}

// Constructors for values built in Go.

// Str returns a string value.
func Str(s string) Value {
	return Value{kind: String, ptr: unsafe.Pointer(unsafe.StringData(s)), u: uint64(len(s))}
}

// Num returns a number value.
func Num(f float64) Value { return Value{kind: Number, u: math.Float64bits(f)} }

// BoolValue returns a boolean value.
func BoolValue(b bool) Value { return Value{kind: Bool, b: b} }

// NullValue returns null.
func NullValue() Value { return Value{kind: Null} }

// ArrayOf returns an array of items.
func ArrayOf(items ...Value) Value {
	return Value{kind: Array, ptr: unsafe.Pointer(unsafe.SliceData(items)), u: uint64(len(items))}
}

// ObjectOf returns an object of members, which must be in the order
// JavaScript would give them (an object literal's order, names not
// integer-like) and hold no undefined values.
func ObjectOf(members ...Member) Value {
	return Value{kind: Object, ptr: unsafe.Pointer(unsafe.SliceData(members)), u: uint64(len(members))}
}

// The payload, read by kind.

func (v Value) str() string {
	if v.kind != String {
		return ""
	}
	return unsafe.String((*byte)(v.ptr), int(v.u))
}

func (v Value) num() float64 {
	if v.kind != Number {
		return 0
	}
	return math.Float64frombits(v.u)
}

func (v Value) items() []Value {
	if v.kind != Array {
		return nil
	}
	return unsafe.Slice((*Value)(v.ptr), int(v.u))
}

func (v Value) members() []Member {
	if v.kind != Object {
		return nil
	}
	return unsafe.Slice((*Member)(v.ptr), int(v.u))
}

func (v Value) src() []byte {
	if v.srcPtr == nil {
		return nil
	}
	return unsafe.Slice(v.srcPtr, int(v.srcLen))
}

// setSrc keeps text as v's src (see Value).
func (v *Value) setSrc(text []byte) {
	if len(text) > 0 && len(text) <= math.MaxUint32 {
		v.srcPtr, v.srcLen = &text[0], uint32(len(text))
	}
}

// Kind returns the value's type.
func (v Value) Kind() Kind { return v.kind }

// Defined reports whether v is not undefined.
func (v Value) Defined() bool { return v.kind != Undefined }

// Nullish reports whether v is null or undefined, the values ?? replaces.
func (v Value) Nullish() bool { return v.kind == Undefined || v.kind == Null }

// String returns the string of a string value, and "" for any other.
func (v Value) String() string { return v.str() }

// Text returns the string of a string value and whether v is one.
func (v Value) Text() (string, bool) { return v.str(), v.kind == String }

// Float returns the number of a number value and whether v is one.
func (v Value) Float() (float64, bool) { return v.num(), v.kind == Number }

// Boolean returns the boolean of a boolean value and whether v is one.
func (v Value) Boolean() (bool, bool) { return v.b, v.kind == Bool }

// Items returns the elements of an array; nil for any other value.
func (v Value) Items() []Value { return v.items() }

// Members returns the properties of an object in order; nil for any other
// value. The caller must not modify them.
func (v Value) Members() []Member { return v.members() }

// Get returns member name of an object, or undefined.
func (v Value) Get(name string) Value {
	ms := v.members()
	for i := range ms {
		if ms[i].Name == name {
			return ms[i].Value
		}
	}
	return Value{}
}

// Has reports whether an object has member name.
func (v Value) Has(name string) bool {
	ms := v.members()
	for i := range ms {
		if ms[i].Name == name {
			return true
		}
	}
	return false
}

// Is reports whether v is the string s (JavaScript's v === s).
func (v Value) Is(s string) bool { return v.kind == String && v.str() == s }

// Truthy reports whether JavaScript treats v as true in a condition.
func (v Value) Truthy() bool {
	switch v.kind {
	case Bool:
		return v.b
	case Number:
		return v.num() != 0 && !math.IsNaN(v.num())
	case String:
		return v.u != 0
	case Array, Object:
		return true
	}
	return false
}

// With returns a copy of object v with member name set to x: replaced in
// place when present, added last otherwise; an undefined x removes it.
// JavaScript's integer-like names are not reordered: callers set ordinary
// names.
func (v Value) With(name string, x Value) Value {
	out := make([]Member, 0, len(v.members())+1) // the result has no src: it is new text
	found := false
	for _, m := range v.members() {
		if m.Name == name {
			found = true
			if x.Defined() {
				out = append(out, Member{name, x})
			}
			continue
		}
		out = append(out, m)
	}
	if !found && x.Defined() {
		out = append(out, Member{name, x})
	}
	return ObjectOf(out...)
}

// ToString converts v the way JavaScript's String(v) and template literals
// do: undefined and null by name, numbers in their shortest form.
func (v Value) ToString() string {
	switch v.kind {
	case Undefined:
		return "undefined"
	case Null:
		return "null"
	case Bool:
		return strconv.FormatBool(v.b)
	case Number:
		return FormatNumber(v.num())
	case String:
		return v.str()
	case Array:
		parts := make([]string, len(v.items()))
		for i, x := range v.items() {
			if !x.Nullish() {
				parts[i] = x.ToString()
			}
		}
		return strings.Join(parts, ",")
	}
	return "[object Object]"
}

// Detach returns a copy of v that shares no memory with the text it was
// parsed from (a parsed value keeps slices of it, to write itself back
// byte for byte): for a value kept after its text's buffer is reused.
// The copy writes itself by encoding, as JSON.stringify would.
func (v Value) Detach() Value {
	owned := v.owned
	switch v.kind {
	case String:
		if owned {
			return Str(strings.Clone(v.str()))
		}
		return Str(v.str())
	case Array:
		items := make([]Value, len(v.items()))
		for i, x := range v.items() {
			items[i] = x.Detach()
		}
		return ArrayOf(items...)
	case Object:
		ms := make([]Member, len(v.members()))
		for i, m := range v.members() {
			name := m.Name
			if owned {
				name = strings.Clone(name)
			}
			ms[i] = Member{Name: name, Value: m.Value.Detach()}
		}
		return ObjectOf(ms...)
	}
	v.srcPtr, v.srcLen, v.owned = nil, 0, false
	return v
}
