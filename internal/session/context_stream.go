package session

import (
	"errors"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/jsonx"
)

// A session that was never compacted has its whole file for a context.
// Holding it to build the context would take many times the file's size
// (the lines, their parse, the messages), so such a context is read a
// message at a time instead: ReadContext opens the file windowed when
// its window is small, and otherwise through an Index, where the rules
// run on each entry's skeleton (the members omp's rules read, without
// the text) and each surviving message is then read, made and decoded
// again from its line as it is asked for. The messages are
// BuildContext's, message for message (TestContextStreamEqualsBuild).

// DefaultMaxWindowBytes is the window ReadContext holds in memory; a
// larger context is streamed.
const DefaultMaxWindowBytes = 8 << 20

// ContextReader is a session's context, read by ReadContext: the
// settings, and the messages one at a time.
type ContextReader struct {
	// Context holds the leaf, the models, the thinking level and the
	// missing blobs; its Messages are read through Each.
	Context
	store *Store // a windowed load: Messages are in memory
	x     *Index // a streamed one
	plan  contextPlan
	path  []int // the path's index entries, for each step of the plan
}

// ReadContext reads the context of the session at path: windowed as Open
// reads it when its window is at most opts.MaxWindowBytes
// (DefaultMaxWindowBytes when zero), else streamed from the file.
func ReadContext(path string, opts *OpenOptions) (*ContextReader, error) {
	o := OpenOptions{}
	if opts != nil {
		o = *opts
	}
	if o.MaxWindowBytes <= 0 {
		o.MaxWindowBytes = DefaultMaxWindowBytes
	}
	s, err := Open(path, &o)
	if err == nil {
		return ContextOf(s), nil
	}
	if !errors.Is(err, ErrWindowTooLarge) {
		return nil, err
	}
	o.MaxWindowBytes = 0
	x, err := OpenIndex(path, &o)
	if err != nil {
		return nil, err
	}
	return x.readContext()
}

// ContextOf is the context of an open store, as a ContextReader.
func ContextOf(s *Store) *ContextReader {
	return &ContextReader{store: s, Context: s.BuildContext()}
}

// readContext plans the context at the index's leaf from skeletons.
func (x *Index) readContext() (*ContextReader, error) {
	c := &ContextReader{x: x}
	if x.Len() == 0 {
		c.Context = Context{Models: map[string]string{}, ThinkingLevel: "off"}
		return c, nil
	}
	leaf := x.Leaf()
	blobs := &blobResolver{s: x.s}
	path := &skeletonPath{}
	var buf []byte
	for _, i := range x.PathTo(leaf) {
		e, v, ok, err := x.loadStep(i, &buf, blobs)
		if err != nil {
			return nil, err
		}
		if ok {
			path.add(e, skeleton(v))
			c.path = append(c.path, i)
		}
	}
	c.plan = planContext(path, blobs)
	// The messages are made again from the lines: what the plan's values
	// held is let go.
	for i := range c.plan.msgs {
		c.plan.msgs[i].v = jsonx.Value{}
	}
	c.Context = c.plan.Context
	c.LeafID = x.ID(leaf)
	return c, nil
}

// skeletonPath is a streamed build's path: each entry's skeleton kept as
// its JSON text, parsed again when the rules ask for it, so that the
// plan of a long session holds a few dozen bytes an entry.
type skeletonPath struct {
	entries []*Entry // id and type
	text    [][]byte
}

func (p *skeletonPath) add(e *Entry, v jsonx.Value) {
	p.entries = append(p.entries, &Entry{ID: e.ID, Type: e.Type})
	p.text = append(p.text, v.JSON())
}

func (p *skeletonPath) Len() int { return len(p.entries) }

func (p *skeletonPath) At(i int) step {
	v, _ := jsonx.Parse(p.text[i]) // its own encoding: it parses
	return step{p.entries[i], v}
}

// loadStep reads entry i's line and loads it as omp does (Store.loadStep).
func (x *Index) loadStep(i int, buf *[]byte, blobs *blobResolver) (*Entry, jsonx.Value, bool, error) {
	raw, err := x.AppendRaw((*buf)[:0], i)
	if err != nil {
		return nil, jsonx.Value{}, false, err
	}
	*buf = raw
	e := &Entry{Type: x.Type(i), ID: x.ID(i), ParentID: x.ParentID(i), raw: raw, line: x.Line(i)}
	v, ok := x.s.loadStep(e, blobs)
	e.raw = nil // the value holds what is needed; the buffer is reused
	return e, v, ok, nil
}

// Len returns how many messages the context has.
func (c *ContextReader) Len() int {
	if c.store != nil {
		return len(c.Context.Messages)
	}
	return len(c.plan.msgs)
}

// Each calls fn with each message of the context, in order. A streamed
// context reads, makes and decodes each from its line as it goes: fn may
// keep m, but the reader holds none of them.
func (c *ContextReader) Each(fn func(m *ai.Message) error) error {
	if c.store != nil {
		for i := range c.Context.Messages {
			if err := fn(&c.Context.Messages[i]); err != nil {
				return err
			}
		}
		return nil
	}
	blobs := &blobResolver{s: c.x.s}
	var buf []byte
	for _, pm := range c.plan.msgs {
		v := pm.v
		if pm.src >= 0 {
			_, entry, _, err := c.x.loadStep(c.path[pm.src], &buf, blobs)
			if err != nil {
				return err
			}
			v = pm.make(entry)
			if pm.strip {
				v, _ = stripBlocks(v, c.plan.paired)
			}
		}
		var m ai.Message
		m.DecodeJS(v)
		if err := fn(&m); err != nil {
			return err
		}
	}
	return nil
}

// Tokens approximates the context's size as BuildContext's Tokens does.
// For a streamed context it reads every message once.
func (c *ContextReader) Tokens() (int64, error) {
	if c.store != nil {
		return c.Context.Tokens, nil
	}
	var t tokenCount
	err := c.Each(func(m *ai.Message) error { t.add(m); return nil })
	return t.total(), err
}

// Close releases the file of a streamed context.
func (c *ContextReader) Close() error {
	if c.x != nil {
		return c.x.Close()
	}
	return nil
}

// Header is the session's header; Title its title and source; Malformed
// the lines skipped as unreadable; Streamed whether the messages are read
// from the file as they are asked for.
func (c *ContextReader) Header() Header {
	if c.store != nil {
		return c.store.Header()
	}
	return c.x.Header()
}

func (c *ContextReader) Title() (string, TitleSource) {
	if c.store != nil {
		return c.store.Title()
	}
	return c.x.Title()
}

func (c *ContextReader) Malformed() int {
	if c.store != nil {
		return c.store.Malformed()
	}
	return c.x.Malformed()
}

func (c *ContextReader) Streamed() bool { return c.x != nil }

// skeleton is an entry's value with only what omp's context rules read of
// it, detached from its line: a message entry keeps its role, provider,
// model, stop reason, tool call id, custom type and attribution, and of
// its content the tool calls' ids and a stand-in for everything else
// (whether a block of text, thinking or redacted thinking was there),
// with retryRecovery set where entryMessage would drop the message; a
// custom_message keeps its type, attribution and the kind of its
// content; a branch summary whether it has one. Compactions and context
// notebooks (few, and read in full by the rules) are kept whole, other
// entries with their long strings cut to stand-ins. The messages are made
// again from the lines.
func skeleton(v jsonx.Value) jsonx.Value {
	pick := func(from jsonx.Value, names ...string) []jsonx.Member {
		var out []jsonx.Member
		for _, n := range names {
			if x := from.Get(n); x.Defined() {
				out = append(out, jsonx.Member{Name: n, Value: x.Detach()})
			}
		}
		return out
	}
	envelope := pick(v, "type", "id", "timestamp")
	switch t := v.Get("type"); {
	case t.Is(TypeCompaction), t.Is(TypeCustom) && v.Get("customType").Is(customContextNotes):
		return v.Detach()
	case t.Is(TypeMessage):
		m := v.Get("message")
		if !m.Defined() {
			return jsonx.ObjectOf(envelope...)
		}
		sk := pick(m, "role", "provider", "model", "stopReason", "toolCallId", "customType", "attribution")
		if m.Get("role").Is("assistant") && !entryMessage(v).Defined() {
			sk = append(sk, jsonx.Member{Name: "retryRecovery", Value: jsonx.BoolValue(true)})
		}
		switch c := m.Get("content"); c.Kind() {
		case jsonx.Array:
			var blocks []jsonx.Value
			other, redacted := false, false
			for _, b := range c.Items() {
				switch {
				case b.Get("type").Is(ai.BlockToolCall):
					blocks = append(blocks, jsonx.ObjectOf(pick(b, "type", "id")...))
				case b.Get("type").Is(ai.BlockRedactedThinking):
					redacted = true
				default:
					other = true
				}
			}
			// Stand-ins that are content to isEmptyErrorTurn: a turn it
			// finds empty has retryRecovery set above.
			if other {
				blocks = append(blocks, jsonx.ObjectOf(jsonx.Member{Name: "type", Value: jsonx.Str(ai.BlockText)},
					jsonx.Member{Name: "text", Value: jsonx.Str("…")}))
			}
			if redacted {
				blocks = append(blocks, jsonx.ObjectOf(jsonx.Member{Name: "type", Value: jsonx.Str(ai.BlockRedactedThinking)},
					jsonx.Member{Name: "data", Value: jsonx.Str("…")}))
			}
			sk = append(sk, jsonx.Member{Name: "content", Value: jsonx.ArrayOf(blocks...)})
		case jsonx.Undefined:
		default:
			sk = append(sk, jsonx.Member{Name: "content", Value: standIn(c)})
		}
		return jsonx.ObjectOf(append(envelope, jsonx.Member{Name: "message", Value: jsonx.ObjectOf(sk...)})...)
	case t.Is(TypeCustomMessage):
		sk := append(envelope, pick(v, "customType", "attribution", "display")...)
		if c := v.Get("content"); c.Defined() {
			sk = append(sk, jsonx.Member{Name: "content", Value: standIn(c)})
		}
		return jsonx.ObjectOf(sk...)
	case t.Is(TypeBranchSummary):
		sk := append(envelope, pick(v, "fromId")...)
		if sum := v.Get("summary"); sum.Defined() {
			sk = append(sk, jsonx.Member{Name: "summary", Value: standIn(sum)})
		}
		return jsonx.ObjectOf(sk...)
	}
	return cutStrings(v)
}

// standIn is a value's stand-in in a skeleton: of its kind, with its
// truthiness (an empty string stays empty), and without its content.
func standIn(v jsonx.Value) jsonx.Value {
	switch v.Kind() {
	case jsonx.String:
		if v.String() == "" {
			return jsonx.Str("")
		}
		return jsonx.Str("…")
	case jsonx.Array:
		return jsonx.ArrayOf()
	case jsonx.Object:
		return jsonx.ObjectOf()
	}
	return v.Detach()
}

// skeletonString is the longest string an entry of another kind keeps in
// its skeleton.
const skeletonString = 256

// cutStrings is v detached, its strings over skeletonString bytes cut to
// stand-ins (blob references kept).
func cutStrings(v jsonx.Value) jsonx.Value {
	switch v.Kind() {
	case jsonx.String:
		if s := v.String(); len(s) > skeletonString && !IsBlobRef(s) {
			return standIn(v)
		}
	case jsonx.Array:
		items := v.Items()
		out := make([]jsonx.Value, len(items))
		for i, x := range items {
			out[i] = cutStrings(x)
		}
		return jsonx.ArrayOf(out...)
	case jsonx.Object:
		ms := v.Members()
		out := make([]jsonx.Member, len(ms))
		for i, m := range ms {
			out[i] = jsonx.Member{Name: m.Name, Value: cutStrings(m.Value)}
		}
		return jsonx.ObjectOf(out...)
	}
	return v.Detach()
}

// tokenCount is estimateTokens forward: the usage the last assistant turn
// reported, plus four characters a token after it.
type tokenCount struct {
	usage, chars int64
}

func (t *tokenCount) add(m *ai.Message) {
	if m.Role == ai.RoleAssistant && m.Usage != nil && m.StopReason != ai.StopAborted && m.StopReason != ai.StopError {
		u := m.Usage
		t.usage = u.TotalTokens
		if t.usage == 0 {
			t.usage = u.Input + u.Output + u.CacheRead + u.CacheWrite
		}
		t.chars = 0
		return
	}
	t.chars += int64(len(m.Content.String) + len(m.Summary) + len(m.Output))
	for _, b := range m.Content.Blocks {
		t.chars += int64(len(b.Thinking) + len(b.Arguments))
		if b.Type == ai.BlockText {
			t.chars += int64(len(b.Text))
		}
	}
}

func (t *tokenCount) total() int64 { return t.usage + t.chars/4 }
