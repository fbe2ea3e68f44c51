package jsonx

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// MaxDepth bounds the nesting Parse, Members and Valid accept: a text
// nested deeper is not read (a session line so nested is skipped and
// counted as malformed). omp 18.2.3 under Bun opens a line nested 10,000
// deep, and fails ("Maximum call stack size exceeded") somewhere between
// 30,000 and 100,000, by how much stack its reader has left; no line a
// harness writes comes near either. The bound keeps a hostile line from
// growing a goroutine stack (Parse recurses) to hundreds of MiB.
const MaxDepth = 10_000

// SyntaxError says where and why a text is not JSON.
type SyntaxError struct {
	Offset int // byte offset of the problem
	msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.msg, e.Offset) }

var errDepth = errors.New("too deeply nested")

// Parse reads one JSON text as JavaScript's JSON.parse does: surrounding
// whitespace is allowed, the last of duplicate names wins (keeping the
// first one's position), integer-like names come first in ascending order,
// numbers become float64 (1e400 is Infinity), escapes may denote lone
// surrogates, and invalid UTF-8 inside strings becomes U+FFFD per maximal
// invalid subpart, as the file's TextDecoder would have made it.
//
// The value's strings are copies, but where a value's text is what
// JSON.stringify writes, the value keeps that text in data, and JSON
// copies it from there instead of encoding: data must not change while
// the value is used. A reader that reuses its buffer parses a copy.
func Parse(data []byte) (Value, error) {
	p := parser{data: data}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return Value{}, err
	}
	p.skipSpace()
	if p.i < len(p.data) {
		return Value{}, p.errorf("unexpected data after the value")
	}
	return v, nil
}

// ParseOwned is Parse for a text the caller hands over: data must never
// change afterwards. The value's strings and text (see Value.JSONText)
// share data's bytes instead of copying them, so that a long line parsed
// costs little more than the line.
func ParseOwned(data []byte) (Value, error) {
	p := parser{data: data, owned: true}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return Value{}, err
	}
	p.skipSpace()
	if p.i < len(p.data) {
		return Value{}, p.errorf("unexpected data after the value")
	}
	return v, nil
}

// ParsePrefix reads the JSON value that data starts with (after white
// space) and returns it with the offset where it ends, whatever follows.
// Bun's JSONL reader, which omp reads session files with, keeps such a
// value when junk follows it on the same line ({"a":1} x, {"a":1}{"b":2})
// and skips only the rest of the line.
func ParsePrefix(data []byte) (Value, int, error) {
	p := parser{data: data}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return Value{}, 0, err
	}
	return v, p.i, nil
}

// Valid reports whether data is one JSON text JSON.parse accepts. It
// checks without building values, so it allocates nothing: readers call
// it on every line of a file.
func Valid(data []byte) bool {
	p := parser{data: data}
	p.skipSpace()
	if !p.skipIter() {
		return false
	}
	p.skipSpace()
	return p.i == len(p.data)
}

// skipString moves past a string, checking its escapes and that it holds
// no raw control characters (invalid UTF-8 is replaced, not refused).
func (p *parser) skipString() bool {
	data, i := p.data, p.i+1 // past the "
	for {
		// Plain bytes by table, in a loop tight enough to run at about a
		// GB/s: in a session's text an escape comes every few bytes, so a
		// word-at-a-time scan (tried twice; the second, eight bytes
		// tested at once for a quote, a backslash or a control
		// character, ran 10% slower on the real fixtures'
		// BenchmarkValidReal) rarely gets a whole word and loses more to
		// its tests than it wins.
		for i < len(data) && stringPlain[data[i]] {
			i++
		}
		if i >= len(data) {
			p.i = i
			return false
		}
		switch data[i] {
		case '"':
			p.i = i + 1
			return true
		case '\\':
			if i+1 >= len(data) {
				p.i = i
				return false
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				p.i = i + 2
				if _, ok := p.hex4(); !ok {
					return false
				}
				i = p.i
			default:
				p.i = i
				return false
			}
		default: // a control character
			p.i = i
			return false
		}
	}
}

// asciiPlain marks the ASCII bytes of stringPlain.
var asciiPlain = func() (t [256]bool) {
	for c := range 0x80 {
		t[c] = c >= 0x20 && c != '"' && c != '\\'
	}
	return t
}()

// stringPlain marks the bytes that go on a string's run: all but the
// quote, the backslash and the control characters.
var stringPlain = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\'
	}
	return t
}()

type parser struct {
	data  []byte
	i     int
	owned bool // data is never to change: strings may share it (ParseOwned)
}

func (p *parser) errorf(format string, args ...any) error {
	return &SyntaxError{Offset: p.i, msg: fmt.Sprintf(format, args...)}
}

func (p *parser) skipSpace() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value parses one value and, when its text is what JSON.stringify would
// write, keeps that text as the value's src.
func (p *parser) value(depth int) (Value, error) {
	start := p.i
	v, canonical, err := p.parseValue(depth)
	if err == nil && canonical {
		v.setSrc(p.data[start:p.i])
	}
	v.owned = p.owned
	return v, err
}

func (p *parser) parseValue(depth int) (Value, bool, error) {
	if depth > MaxDepth {
		return Value{}, false, &SyntaxError{Offset: p.i, msg: errDepth.Error()}
	}
	if p.i >= len(p.data) {
		return Value{}, false, p.errorf("unexpected end of JSON input")
	}
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, canonical, err := p.str()
		return Str(s), canonical, err
	case c == '-' || c >= '0' && c <= '9':
		start := p.i
		v, err := p.number()
		return v, err == nil && FormatNumber(v.num()) == string(p.data[start:p.i]) && !math.IsInf(v.num(), 0), err
	case p.literal("true"):
		return Value{kind: Bool, b: true}, true, nil
	case p.literal("false"):
		return Value{kind: Bool}, true, nil
	case p.literal("null"):
		return Value{kind: Null}, true, nil
	}
	return Value{}, false, p.errorf("unexpected character %q", p.data[p.i])
}

// space skips white space and reports whether there was any.
func (p *parser) space() bool {
	start := p.i
	p.skipSpace()
	return p.i > start
}

func (p *parser) literal(word string) bool {
	if len(p.data)-p.i >= len(word) && string(p.data[p.i:p.i+len(word)]) == word {
		p.i += len(word)
		return true
	}
	return false
}

func (p *parser) array(depth int) (Value, bool, error) {
	p.i++ // [
	var items []Value
	canonical := !p.space()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return ArrayOf(), canonical, nil
	}
	for {
		v, ok, err := p.element(depth + 1)
		if err != nil {
			return Value{}, false, err
		}
		canonical = canonical && ok
		items = append(items, v)
		done, ws, err := p.next(']')
		if err != nil {
			return Value{}, false, err
		}
		canonical = canonical && !ws
		if done {
			return ArrayOf(items...), canonical, nil
		}
	}
}

// element reads a value inside an array or object, after any white space;
// canonical reports that neither needs rewriting by JSON.stringify.
func (p *parser) element(depth int) (v Value, canonical bool, err error) {
	ws := p.space()
	v, err = p.value(depth)
	return v, err == nil && !ws && v.srcPtr != nil, err
}

// next reads what follows an element of an array or object: a comma
// (another element comes) or the closing byte (done). ws reports white
// space before it, which JSON.stringify never writes.
func (p *parser) next(closing byte) (done, ws bool, err error) {
	ws = p.space()
	if p.i >= len(p.data) {
		return false, ws, p.errorf("unexpected end of JSON input")
	}
	switch p.data[p.i] {
	case ',':
		p.i++
		return false, ws, nil
	case closing:
		p.i++
		return true, ws, nil
	}
	return false, ws, p.errorf("expected , or %c", closing)
}

func (p *parser) object(depth int) (Value, bool, error) {
	p.i++ // {
	var members []Member
	var index map[string]int // built once an object grows past a few members
	canonical := !p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return ObjectOf(), canonical, nil
	}
	for {
		if p.space() {
			canonical = false
		}
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return Value{}, false, p.errorf("expected a property name")
		}
		name, nameCanonical, err := p.str()
		if err != nil {
			return Value{}, false, err
		}
		if p.space() || !nameCanonical {
			canonical = false
		}
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return Value{}, false, p.errorf("expected : after a property name")
		}
		p.i++
		v, ok, err := p.element(depth + 1)
		if err != nil {
			return Value{}, false, err
		}
		canonical = canonical && ok
		at := -1
		if index != nil {
			if j, ok := index[name]; ok {
				at = j
			}
		} else {
			for j := range members {
				if members[j].Name == name {
					at = j
					break
				}
			}
		}
		if at >= 0 {
			members[at].Value = v // JSON.parse: the last one wins, in the first one's place
			canonical = false
		} else {
			members = append(members, Member{name, v})
			if index != nil {
				index[name] = len(members) - 1
			} else if len(members) > 16 {
				index = make(map[string]int, 2*len(members))
				for j, m := range members {
					index[m.Name] = j
				}
			}
		}
		done, ws, err := p.next('}')
		if err != nil {
			return Value{}, false, err
		}
		canonical = canonical && !ws
		if done {
			ordered, moved := orderMembers(members)
			return ObjectOf(ordered...), canonical && !moved, nil
		}
	}
}

// orderMembers puts integer-like names (array indices) first, ascending,
// as every JavaScript object orders its own properties.
func orderMembers(members []Member) ([]Member, bool) {
	n := 0
	for _, m := range members {
		if _, ok := arrayIndex(m.Name); ok {
			n++
		}
	}
	if n == 0 {
		return members, false
	}
	out := make([]Member, 0, len(members))
	for _, m := range members {
		if _, ok := arrayIndex(m.Name); ok {
			out = append(out, m)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, _ := arrayIndex(out[i].Name)
		b, _ := arrayIndex(out[j].Name)
		return a < b
	})
	for _, m := range members {
		if _, ok := arrayIndex(m.Name); !ok {
			out = append(out, m)
		}
	}
	for i := range out {
		if out[i].Name != members[i].Name {
			return out, true
		}
	}
	return out, false
}

// arrayIndex reports whether name is the canonical decimal form of an
// integer below 2³²−1, the names JavaScript treats as array indices.
func arrayIndex(name string) (uint64, bool) {
	if name == "" || len(name) > 10 || (len(name) > 1 && name[0] == '0') {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, n < math.MaxUint32
}

func (p *parser) number() (Value, error) {
	start := p.i
	if p.data[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.data) && p.data[p.i] >= '0' && p.data[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(p.data) && p.data[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return Value{}, p.errorf("invalid number")
	}
	if p.i < len(p.data) && p.data[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return Value{}, p.errorf("invalid number")
		}
	}
	if p.i < len(p.data) && (p.data[p.i] == 'e' || p.data[p.i] == 'E') {
		p.i++
		if p.i < len(p.data) && (p.data[p.i] == '+' || p.data[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return Value{}, p.errorf("invalid number")
		}
	}
	f, err := strconv.ParseFloat(string(p.data[start:p.i]), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return Value{}, p.errorf("invalid number")
	}
	return Num(f), nil // out of range: ±Inf or 0, as in JavaScript
}

// str reads a string starting at its opening quote. canonical reports
// whether its text is what JSON.stringify writes for it.
func (p *parser) str() (s string, canonical bool, err error) {
	p.i++ // "
	start := p.i
	// Fast path: no escapes and valid UTF-8, the text of nearly every
	// string omp writes.
	for p.i < len(p.data) && stringPlain[p.data[p.i]] {
		p.i++
	}
	asciiEnd := start + asciiRun(p.data[start:p.i])
	if p.i < len(p.data) && p.data[p.i] == '"' {
		if seg := p.data[start:p.i]; asciiEnd == p.i || utf8.Valid(seg) {
			p.i++
			if p.owned && len(seg) > 0 {
				return unsafe.String(&seg[0], len(seg)), true, nil
			}
			return string(seg), true, nil
		}
	}
	// An escape, a control character, invalid UTF-8 or the end: decode
	// rune by rune from the first byte that is not plain ASCII.
	p.i = asciiEnd
	canonical = true
	// One allocation the size of the raw text, handed over as the string:
	// the text decoded is no longer but for invalid bytes (each a U+FFFD),
	// and growing a buffer by doubling, then copying it, was most of the
	// time of decoding a session's long tool outputs.
	b := make([]byte, 0, p.rawStringLen(start))
	b = append(b, p.data[start:p.i]...)
	for {
		if p.i >= len(p.data) {
			return "", false, p.errorf("unterminated string")
		}
		c := p.data[p.i]
		switch {
		case c == '"':
			p.i++
			return unsafe.String(unsafe.SliceData(b), len(b)), canonical, nil
		case c < 0x20:
			return "", false, p.errorf("control character in string")
		case c == '\\':
			esc := p.i
			if b, err = p.escape(b); err != nil {
				return "", false, err
			}
			canonical = canonical && canonicalEscape(p.data[esc:p.i])
		case c < 0x80:
			// A run of plain ASCII at once.
			j := p.i + 1
			for j < len(p.data) && asciiPlain[p.data[j]] {
				j++
			}
			b = append(b, p.data[p.i:j]...)
			p.i = j
		default:
			r, size := decodeRuneWHATWG(p.data[p.i:])
			if r == utf8.RuneError && string(p.data[p.i:p.i+size]) != "\uFFFD" {
				canonical = false // invalid UTF-8, replaced
			}
			b = utf8.AppendRune(b, r)
			p.i += size
		}
	}
}

// rawStringLen is the length of the raw text of the string whose text
// starts at start, up to its closing quote; 0 if it is malformed (its
// decoding says how).
func (p *parser) rawStringLen(start int) int {
	q := parser{data: p.data, i: start - 1}
	if !q.skipString() {
		return 0
	}
	return q.i - 1 - start
}

// canonicalEscape reports whether esc is how JSON.stringify escapes the
// character it denotes: \" \\ \b \f \n \r \t, \u00xx for other control
// characters and \udxxx for a lone surrogate, in lowercase hex. (A
// surrogate pair is one escape of two; JSON.stringify writes the
// character itself.)
func canonicalEscape(esc []byte) bool {
	if len(esc) == 2 {
		return esc[1] != '/'
	}
	if len(esc) != 6 {
		return false
	}
	hex := string(esc[2:])
	if strings.ToLower(hex) != hex {
		return false
	}
	r, _ := strconv.ParseUint(hex, 16, 32)
	switch {
	case r == '\b' || r == '\f' || r == '\n' || r == '\r' || r == '\t':
		return false
	case r < 0x20:
		return true
	case r >= 0xD800 && r < 0xE000:
		return true
	}
	return false
}

func (p *parser) escape(b []byte) ([]byte, error) {
	if p.i+1 >= len(p.data) {
		return nil, p.errorf("unterminated string")
	}
	c := p.data[p.i+1]
	p.i += 2
	switch c {
	case '"', '\\', '/':
		return append(b, c), nil
	case 'b':
		return append(b, '\b'), nil
	case 'f':
		return append(b, '\f'), nil
	case 'n':
		return append(b, '\n'), nil
	case 'r':
		return append(b, '\r'), nil
	case 't':
		return append(b, '\t'), nil
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return nil, p.errorf("invalid \\u escape")
		}
		if r >= 0xD800 && r < 0xDC00 && p.i+1 < len(p.data) && p.data[p.i] == '\\' && p.data[p.i+1] == 'u' {
			save := p.i
			p.i += 2
			if lo, ok := p.hex4(); ok && lo >= 0xDC00 && lo < 0xE000 {
				return utf8.AppendRune(b, (r-0xD800)<<10+(lo-0xDC00)+0x10000), nil
			}
			p.i = save
		}
		return appendWTF8(b, r), nil
	}
	p.i--
	return nil, p.errorf("invalid escape")
}

func (p *parser) hex4() (rune, bool) {
	if p.i+4 > len(p.data) {
		return 0, false
	}
	var r rune
	for _, c := range p.data[p.i : p.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.i += 4
	return r, true
}

// appendWTF8 appends r, which may be a lone surrogate, as WTF-8.
func appendWTF8(b []byte, r rune) []byte {
	if r >= 0xD800 && r < 0xE000 {
		return append(b, 0xED, byte(0x80|(r>>6)&0x3F), byte(0x80|r&0x3F))
	}
	return utf8.AppendRune(b, r)
}
