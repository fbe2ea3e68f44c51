package recall

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxRequestBytes bounds one request line. Every tool's arguments are a
// few hundred bytes; a line over the bound is not buffered: it is
// answered with an error for its id and dropped, and the server reads
// the next line. (The SDK's own bound ends the connection instead.)
const MaxRequestBytes = 1 << 20

// The methods a refused request is answered as: the client is told that
// no such method exists, under a name that says why. The SDK reads its
// input as one stream of JSON, so a line that is not JSON (cut short,
// junk) would swallow the lines after it: such a line never reaches it.
const (
	TooLargeMethod = "xdev/refused: the request is over 1 MiB"
	NotJSONMethod  = "xdev/refused: the request is not JSON"
)

// Transport is the server's transport over r and w (stdin and stdout):
// newline-delimited JSON-RPC, as mcp.StdioTransport, with each line
// that is too long or not JSON refused alone.
func Transport(r io.Reader, w io.Writer) mcp.Transport {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(copyBounded(pw, r, MaxRequestBytes)) }()
	return &mcp.IOTransport{Reader: pr, Writer: nopCloser{w}}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// copyBounded copies r's lines to w, each a JSON value within max bytes;
// any other line becomes a request of TooLargeMethod or NotJSONMethod
// under the id its first bytes name, or nothing when they name none.
func copyBounded(w io.Writer, r io.Reader, max int) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	refuse := func(head []byte, method string) error {
		id, ok := leadingID(head)
		if !ok {
			return nil
		}
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method})
		_, err := w.Write(append(req, '\n'))
		return err
	}
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > max {
			// Over the bound: keep the head (for the id), drop the rest
			// of the line as it comes.
			head := append(line, chunk...)[:min(len(line)+len(chunk), 4096)]
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if werr := refuse(head, TooLargeMethod); werr != nil {
				return werr
			}
			line = line[:0]
			if err != nil {
				return ignoreEOF(err)
			}
			continue
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if v := bytes.TrimSpace(line); len(v) > 0 {
			var werr error
			if json.Valid(v) {
				_, werr = w.Write(append(v, '\n'))
			} else {
				werr = refuse(v, NotJSONMethod)
			}
			if werr != nil {
				return werr
			}
		}
		line = line[:0]
		if err != nil {
			return ignoreEOF(err)
		}
	}
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// leadingID finds a request's id in the first bytes of its line: the
// value after the first "id" key at the top level, a number or a string.
func leadingID(head []byte) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		if k == "id" && len(v) > 0 && (v[0] == '"' || v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
			return v, true
		}
	}
	return nil, false
}
