package jsonx

import "unicode/utf8"

// decodeRuneWHATWG decodes the first character of b, which starts with a
// byte ≥ 0x80, as the WHATWG UTF-8 decoder (TextDecoder) does: an invalid
// sequence yields U+FFFD for its maximal invalid subpart, which may be
// several bytes (E2 82 followed by ASCII is one U+FFFD, not two).
func decodeRuneWHATWG(b []byte) (rune, int) {
	if r, size := utf8.DecodeRune(b); r != utf8.RuneError || size > 1 {
		return r, size
	}
	c := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return utf8.RuneError, 1
	}
	i := 1
	for ; i <= need && i < len(b); i++ {
		if b[i] < lo || b[i] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return utf8.RuneError, i
}

// DecodeUTF8 returns b as valid UTF-8, replacing invalid sequences as
// TextDecoder does. Valid input is returned as is.
func DecodeUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		if b[i] < 0x80 {
			out = append(out, b[i])
			i++
			continue
		}
		r, size := decodeRuneWHATWG(b[i:])
		out = utf8.AppendRune(out, r)
		i += size
	}
	return string(out)
}

// DecodeRuneInString decodes the first code point of s as a JavaScript
// string holds it: a lone surrogate held as WTF-8 (ED A0–BF 80–BF) is one
// code point, and an invalid sequence reads as U+FFFD for its maximal
// invalid subpart, as TextDecoder reads it. It returns (RuneError, 0) for
// an empty s.
func DecodeRuneInString(s string) (rune, int) {
	if s == "" {
		return utf8.RuneError, 0
	}
	if s[0] < utf8.RuneSelf {
		return rune(s[0]), 1
	}
	if len(s) >= 3 && s[0] == 0xED && s[1] >= 0xA0 && s[1] <= 0xBF && s[2] >= 0x80 && s[2] <= 0xBF {
		return rune(s[1]&0x3F)<<6 | rune(s[2]&0x3F) | 0xD000, 3
	}
	if r, size := utf8.DecodeRuneInString(s); r != utf8.RuneError || size > 1 {
		return r, size
	}
	n := min(len(s), 4)
	return decodeRuneWHATWG([]byte(s[:n]))
}

// WellFormed returns s with every invalid sequence replaced by U+FFFD as
// TextDecoder replaces it, keeping the lone surrogates a JavaScript string
// may hold (as WTF-8): text from outside (a command line) made into what
// Parse would have read. Valid input is returned as is.
func WellFormed(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	out := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := DecodeRuneInString(s[i:])
		if r >= 0xD800 && r < 0xE000 {
			out = append(out, s[i:i+size]...)
		} else {
			out = utf8.AppendRune(out, r)
		}
		i += size
	}
	return string(out)
}
