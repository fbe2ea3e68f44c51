package recall

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxRequestBytes bounds one request line. Every tool's arguments are a
// few hundred bytes; a line over the bound is not buffered: it is
// answered with an error for its id and dropped, and the server reads
// the next line. (The SDK's own bound ends the connection instead.)
const MaxRequestBytes = 1 << 20

// The methods a refused request is answered as: the client is told that
// no such method exists, under a name that says why. The SDK ends the
// whole connection on a line it cannot take (one that is not JSON, not a
// JSON-RPC 2.0 message, a batch, an id of another type), so such a line
// never reaches it: a request whose id can be read is answered as one of
// these, and anything else is dropped.
const (
	TooLargeMethod   = "xdev/refused: the request is over 1 MiB"
	NotJSONMethod    = "xdev/refused: the request is not JSON"
	NotMessageMethod = "xdev/refused: the request is not a JSON-RPC 2.0 message"
	BatchMethod      = "xdev/refused: JSON-RPC batches are not supported"
)

// DrainTimeout bounds how long the server goes on answering the calls in
// flight once its input has ended (a client that wrote its last requests
// and closed stdin still gets their answers).
const DrainTimeout = 2 * time.Minute

// Transport is the server's transport over r and w (stdin and stdout):
// newline-delimited JSON-RPC, as mcp.StdioTransport, with each line the
// SDK cannot take refused alone, and the calls in flight when r ends
// answered before the connection closes.
func Transport(r io.Reader, w io.Writer) mcp.Transport {
	return transport(r, w, newInflight())
}

// transport is Transport counting the requests in flight in inflight.
func transport(r io.Reader, w io.Writer, inflight *inflight) mcp.Transport {
	pr, pw := io.Pipe()
	go func() {
		err := copyBounded(pw, r, MaxRequestBytes, inflight)
		inflight.wait(DrainTimeout)
		pw.CloseWithError(err)
	}()
	return &mcp.IOTransport{Reader: pr, Writer: &answerWriter{w: w, inflight: inflight}}
}

// inflight counts the requests passed on and not yet answered, by id.
type inflight struct {
	mu   sync.Mutex
	ids  map[string]int
	idle chan struct{} // closed while none is in flight
}

func newInflight() *inflight {
	f := &inflight{ids: map[string]int{}, idle: make(chan struct{})}
	close(f.idle)
	return f
}

// idKey is the key of a request's id, whatever its spelling ("\u0061"
// and "a", 5 and 5.0 are one id).
func idKey(id json.RawMessage) string {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return string(id)
	}
	if f, ok := v.(float64); ok {
		return "n" + strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprintf("s%v", v)
}

func (f *inflight) add(id json.RawMessage) {
	key := idKey(id)
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.ids) == 0 {
		f.idle = make(chan struct{})
	}
	f.ids[key]++
}

func (f *inflight) done(id json.RawMessage) {
	key := idKey(id)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ids[key] == 0 {
		return
	}
	if f.ids[key]--; f.ids[key] == 0 {
		delete(f.ids, key)
	}
	if len(f.ids) == 0 {
		close(f.idle)
	}
}

// wait returns once nothing is in flight, or after d, and reports
// whether nothing is.
func (f *inflight) wait(d time.Duration) bool {
	f.mu.Lock()
	idle := f.idle
	f.mu.Unlock()
	select {
	case <-idle:
		return true
	case <-time.After(d):
		return false
	}
}

// answerWriter is the SDK's output: each response it writes (a line
// with an id and a result or an error) ends that request's flight.
type answerWriter struct {
	w        io.Writer
	inflight *inflight
}

func (a *answerWriter) Write(p []byte) (int, error) {
	n, err := a.w.Write(p)
	for _, line := range bytes.Split(p, []byte("\n")) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &m) == nil && len(m.ID) > 0 && (m.Result != nil || m.Error != nil) {
			a.inflight.done(m.ID)
		}
	}
	return n, err
}

func (a *answerWriter) Close() error { return nil }

// copyBounded copies r's lines to w, each a JSON-RPC 2.0 message the SDK
// takes within max bytes; any other line becomes a request of one of the
// refusal methods under the id it names, or nothing when it names none
// the client could match. Each request passed on is counted in flight.
func copyBounded(w io.Writer, r io.Reader, max int, inflight *inflight) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	refuse := func(id json.RawMessage, method string) error {
		if id == nil {
			return nil
		}
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method})
		inflight.add(id)
		_, err := w.Write(append(req, '\n'))
		return err
	}
	pass := func(v []byte) error {
		m, method, ok := message(v)
		switch {
		case method != "":
			return refuse(m.ID, method)
		case !ok:
			return nil
		case m.Method != nil && m.ID != nil:
			inflight.add(m.ID)
		case m.Method != nil && string(*m.Method) == "notifications/cancelled":
			// A cancelled request is not answered (MCP's cancellation).
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if json.Unmarshal(m.Params, &p) == nil && p.RequestID != nil {
				inflight.done(p.RequestID)
			}
		}
		_, err := w.Write(append(v, '\n'))
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
			id, _ := leadingID(head)
			if werr := refuse(id, TooLargeMethod); werr != nil {
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
				werr = pass(v)
			} else {
				id, _ := leadingID(v)
				werr = refuse(id, NotJSONMethod)
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

// rpcMessage is what copyBounded checks of a message.
type rpcMessage struct {
	JSONRPC *string          `json:"jsonrpc"`
	ID      json.RawMessage  `json:"id"`
	Method  *json.RawMessage `json:"method"`
	Params  json.RawMessage  `json:"params"`
	Result  json.RawMessage  `json:"result"`
	Error   json.RawMessage  `json:"error"`
}

// message reads v, a JSON value, as a JSON-RPC 2.0 message the SDK takes.
// ok says it is one; otherwise refusal names the method to answer its id
// with ("" to drop it: a message whose id the client could not match).
// An id is a string or an integer, as the SDK takes it.
func message(v []byte) (m rpcMessage, refusal string, ok bool) {
	if v[0] == '[' {
		// A batch: each request in it is refused alone.
		var items []json.RawMessage
		_ = json.Unmarshal(v, &items)
		if len(items) > 0 {
			var first rpcMessage
			if json.Unmarshal(items[0], &first) == nil && validID(first.ID) {
				return first, BatchMethod, false
			}
		}
		return m, "", false
	}
	if v[0] != '{' || json.Unmarshal(v, &m) != nil {
		return rpcMessage{}, "", false
	}
	if m.ID != nil && !validID(m.ID) {
		return rpcMessage{}, "", false // no id the client could match
	}
	switch {
	case m.JSONRPC == nil || *m.JSONRPC != "2.0":
		return m, NotMessageMethod, false
	case m.Method != nil:
		var name string
		if json.Unmarshal(*m.Method, &name) != nil || name == "" {
			return m, NotMessageMethod, false
		}
		return m, "", true
	case m.ID != nil && (m.Result != nil || m.Error != nil):
		return m, "", true // a response
	}
	return rpcMessage{}, "", false
}

// validID reports whether id is a JSON-RPC id the SDK takes and answers:
// a string or an integer.
func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	if id[0] == '"' {
		var s string
		return json.Unmarshal(id, &s) == nil
	}
	if id[0] != '-' && (id[0] < '0' || id[0] > '9') {
		return false // null, true, an object: json.Unmarshal takes null into a float64 without a word
	}
	var f float64
	return json.Unmarshal(id, &f) == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// leadingID finds a request's id in the first bytes of its line: the
// value after the first "id" key at the top level, a string or an
// integer.
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
		if k == "id" && validID(v) {
			return v, true
		}
	}
	return nil, false
}
