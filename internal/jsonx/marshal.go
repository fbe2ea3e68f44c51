package jsonx

import (
	"errors"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Marshal encodes v as encoding/json/v2 does, except that a string holding
// WTF-8 (a lone surrogate, as Parse keeps it) is written as JSON.stringify
// writes it, "\ud800" and all, instead of failing as invalid UTF-8. It is
// what every writer of session data uses, so that a title, a label or a
// name read from a file with a lone surrogate in it is written back as omp
// would write it, never refused and never replaced by U+FFFD.
func Marshal(v any, opts ...json.Options) ([]byte, error) {
	return json.Marshal(v, append(opts, marshalOptions)...)
}

// marshalOptions make every string that is not valid UTF-8 go through
// AppendString, and keep the escapes it writes: the encoder would
// otherwise reject (or, allowed, replace) a lone surrogate escape.
var marshalOptions = json.JoinOptions(
	json.WithMarshalers(json.MarshalToFunc(func(enc *jsontext.Encoder, s string) error {
		if utf8.ValidString(s) {
			return errors.ErrUnsupported // the default encoding
		}
		return enc.WriteValue(jsontext.Value(AppendString(nil, s)))
	})),
	jsontext.AllowInvalidUTF8(true),
	jsontext.PreserveRawStrings(true),
)
