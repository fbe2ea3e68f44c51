package session

import (
	"errors"
	"fmt"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/jsonx"
)

// A session that was never compacted has its whole file for a context.
// Holding it to build the context would take many times the file's size
// (the lines, their parse, the messages), so such a context is read a
// message at a time instead: ReadContext opens the file windowed when
// its window is small, and otherwise through an Index, where the rules
// run on the path's entries read and loaded again from their lines each
// time a rule asks for one (filePath), keeping of each surviving message
// only what the plan needs (planMsg), and each message is then made and
// decoded again from its line as it is asked for. Memory is the Index's
// few dozen bytes an entry, the plan's a message, and the longest line;
// the messages are BuildContext's, message for message
// (TestContextStreamEqualsBuild).

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
	path  []int32 // the path's index entries, for each step of the plan
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

// readContext plans the context at the index's leaf from the lines.
func (x *Index) readContext() (*ContextReader, error) {
	return x.readContextAt(x.Leaf())
}

// readContextAt plans the context from the lines as if entry leaf were
// the leaf.
func (x *Index) readContextAt(leaf int) (*ContextReader, error) {
	c := &ContextReader{x: x}
	if x.Len() == 0 {
		c.Context = Context{Models: map[string]string{}, ThinkingLevel: "off"}
		return c, nil
	}
	for _, i := range x.PathTo(leaf) {
		c.path = append(c.path, int32(i))
	}
	path := newFilePath(x, c.path)
	c.plan = planContext(path, &blobResolver{s: x.s})
	path.countBlobs()
	if path.err != nil {
		return nil, path.err
	}
	c.Context = c.plan.Context
	c.MissingBlobs += path.missing
	c.LeafID = x.ID(leaf)
	return c, nil
}

// filePath is a streamed build's path: each entry's value read and loaded
// again from its line whenever a rule asks for it (the rules walk the
// path a few times, mostly in order, so the last one read is kept). A blob an
// entry references is counted missing the first time the entry is read,
// as BuildContext counts it when it loads the path; the rules read no
// image data, so none is kept.
type filePath struct {
	x       *Index
	idx     []int32 // the path's index entries
	visited []bool
	missing int
	store   *blobResolver // the session's blob store
	last    int
	step    step
	err     error // the first line that could not be read again
}

func newFilePath(x *Index, idx []int32) *filePath {
	return &filePath{x: x, idx: idx, visited: make([]bool, len(idx)), store: &blobResolver{s: x.s}, last: -1}
}

// countBlobs counts the missing blobs of the entries no rule read, as
// BuildContext counts those of every entry on the path. A line that
// cannot name a blob (no reference in it, and no escape that could spell
// one) is not parsed.
func (p *filePath) countBlobs() {
	var buf []byte
	for i := range p.idx {
		if p.visited[i] || p.err != nil {
			continue
		}
		raw, err := p.x.AppendRaw(buf[:0], int(p.idx[i]))
		if err != nil {
			p.err = err
			return
		}
		buf = raw
		if mayNameBlob(raw) {
			p.At(i)
		}
	}
}

func (p *filePath) Len() int          { return len(p.idx) }
func (p *filePath) Type(i int) string { return p.x.Type(int(p.idx[i])) }

func (p *filePath) At(i int) step {
	if i == p.last {
		return p.step
	}
	first := !p.visited[i]
	p.visited[i] = true
	blobs := &blobResolver{s: p.x.s, get: func(ref string) ([]byte, error) {
		if !first {
			return nil, nil // counted the first time
		}
		_, err := p.store.blobs().getUnchecked(ref)
		return nil, err
	}}
	// A fresh buffer each time: a value's text aliases the line it was
	// parsed from, and the rules hold values across reads.
	var buf []byte
	e, v, ok, err := p.x.loadStep(int(p.idx[i]), &buf, blobs)
	if err == nil && !ok {
		err = fmt.Errorf("%s: line %d is no longer JSON: the file changed while it was read", p.x.Path(), p.x.Line(int(p.idx[i])))
	}
	if err != nil {
		if p.err == nil {
			p.err = err
		}
		return step{&Entry{}, jsonx.Value{}}
	}
	p.missing += blobs.missing
	p.last, p.step = i, step{e, v}
	return p.step
}

// loadStep reads entry i's line and loads it as omp does (Store.loadStep).
func (x *Index) loadStep(i int, buf *[]byte, blobs *blobResolver) (*Entry, jsonx.Value, bool, error) {
	raw, err := x.AppendRaw((*buf)[:0], i)
	if err != nil {
		return nil, jsonx.Value{}, false, err
	}
	*buf = raw
	e := &Entry{Type: x.Type(i), ID: x.ID(i), ParentID: x.ParentID(i), raw: raw, line: x.Line(i)}
	if x.s.version < 2 && e.Type == TypeCompaction {
		// The v1 migration reads the kept entry the compaction's body
		// resolves (migrateV1); its body decodes as a load decodes it.
		decodeEntry(e, x.recs[i].kept(), x.s.version)
	}
	v, ok := x.s.loadStep(e, blobs)
	e.raw = nil // the value holds what is needed
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
	return c.EachFrom(0, fn)
}

// EachFrom is Each from the k-th message on (from 0): a page of a long
// context reads its own messages' lines only, not those before it.
func (c *ContextReader) EachFrom(k int, fn func(m *ai.Message) error) error {
	k = max(k, 0)
	if c.store != nil {
		for i := k; i < len(c.Context.Messages); i++ {
			if err := fn(&c.Context.Messages[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if k >= len(c.plan.msgs) {
		return nil
	}
	return c.each(c.plan.msgs[k:], fn)
}

// each reads, makes and decodes the planned messages msgs.
func (c *ContextReader) each(msgs []planMsg, fn func(m *ai.Message) error) error {
	blobs := &blobResolver{s: c.x.s}
	for _, pm := range msgs {
		// A fresh buffer for each: the message shares its line's bytes.
		var buf []byte
		_, entry, ok, err := c.x.loadStep(int(c.path[pm.src]), &buf, blobs)
		if err == nil && !ok {
			err = fmt.Errorf("%s: line %d is no longer JSON: the file changed while it was read", c.x.Path(), c.x.Line(int(c.path[pm.src])))
		}
		if err != nil {
			return err
		}
		var m ai.Message
		m.DecodeJS(c.plan.message(pm, entry, blobs))
		if err := fn(&m); err != nil {
			return err
		}
	}
	return nil
}

// Tokens approximates the context's size as BuildContext's Tokens does.
// For a streamed context it reads the messages from the last that reports
// usage (the estimate starts again there).
func (c *ContextReader) Tokens() (int64, error) {
	if c.store != nil {
		return c.Context.Tokens, nil
	}
	from := 0
	for i := len(c.plan.msgs) - 1; i >= 0; i-- {
		if c.plan.msgs[i].f.usage {
			from = i
			break
		}
	}
	var t tokenCount
	err := c.each(c.plan.msgs[from:], func(m *ai.Message) error { t.add(m); return nil })
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

// TitleValue is the title as omp holds it (see Store.TitleValue).
func (c *ContextReader) TitleValue() jsonx.Value {
	s := c.store
	if s == nil {
		s = c.x.s
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, _ := s.titleValue()
	return v
}

func (c *ContextReader) Malformed() int {
	if c.store != nil {
		return c.store.Malformed()
	}
	return c.x.Malformed()
}

func (c *ContextReader) Streamed() bool { return c.x != nil }

// tokenCount is estimateTokens forward: the usage the last assistant turn
// reported, plus four characters a token after it.
type tokenCount struct {
	usage, chars int64
}

func (t *tokenCount) add(m *ai.Message) {
	if (&usageProbe{Role: m.Role, Usage: m.Usage, StopReason: m.StopReason}).resets() {
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
