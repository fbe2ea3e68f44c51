package jsonx

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// TestRoundTrip checks Parse followed by JSON against what JavaScript's
// JSON.stringify(JSON.parse(text)) gives (the expectations were taken from
// Bun 1.3 running omp 18.2.3).
func TestRoundTrip(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`},
		{` { "a" : 1 , "b" : [ 1 , 2 ] } `, `{"a":1,"b":[1,2]}`},
		{`{"a":1,"a":2}`, `{"a":2}`},
		{`{"b":1,"a":2,"b":3}`, `{"b":3,"a":2}`},
		{`{"b":1,"2":2,"1":3,"01":4,"4294967295":5,"4294967294":6}`, `{"1":3,"2":2,"4294967294":6,"b":1,"01":4,"4294967295":5}`},
		{`[1.0,5e0,1.5,-0,1e21,1e20,1e-7,0.000001,12345678901234567890,1e400,5e-324]`,
			`[1,5,1.5,0,1e+21,100000000000000000000,1e-7,0.000001,12345678901234567000,null,5e-324]`},
		{`"\ud800"`, `"\ud800"`},
		{`"\uD800x"`, `"\ud800x"`},
		{`"\udc00\ud800"`, `"\udc00\ud800"`},
		{`"\ud83d\ude00"`, `"😀"`},
		{`"\u0041\/"`, `"A/"`},
		{`"\u001f\u007f\u2028"`, "\"\\u001f\u007f\u2028\""},
		{"\"a\xe2\x82b\xffc\"", "\"a\ufffdb\ufffdc\""},
		{"\"\xf0\x9f\x98\"", "\"\ufffd\""},
		{"\"\xed\xa0\x80\"", "\"\ufffd\ufffd\ufffd\""},
		{`"\b\f\n\r\t\"\\"`, `"\b\f\n\r\t\"\\"`},
		{`[]`, `[]`},
		{`{}`, `{}`},
		{`[[],{}]`, `[[],{}]`},
		{`true`, `true`},
		{`null`, `null`},
		{strings.Repeat("[", 5000) + strings.Repeat("]", 5000), strings.Repeat("[", 5000) + strings.Repeat("]", 5000)},
	}
	for _, tt := range tests {
		v, err := Parse([]byte(tt.in))
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := string(v.JSON()); got != tt.want {
			t.Errorf("Parse(%q).JSON() = %q, want %q", tt.in, got, tt.want)
		}
		// Writing what was written reads back the same.
		v2, err := Parse(v.JSON())
		if err != nil || string(v2.JSON()) != tt.want {
			t.Errorf("second round of %q: %q, %v", tt.in, v2.JSON(), err)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, in := range []string{
		``, ` `, `{`, `{"a"}`, `{"a":1,}`, `[1,]`, `01`, `+1`, `.5`, `1.`, `1e`, `NaN`, `'a'`,
		`"a`, "\"a\tb\"", `"\x"`, `"\u12"`, `{} x`, `{"a":1}{"b":2}`, `nul`, "\ufeff{}",
	} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) accepted", in)
		}
	}
}

func TestFormatNumber(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {1, "1"}, {-1.5, "-1.5"}, {0.1, "0.1"},
		{1e21, "1e+21"}, {1e-7, "1e-7"}, {123e-20, "1.23e-18"}, {1.7976931348623157e308, "1.7976931348623157e+308"},
		{5e-324, "5e-324"}, {100, "100"}, {0.000001, "0.000001"}, {1772377092310, "1772377092310"},
		{math.NaN(), "NaN"}, {math.Inf(1), "Infinity"},
	}
	for _, tt := range tests {
		if got := FormatNumber(tt.f); got != tt.want {
			t.Errorf("FormatNumber(%v) = %q, want %q", tt.f, got, tt.want)
		}
	}
}

// TestParseDate holds Bun's Date.parse for each form (TZ=UTC).
func TestParseDate(t *testing.T) {
	t.Setenv("TZ", "UTC")
	tests := []struct {
		in   string
		want float64
	}{
		{"2026-01-01T00:00:00.000Z", 1767225600000},
		{"2026-01-01T00:00:00Z", 1767225600000},
		{"2026-01-01T00:00Z", 1767225600000},
		{"2026-01-01T00:00:00.1Z", 1767225600100},
		{"2026-01-01T00:00:00.123456Z", 1767225600123},
		{"2026-01-01", 1767225600000},
		{"2026-01", 1767225600000},
		{"2026", 1767225600000},
		{"+002026-01-01T00:00:00Z", 1767225600000},
		{"-000001-01-01T00:00:00Z", -62198755200000},
		{"2026-01-01T00:00:00+02:00", 1767218400000},
		{"2026-01-01T00:00:00+0200", 1767218400000},
		{"2026-01-01 00:00:00Z", 1767225600000},
		{"2026-01-01t00:00:00z", 1767225600000},
		{"Thu, 01 Jan 2026 00:00:00 GMT", 1767225600000},
		{"01 Jan 2026 00:00:00 GMT", 1767225600000},
		{"Jan 1, 2026", 1767225600000},
		{"Thu Jan 01 2026 00:00:00 GMT+0000", 1767225600000},
		{"2026/01/01", 1767225600000},
		{"2026-02-30", 1772409600000},
		{"2026-01-01T24:00:00Z", 1767312000000},
		{"Thu, 01 Jan 2026 00:00:00 +0100", 1767222000000},
		{"Thu, 01 Jan 2026 00:00 GMT", 1767225600000},
		{"1 January 2026", 1767225600000},
		{"Mon, 01 Jan 2026 00:00:00 UTC", 1767225600000},
		{"Thu, 01 Jan 2026 00:00:00 EST", 1767243600000},
		// More forms people and tools write, with Bun's answers.
		{"2026-11-01 10:00:00", 1793527200000},
		{"2026-11-01T10:00:00", 1793527200000},
		{"2026-11-01T10:00", 1793527200000},
		{"2026/11/01 10:00:00", 1793527200000},
		{"2026/11/01", 1793491200000},
		{"Nov 1 2026 10:00:00 GMT", 1793527200000},
		{"Nov 1, 2026 10:00:00", 1793527200000},
		{"Sun Nov 01 2026 10:00:00 GMT+0000 (Coordinated Universal Time)", 1793527200000},
		{"Sun Nov 01 2026 10:00:00 GMT+0100", 1793523600000},
		{"Sun, 01 Nov 2026 10:00:00 +0000", 1793527200000},
		{"01 Nov 2026 10:00 UTC", 1793527200000},
		{"November 1, 2026", 1793491200000},
		{"1 Nov 2026", 1793491200000},
		{"2026-11-01T10:00:00.000+00:00", 1793527200000},
		{"2026-11-01T10:00:00.000-05:00", 1793545200000},
		{"2026-11-01T10:00:00.123456789Z", 1793527200123},
		{"11/01/2026", 1793491200000},
		{"11/01/2026 10:00:00", 1793527200000},
		{"2026-11-01Z", 1793491200000},
		{"2026-11-1", 1793491200000},
		{"Sun Nov 01 2026", 1793491200000},
		{"Nov 2026", 1793491200000},
	}
	for _, tt := range tests {
		if got := ParseDate(tt.in); got != tt.want {
			t.Errorf("ParseDate(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	for _, in := range []string{"garbage", "", "2026-13-01", "2026-01-01T25:00:00Z", "2026-01-01T00:00:60Z",
		" 2026-01-01T00:00:00Z", "2026-01-01T00:00:00.Z", "20260101", "2026-01-01T00Z",
		"2026-11-01T10:00:00,123Z", "2026-11-01T10:00:00 Z", "1793527200000", "+2026-11-01T00:00:00Z", "2026-1-01T10:00:00Z"} {
		if got := ParseDate(in); !math.IsNaN(got) {
			t.Errorf("ParseDate(%q) = %v, want NaN", in, got)
		}
	}
}

func TestDateMillis(t *testing.T) {
	for _, tt := range []struct {
		v    Value
		want float64
	}{
		{NullValue(), 0}, {BoolValue(true), 1}, {Num(1.9), 1}, {Num(-1.9), -1}, {Num(9e15), math.NaN()},
	} {
		got := DateMillis(tt.v)
		if got != tt.want && !(math.IsNaN(got) && math.IsNaN(tt.want)) {
			t.Errorf("DateMillis(%s) = %v, want %v", tt.v.JSON(), got, tt.want)
		}
	}
	if got := DateMillis(Value{}); !math.IsNaN(got) {
		t.Errorf("DateMillis(undefined) = %v, want NaN", got)
	}
}

func TestDecodeUTF8(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"ok", "ok"}, {"\xe2\x82x", "\ufffdx"}, {"\xff\xfe", "\ufffd\ufffd"}, {"\xf0\x9f\x98", "\ufffd"},
		{"\xed\xa0\x80", "\ufffd\ufffd\ufffd"}, {"\xc0\x80", "\ufffd\ufffd"}, {"\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"},
	} {
		if got := DecodeUTF8([]byte(tt.in)); got != tt.want {
			t.Errorf("DecodeUTF8(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzParse checks that whatever Parse accepts it writes as text Parse
// reads back to the same text, and that it never panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,"x\ud800"],"a":null,"1":true}`, `[1e400,-0,"\u00e9"]`, "\"\xe2\x82\"", `{"b":{"c":[]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data)
		if err != nil {
			return
		}
		out := v.JSON()
		v2, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(%q) wrote %q, which does not parse: %v", data, out, err)
		}
		if out2 := v2.JSON(); string(out2) != string(out) {
			t.Fatalf("not stable: %q → %q → %q", data, out, out2)
		}
		_ = v.AppendIndent(nil, "  ")
		// ParseOwned reads the same value, sharing its text; detached, the
		// value keeps nothing of it: the text overwritten changes nothing.
		text := bytes.Clone(data)
		ov, err := ParseOwned(text)
		if err != nil {
			t.Fatalf("ParseOwned(%q): %v; Parse took it", data, err)
		}
		if got := ov.JSONText(); string(got) != string(out) {
			t.Fatalf("ParseOwned(%q) writes %q, Parse %q", data, got, out)
		}
		d := ov.Detach()
		for i := range text {
			text[i] = 'x'
		}
		if got := d.JSON(); string(got) != string(out) {
			t.Fatalf("Detach of ParseOwned(%q) changed with its text: %q, want %q", data, got, out)
		}
	})
}

// FuzzValid checks that Valid agrees with Parse on every input.
func FuzzValid(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,"x\ud800"],"a":null}`, `[1,]`, `{"a" 1}`, "\"\x01\"", `"\u12"`, `-01`, `{} x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Parse(data)
		if Valid(data) != (err == nil) {
			t.Fatalf("Valid(%q) = %v, Parse error %v", data, Valid(data), err)
		}
	})
}

// FuzzMembers: Members agrees with Parse on every text: it fails where
// Parse fails (for an object followed by nothing), and otherwise yields
// the object's members, names and values, as Parse reads them.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":[1,{"c":"d"}],"a":"x"}`, `{"\u0061":true}`, `[1]`, `"s"`, `{"a":}`, `{"a":[[[[]]]]}`,
		`{"a":"\u00e9"}`, ` { "a" : 1 } `, `{"a":1}junk`, `{"a":"` + "\x01" + `"}`, `{"k":[1,2,3,],}`} {
		f.Add(s)
	}
	f.Add(`{"a":{"role":"x","b":[1,{"a":{}}]},"z":1,"a":{"q":"\\u00e9"}}`)
	f.Fuzz(func(t *testing.T, text string) {
		data := []byte(text)
		v, perr := Parse(data)
		type member struct{ name, value string }
		var got []member
		end, err := Members(data, func(name, value []byte) { got = append(got, member{string(name), string(value)}) })
		if perr != nil {
			if err == nil && !isSpace(data[end:]) {
				return // an object with junk after it: Parse refuses, Members stops there
			}
			if err == nil {
				t.Fatalf("%q: Members took what Parse refuses (%v)", text, perr)
			}
			return
		}
		if v.Kind() != Object {
			if !errors.Is(err, ErrNotObject) {
				t.Fatalf("%q: %v, want ErrNotObject", text, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: Parse took it, Members: %v", text, err)
		}
		// MembersWithin gives what Members gives, and of each object
		// member "a" what Members gives of it, in the same pass.
		var within, innerGot, innerWant []member
		end2, err := MembersWithin(data, "a", func(name, value []byte) {
			innerGot = append(innerGot, member{string(name), string(value)})
		}, func(name, value []byte) {
			within = append(within, member{string(name), string(value)})
			if string(name) == "a" && value[0] == '{' {
				Members(value, func(name, value []byte) { innerWant = append(innerWant, member{string(name), string(value)}) })
			}
		})
		if err != nil || end2 != end || !slices.Equal(within, got) || !slices.Equal(innerGot, innerWant) {
			t.Fatalf("%q: MembersWithin gives %v %v (%v, end %d), Members %v %v (end %d)", text, within, innerGot, err, end2, got, innerWant, end)
		}
		// The members Parse keeps are the last of each name.
		last := map[string]string{}
		for _, m := range got {
			last[m.name] = m.value
		}
		if len(last) != len(v.Members()) {
			t.Fatalf("%q: %d distinct names, Parse %d", text, len(last), len(v.Members()))
		}
		for _, m := range v.Members() {
			raw, ok := last[m.Name]
			if !ok {
				t.Fatalf("%q: Members did not give %q", text, m.Name)
			}
			x, err := Parse([]byte(raw))
			if err != nil || string(x.JSON()) != string(m.Value.JSON()) {
				t.Fatalf("%q: member %q is %q, Parse %s (%v)", text, m.Name, raw, m.Value.JSON(), err)
			}
		}
	})
}

// FuzzElements checks Elements against Parse as FuzzMembers checks
// Members: the same verdict on every input, and the elements Parse keeps.
func FuzzElements(f *testing.F) {
	for _, s := range []string{`[]`, `[1,"a",[2,[3]],{"b":null}]`, ` [ 1 , 2 ] `, `[1]junk`, `[1,]`, `{}`, `"s"`, `[`, `[null]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		data := []byte(text)
		v, perr := Parse(data)
		var got []string
		end, err := Elements(data, func(value []byte) { got = append(got, string(value)) })
		if perr != nil {
			if err == nil && !isSpace(data[end:]) {
				return // an array with junk after it: Parse refuses, Elements stops there
			}
			if err == nil {
				t.Fatalf("%q: Elements took what Parse refuses (%v)", text, perr)
			}
			return
		}
		if v.Kind() != Array {
			if !errors.Is(err, ErrNotArray) {
				t.Fatalf("%q: %v, want ErrNotArray", text, err)
			}
			return
		}
		if err != nil || len(got) != len(v.Items()) {
			t.Fatalf("%q: Parse took %d elements, Elements %d (%v)", text, len(v.Items()), len(got), err)
		}
		for i, x := range v.Items() {
			y, err := Parse([]byte(got[i]))
			if err != nil || string(y.JSON()) != string(x.JSON()) {
				t.Fatalf("%q: element %d is %q, Parse %s (%v)", text, i, got[i], x.JSON(), err)
			}
		}
	})
}

func isSpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// TestValueSize: a value is 32 bytes and a member 48, whatever the kind
// (see Value): a line of a million values costs tens of MB, not hundreds.
func TestValueSize(t *testing.T) {
	if n := unsafe.Sizeof(Value{}); n != 32 {
		t.Errorf("a Value is %d bytes, want 32", n)
	}
	if n := unsafe.Sizeof(Member{}); n != 48 {
		t.Errorf("a Member is %d bytes, want 48", n)
	}
}
