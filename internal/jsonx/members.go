package jsonx

import "errors"

// ErrNotObject is Members's error for a text that is not a JSON object,
// ErrNotArray Elements's for one that is not an array.
var (
	ErrNotObject = errors.New("not a JSON object")
	ErrNotArray  = errors.New("not a JSON array")
)

// Members reads the JSON object at the start of data (after white space)
// a member at a time, without building any value: fn gets each member's
// name, decoded as JSON.parse decodes it (valid until fn returns), and
// the bytes of its value, in order, duplicates included (JSON.parse keeps
// the last). The whole object is checked as JSON.parse checks it, nested
// values to MaxDepth, iteratively: a value of any width or depth costs no
// memory but a byte a level. It returns the offset where the object ends,
// which may be followed by more text (see ParsePrefix). A text that is
// valid JSON but not an object is ErrNotObject.
func Members(data []byte, fn func(name []byte, value []byte)) (end int, err error) {
	return MembersWithin(data, "", nil, fn)
}

// MembersWithin is Members that also reads, in the same pass, the members
// of the one member called inner whose value is an object: fnInner gets
// each of them (as fn does), before fn gets inner itself. A session line's
// envelope asks a few members of its message, which holds the line's long
// text: read so, that text is scanned once, not once for the line and
// again for the message. Of a duplicated inner member, fnInner sees the
// members of each.
func MembersWithin(data []byte, inner string, fnInner, fn func(name []byte, value []byte)) (end int, err error) {
	p := parser{data: data}
	p.skipSpace()
	if p.i >= len(p.data) || p.data[p.i] != '{' {
		if p.skipIter() {
			return p.i, ErrNotObject
		}
		return 0, p.errorf("not JSON")
	}
	if err := p.members(inner, fnInner, fn); err != nil {
		return 0, err
	}
	return p.i, nil
}

// members reads the object at p.i (its '{'), calling fn for each member,
// and for the members of the member inner (an object), fnInner; it leaves
// p.i past the '}'.
func (p *parser) members(inner string, fnInner, fn func(name []byte, value []byte)) error {
	p.i++
	p.skipSpace()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return nil
	}
	for {
		p.skipSpace()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return p.errorf("expected a member name")
		}
		name, err := p.name()
		if err != nil {
			return err
		}
		p.skipSpace()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return p.errorf("expected ':' after a member name")
		}
		p.i++
		p.skipSpace()
		start := p.i
		if fnInner != nil && p.i < len(p.data) && p.data[p.i] == '{' && string(name) == inner {
			if err := p.members("", nil, fnInner); err != nil {
				return err
			}
			fn(name, p.data[start:p.i])
		} else {
			if !p.skipIter() {
				return p.errorf("invalid value")
			}
			fn(name, p.data[start:p.i])
		}
		p.skipSpace()
		if p.i >= len(p.data) {
			return p.errorf("unexpected end of the object")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return nil
		default:
			return p.errorf("expected ',' or '}'")
		}
	}
}

// Elements reads the JSON array at the start of data as Members reads an
// object: fn gets the bytes of each element in order, nothing is built,
// and the whole array is checked. It returns the offset where the array
// ends. A text that is valid JSON but not an array is ErrNotArray.
func Elements(data []byte, fn func(value []byte)) (end int, err error) {
	p := parser{data: data}
	p.skipSpace()
	if p.i >= len(p.data) || p.data[p.i] != '[' {
		if p.skipIter() {
			return p.i, ErrNotArray
		}
		return 0, p.errorf("not JSON")
	}
	p.i++
	p.skipSpace()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		return p.i + 1, nil
	}
	for {
		p.skipSpace()
		start := p.i
		if !p.skipIter() {
			return 0, p.errorf("invalid value")
		}
		fn(p.data[start:p.i])
		p.skipSpace()
		if p.i >= len(p.data) {
			return 0, p.errorf("unexpected end of the array")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case ']':
			return p.i + 1, nil
		default:
			return 0, p.errorf("expected ',' or ']'")
		}
	}
}

// name reads a member name: its bytes when it has no escapes, else its
// decoding in the parser's scratch buffer.
func (p *parser) name() ([]byte, error) {
	start := p.i + 1
	for j := start; j < len(p.data); j++ {
		switch c := p.data[j]; {
		case c == '"':
			p.i = j + 1
			return p.data[start:j], nil
		case c == '\\' || c < 0x20 || c >= 0x80:
			s, _, err := p.str()
			return []byte(s), err
		}
	}
	return nil, p.errorf("unterminated string")
}

// skipIter moves past one value, reporting whether it is valid JSON,
// nested to MaxDepth, with an explicit stack of the brackets it is in
// rather than recursion: a byte a level.
func (p *parser) skipIter() bool {
	var stack []byte
	for {
		p.skipSpace()
		if p.i >= len(p.data) {
			return false
		}
		switch c := p.data[p.i]; {
		case c == '{' || c == '[':
			if len(stack) >= MaxDepth {
				return false
			}
			closing := byte(']')
			if c == '{' {
				closing = '}'
			}
			stack = append(stack, closing)
			p.i++
			p.skipSpace()
			if p.i < len(p.data) && p.data[p.i] == closing {
				p.i++
				stack = stack[:len(stack)-1]
				break
			}
			if closing == '}' && !p.memberName() {
				return false
			}
			continue // the first value inside
		case c == '"':
			if !p.skipString() {
				return false
			}
		case c == '-' || c >= '0' && c <= '9':
			if _, err := p.number(); err != nil {
				return false
			}
		default:
			if !p.literal("true") && !p.literal("false") && !p.literal("null") {
				return false
			}
		}
		// After a value: close what it ends, or go on to the next.
		for {
			if len(stack) == 0 {
				return true
			}
			p.skipSpace()
			if p.i >= len(p.data) {
				return false
			}
			top := stack[len(stack)-1]
			if p.data[p.i] == top {
				p.i++
				stack = stack[:len(stack)-1]
				continue
			}
			if p.data[p.i] != ',' {
				return false
			}
			p.i++
			if top == '}' && !p.memberName() {
				return false
			}
			break
		}
	}
}

// memberName moves past a member's name and its colon.
func (p *parser) memberName() bool {
	p.skipSpace()
	if p.i >= len(p.data) || p.data[p.i] != '"' || !p.skipString() {
		return false
	}
	p.skipSpace()
	if p.i >= len(p.data) || p.data[p.i] != ':' {
		return false
	}
	p.i++
	return true
}
