package jsonx

import "encoding/binary"

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
