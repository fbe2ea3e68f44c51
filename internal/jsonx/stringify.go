package jsonx

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends v as JavaScript's JSON.stringify writes it: no
// whitespace, members in order, undefined members left out, NaN and
// infinities as null, lone surrogates as \udxxx escapes.
func (v Value) AppendJSON(b []byte) []byte {
	if v.src() != nil {
		return append(b, v.src()...)
	}
	switch v.kind {
	case Null, Undefined:
		return append(b, "null"...)
	case Bool:
		return strconv.AppendBool(b, v.b)
	case Number:
		if math.IsNaN(v.num()) || math.IsInf(v.num(), 0) {
			return append(b, "null"...)
		}
		return append(b, FormatNumber(v.num())...)
	case String:
		return AppendString(b, v.str())
	case Array:
		b = append(b, '[')
		for i, x := range v.items() {
			if i > 0 {
				b = append(b, ',')
			}
			b = x.AppendJSON(b)
		}
		return append(b, ']')
	}
	b = append(b, '{')
	first := true
	for _, m := range v.members() {
		if !m.Value.Defined() {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = AppendString(b, m.Name)
		b = append(b, ':')
		b = m.Value.AppendJSON(b)
	}
	return append(b, '}')
}

// JSON returns v as JSON.stringify writes it.
func (v Value) JSON() []byte { return v.AppendJSON(nil) }

// JSONText is v as JSON.stringify writes it, as JSON does, but for a value
// ParseOwned read it is the parsed text itself, not a copy: for a decoder
// that keeps a value's text (a message remembers its bytes).
func (v Value) JSONText() []byte {
	if v.owned && v.src() != nil {
		return v.src() // its capacity is its length: an append copies
	}
	return v.JSON()
}

// shortEscape is the two-character escape JSON.stringify writes for a byte,
// or 0.
var shortEscape = [128]byte{'"': '"', '\\': '\\', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

// AppendString appends s (WTF-8) as a JSON string the way JSON.stringify
// escapes it: quote, backslash and control characters, and lone surrogates.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x80 {
			if c == 0xED && i+2 < len(s) && s[i+1] >= 0xA0 {
				// A lone surrogate held as WTF-8.
				r := rune(c&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F)
				b = append(b, '\\', 'u', hex[r>>12], hex[r>>8&0xF], hex[r>>4&0xF], hex[r&0xF])
				i += 3
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, "\ufffd"...) // not produced by Parse; kept valid anyway
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch e := shortEscape[c]; {
		case e != 0:
			b = append(b, '\\', e)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		default:
			b = append(b, c)
		}
		i++
	}
	return append(b, '"')
}

// FormatNumber formats f as JavaScript's Number.prototype.toString does
// (ECMA-262 Number::toString): the shortest digits that round-trip, in
// plain notation from 1e-6 up to 1e21 and exponent notation outside.
func FormatNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	}
	var out []byte
	if f < 0 {
		out = append(out, '-')
		f = -f
	}
	// Shortest round-trip digits d1.d2…dk × 10^(n−1).
	e := strconv.AppendFloat(nil, f, 'e', -1, 64)
	mant, exp := e, 0
	for i, c := range e {
		if c == 'e' {
			mant = e[:i]
			exp, _ = strconv.Atoi(string(e[i+1:]))
			break
		}
	}
	digits := make([]byte, 0, len(mant))
	for _, c := range mant {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	k, n := len(digits), exp+1
	switch {
	case k <= n && n <= 21:
		out = append(out, digits...)
		for i := 0; i < n-k; i++ {
			out = append(out, '0')
		}
	case 0 < n && n <= 21:
		out = append(out, digits[:n]...)
		out = append(out, '.')
		out = append(out, digits[n:]...)
	case -6 < n && n <= 0:
		out = append(out, '0', '.')
		for i := 0; i < -n; i++ {
			out = append(out, '0')
		}
		out = append(out, digits...)
	default:
		out = append(out, digits[0])
		if k > 1 {
			out = append(out, '.')
			out = append(out, digits[1:]...)
		}
		out = append(out, 'e')
		if n-1 >= 0 {
			out = append(out, '+')
		}
		out = strconv.AppendInt(out, int64(n-1), 10)
	}
	return string(out)
}

// AppendIndent appends v as JSON.stringify(v, null, indent) writes it:
// one member or element a line, nested levels indented by indent, empty
// arrays and objects as [] and {}.
func (v Value) AppendIndent(b []byte, indent string) []byte {
	return v.appendIndent(b, indent, "\n")
}

// AppendIndentIn is AppendIndent for a value nested in an indented one:
// its lines after the first start with prefix (the indentation of where
// it stands), so that a writer can stream the members of an array one at
// a time and write what AppendIndent of the whole would.
func (v Value) AppendIndentIn(b []byte, indent, prefix string) []byte {
	return v.appendIndent(b, indent, "\n"+prefix)
}

func (v Value) appendIndent(b []byte, indent, nl string) []byte {
	inner := nl + indent
	switch {
	case v.kind == Array && len(v.items()) > 0:
		b = append(b, '[')
		for i, x := range v.items() {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, inner...)
			b = x.appendIndent(b, indent, inner)
		}
		b = append(b, nl...)
		return append(b, ']')
	case v.kind == Object:
		first := true
		for _, m := range v.members() {
			if !m.Value.Defined() {
				continue
			}
			if first {
				b = append(b, '{')
			} else {
				b = append(b, ',')
			}
			first = false
			b = append(b, inner...)
			b = AppendString(b, m.Name)
			b = append(b, ": "...)
			b = m.Value.appendIndent(b, indent, inner)
		}
		if first {
			return append(b, "{}"...)
		}
		b = append(b, nl...)
		return append(b, '}')
	}
	return v.AppendJSON(b)
}
