package usage

import (
	"errors"
	"hash/fnv"
	"math"
	"strconv"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/session"
)

// A Call is one model call as a session records it.
type Call struct {
	// Entry is the EntryKey of the omp entry recording it (its id and
	// time): a fork or a branch copies the entry, id, time and all, so it
	// is counted once (see Ledger). 0 for none.
	Entry uint64
	// Request is the harness's own name for the API request (Claude
	// Code's message id and request id) as a RequestKey, the same
	// wherever the call is copied: counted once among every session of
	// the ledger. 0 for none.
	Request                uint64
	Time                   float64 // Unix ms; 0 when the entry records none
	Model                  ModelRef
	Tokens                 Tokens
	Total                  float64 // the recorded totalTokens, else the buckets' sum
	Cost                   float64 // the recorded cost's total, when HasCost
	HasCost                bool
	MalformedUsageCounters int // counters that were not finite non-negative numbers, read as 0
	// Imported is a call an import copied from its source (recorded
	// before the import's provenance entry): the source's call.
	Imported bool
}

// SessionCalls reads the calls an omp-format session file records (xdev's,
// omp's, pi's), as omp's own statistics read them (omp-stats' parser.ts,
// extractStats): every assistant message entry with an id, a model, a
// provider, an api and a usage object, and every model_usage entry (an
// auxiliary call: a compaction summary, a title), in file order, each
// line once, whichever branch it is on. A counter that is not a finite
// number (a string, 1e999) counts as 0, as in omp-stats; a negative one
// too, where omp-stats keeps it (MalformedUsageCounters says how many).
// The total is the recorded totalTokens when it is a finite number, else
// the sum of the counters and the provider's orchestration tokens. The
// time is the message's timestamp when positive, else the entry's.
func SessionCalls(path string) ([]Call, error) {
	s, err := ReadSession(path)
	return s.Calls, err
}

// ReadSession reads the omp-format session file at path (xdev's, omp's,
// pi's) as a ledger's Session: its header's id, cwd, title and
// parentSession, and its calls (SessionCalls). An import (a custom entry
// of type ForeignImport naming its source) has ImportOf set, and the
// calls before that entry are Imported: its source's. The file is read
// once (session.Scan), and only the entries that can be a call or an
// import are decoded: a session's bytes are mostly its users' messages
// and its tools' results, which are not.
func ReadSession(path string) (Session, error) {
	var r callReader
	sc, err := session.Scan(path, nil, func(e session.ScannedEntry) error {
		if e.Type == session.TypeMessage && !e.Assistant {
			return nil // a user's message or a tool's result: no call
		}
		return r.entry(e.Type, e.JSON)
	})
	if err != nil {
		return Session{}, err
	}
	title, _ := sc.Title()
	return r.session(path, sc.Header(), title, sc.Malformed()), nil
}

// ReadIndex is ReadSession of an open index (a file's, or a session's
// stored on a server), its Path path.
func ReadIndex(x *session.Index, path string) (Session, error) {
	var r callReader
	var buf []byte
	for i := range x.Len() {
		raw, err := x.AppendRaw(buf[:0], i)
		if err != nil {
			title, _ := x.Title()
			return r.session(path, x.Header(), title, x.Malformed()), err
		}
		buf = raw
		if err := r.entry(x.Type(i), raw); err != nil {
			return Session{}, err
		}
	}
	title, _ := x.Title()
	return r.session(path, x.Header(), title, x.Malformed()), nil
}

// callReader reads a session's entries, in file order, into its calls.
type callReader struct {
	calls     []Call
	responses []string // the provider's id of each call's response, where recorded
	importOf  *Origin
	skipped   int
}

// entry reads an entry of type typ whose JSON is raw.
func (r *callReader) entry(typ string, raw []byte) error {
	switch typ {
	case session.TypeMessage, "model_usage", session.TypeCustom:
	default:
		return nil
	}
	var v jsonx.Value
	var err error
	if typ == session.TypeCustom {
		v, err = jsonx.Parse(raw)
	} else {
		v, err = callEnvelope(raw)
	}
	if err != nil {
		r.skipped++
		return nil
	}
	if c, ok := callOf(v); ok {
		r.calls = append(r.calls, c)
		id, _ := v.Get("message").Get("responseId").Text()
		r.responses = append(r.responses, id)
		return nil
	}
	if typ == session.TypeCustom && v.Get("customType").Is(ForeignImport) {
		d := v.Get("data")
		harness, _ := d.Get("source").Text()
		id, _ := d.Get("sourceId").Text()
		if harness != "" && id != "" {
			r.importOf = &Origin{Harness: harness, ID: id}
			for k := range r.calls {
				r.calls[k].Imported = true
			}
		}
	}
	return nil
}

// session is the Session read, of the file at path with header h.
func (r *callReader) session(path string, h session.Header, title string, malformed int) Session {
	s := Session{Path: path, ID: h.ID, Parent: h.ParentSession, Project: h.Cwd, Title: title,
		Skipped: malformed + r.skipped, Calls: r.calls, ImportOf: r.importOf}
	// A response id names the provider's response wherever it is copied:
	// omp's importer gives every streamed line of a Claude Code message
	// its own assistant message, each with the line's usage, and the
	// source's lines (and a resumed session's copies) name the same
	// response: all one call.
	for k, c := range s.Calls {
		if r.responses[k] != "" {
			s.Calls[k].Request = ResponseKey(c.Model.Provider(), r.responses[k])
		}
	}
	return s
}

// callEnvelope is the entry whose JSON is raw as far as callOf and a
// call's response id ask: its id, type and timestamp, its model,
// provider, api and usage (a model_usage entry's), and of its message
// those and its role, timestamp and responseId; each the last of a name
// given twice, as JSON.parse keeps it. It is one pass over raw that
// decodes nothing else: an assistant message's text, thinking and tool
// calls, most of its bytes, are only checked to be JSON.
func callEnvelope(raw []byte) (jsonx.Value, error) {
	var top, msg, cur callMembers
	var message []byte
	_, err := jsonx.MembersWithin(raw, "message", func(name, v []byte) {
		cur.set(name, v)
	}, func(name, v []byte) {
		if string(name) == "message" {
			message, msg, cur = v, cur, callMembers{}
			return
		}
		top.set(name, v)
	})
	if errors.Is(err, jsonx.ErrNotObject) {
		return jsonx.Value{}, nil // JSON, and no call
	}
	if err != nil {
		return jsonx.Value{}, err
	}
	members, err := top.decode(nil)
	if err != nil {
		return jsonx.Value{}, err
	}
	if message != nil {
		m := jsonx.Value{}
		if message[0] == '{' {
			ms, err := msg.decode(nil)
			if err != nil {
				return jsonx.Value{}, err
			}
			m = jsonx.ObjectOf(ms...)
		} else if m, err = jsonx.Parse(message); err != nil {
			return jsonx.Value{}, err
		}
		members = append(members, jsonx.Member{Name: "message", Value: m})
	}
	return jsonx.ObjectOf(members...), nil
}

// callMembers are the members of an entry, or of its message, that
// callEnvelope keeps, as they are in the line.
type callMembers struct {
	raw [len(callMemberNames)][]byte
}

var callMemberNames = [...]string{"id", "type", "timestamp", "role", "model", "provider", "api", "usage", "responseId"}

func (c *callMembers) set(name, v []byte) {
	for k, n := range callMemberNames {
		if string(name) == n {
			c.raw[k] = v
			return
		}
	}
}

// decode appends the members kept, decoded, to ms.
func (c *callMembers) decode(ms []jsonx.Member) ([]jsonx.Member, error) {
	for k, raw := range c.raw {
		if raw == nil {
			continue
		}
		v, err := jsonx.Parse(raw)
		if err != nil {
			return nil, err
		}
		ms = append(ms, jsonx.Member{Name: callMemberNames[k], Value: v})
	}
	return ms, nil
}

// RequestKey is the key of a call's request name: its 64-bit FNV-1a
// hash, never 0. Two names share a key with a chance of 2⁻⁶⁴ a pair.
func RequestKey(name string) uint64 { return key(name) }

// ResponseKey is the RequestKey of a provider's response id (Anthropic's
// message id): what a harness's record and omp's copy of it share.
func ResponseKey(provider, id string) uint64 { return key(provider + " response " + id) }

// EntryKey is the key of an omp entry by its id and its call's time (Unix
// ms), as RequestKey: what omp-stats' database tells a copied entry by
// (insertMessageStats: the same entry_id and timestamp under another
// session file). Ids are eight hex digits, which collide among
// thousands of sessions; with the time to the millisecond, two entries
// that are not copies share a key with a chance of about 2⁻³² a pair
// made in the same millisecond.
func EntryKey(id string, ms float64) uint64 {
	return key(id + "@" + strconv.FormatFloat(ms, 'f', -1, 64))
}

func key(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return max(h.Sum64(), 1)
}

// ForeignImport is the customType of the entry omp's importer (and
// xdev's) appends to a session converted from another harness, naming
// the source (data.source, data.sourceId, data.sourcePath).
const ForeignImport = "foreign_session_import"

// CallOf is the call an omp entry (one line of an omp-format session, or
// of another harness's session converted to omp's entries) records, if
// it records one, read as SessionCalls reads it.
func CallOf(entry []byte) (Call, bool) {
	v, err := jsonx.Parse(entry)
	if err != nil {
		return Call{}, false
	}
	return callOf(v)
}

// callOf is the call an entry records, if it records one.
func callOf(e jsonx.Value) (Call, bool) {
	id, _ := e.Get("id").Text()
	if id == "" {
		return Call{}, false
	}
	msg := e.Get("message")
	switch {
	case e.Get("type").Is("message") && msg.Get("role").Is("assistant"):
	case e.Get("type").Is("model_usage"):
		msg = e
	default:
		return Call{}, false
	}
	model, ok1 := msg.Get("model").Text()
	provider, ok2 := msg.Get("provider").Text()
	api, ok3 := msg.Get("api").Text()
	u := msg.Get("usage")
	if !ok1 || !ok2 || !ok3 || u.Kind() != jsonx.Object {
		return Call{}, false
	}
	c := Call{Model: RefModel(provider, model, api)}
	count := func(v jsonx.Value) float64 {
		f, ok := v.Float()
		if !ok || math.IsInf(f, 0) || math.IsNaN(f) || f < 0 {
			if v.Defined() {
				c.MalformedUsageCounters++
			}
			return 0
		}
		return f
	}
	c.Tokens = Tokens{Input: count(u.Get("input")), Output: count(u.Get("output")),
		CacheRead: count(u.Get("cacheRead")), CacheWrite: count(u.Get("cacheWrite"))}
	if h, ok := u.Get("cttl").Get("ephemeral1h").Float(); ok && h > 0 && !math.IsInf(h, 0) {
		c.Tokens.CacheWrite1h = min(h, c.Tokens.CacheWrite)
	}
	if t, ok := u.Get("totalTokens").Float(); ok && !math.IsInf(t, 0) && !math.IsNaN(t) {
		c.Total = t
	} else {
		o := u.Get("orchestration")
		c.Total = c.Tokens.Input + c.Tokens.Output + c.Tokens.CacheRead + c.Tokens.CacheWrite +
			count(o.Get("input")) + count(o.Get("output")) + count(o.Get("cacheRead"))
	}
	if t, ok := u.Get("cost").Get("total").Float(); ok && !math.IsInf(t, 0) && !math.IsNaN(t) {
		c.Cost, c.HasCost = t, true
	}
	if t, ok := msg.Get("timestamp").Float(); ok && t > 0 && !math.IsInf(t, 0) && e.Get("type").Is("message") {
		c.Time = t
	} else if s, ok := e.Get("timestamp").Text(); ok {
		if ms := jsonx.ParseDate(s); !math.IsNaN(ms) {
			c.Time = ms
		}
	}
	c.Entry = EntryKey(id, c.Time)
	return c, true
}
