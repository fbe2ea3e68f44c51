package jsonx

import "encoding/binary"

// plainRun returns how many bytes from the start of b are plain string
// text: none of them a quote, a backslash or a control character (below
// 0x20), the three bytes that end or interrupt a JSON string's run. It
// tests eight bytes at a time (a word's bytes compared at once, as
// strings.IndexByte's portable code does), since skipping the long
// strings of a session line (a tool's output, a file read) byte by byte
// was most of what reading a line's envelope cost.
func plainRun(b []byte) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ (ones * '"')
		s := x ^ (ones * '\\')
		// A byte is zero in q or s, or below 0x20 in x, exactly when its
		// high bit is set here (false hits only above a true one, so a
		// word with none is never taken for one with some).
		if ((q-ones)&^q|(s-ones)&^s|(x-ones*0x20)&^x)&highs != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
			break
		}
	}
	return i
}

// asciiRun returns how many bytes from the start of b are ASCII, eight
// at a time.
func asciiRun(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(b) && b[i] < 0x80; i++ {
	}
	return i
}
