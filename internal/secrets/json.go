package secrets

import (
	"bytes"

	"github.com/go-json-experiment/json/jsontext"
)

// MaskJSON returns the JSON text raw with the secrets in each of its
// strings (names and values) masked, the rest as it was; n is how many
// were masked, and raw itself is returned when n is 0 or raw is not JSON
// (then nothing of it is known to be a string, and the whole is masked as
// text). Masking the strings, not the text, keeps the result JSON: a mask
// never splits an escape.
func (d *Detector) MaskJSON(raw []byte) (masked []byte, n int) {
	if len(d.Find(string(raw))) == 0 {
		// Every secret of a string is a secret of the text too, but for
		// one written with escapes (\n in a key block, \u0041): the text
		// is searched once, and a JSON text with none is left whole.
		if !bytes.Contains(raw, []byte(`\`)) {
			return raw, 0
		}
	}
	dec := jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	var out bytes.Buffer
	var tail []byte // the blanks after the value
	enc := jsontext.NewEncoder(&out, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true), jsontext.Multiline(false))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			s, k := d.Mask(string(raw))
			return []byte(s), k
		}
		if tok.Kind() == '"' {
			if s, k := d.Mask(tok.String()); k > 0 {
				tok, n = jsontext.String(s), n+k
			}
		}
		if err := enc.WriteToken(tok); err != nil {
			s, k := d.Mask(string(raw))
			return []byte(s), k
		}
		if dec.StackDepth() == 0 {
			// One value is the whole of a JSON text: what follows it, a
			// second value ({} {}) or anything else, makes the line text,
			// which the encoder would otherwise write on lines of its own.
			tail = raw[dec.InputOffset():]
			if len(bytes.Trim(tail, jsonSpace)) > 0 {
				s, k := d.Mask(string(raw))
				return []byte(s), k
			}
			break
		}
	}
	if n == 0 {
		return raw, 0
	}
	return append(bytes.TrimSuffix(out.Bytes(), []byte("\n")), tail...), n
}

// jsonSpace is the white space JSON allows between tokens (RFC 8259 §2).
const jsonSpace = " \t\r\n"
