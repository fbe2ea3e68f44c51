package foreign

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/usage"
)

// The model calls each harness records, as a usage ledger counts them
// (docs/usage.md has each rule and its evidence). Every reader gives a
// usage.Session with the listing's id, cwd and title, the session it
// descends from where the harness records one, and one usage.Call per
// model call; a counter that is not a finite non-negative number counts
// as 0 and is counted in the call's MalformedUsageCounters, and a record
// that cannot be read is counted in Skipped, never the end of the read.

// UsageSessions are the sessions of src a usage ledger reads, subagents'
// included: its listing, or what a source that reads its usage from other
// files lists for it (usageLister).
func UsageSessions(src Source) ([]Session, error) {
	if l, ok := src.(usageLister); ok {
		return l.usageSessions(), nil
	}
	return src.List(true)
}

// UsageSessionsAt is what UsageSessions says of the files at paths alone
// (a watcher's, which changed): the sessions of those that are src's, as
// UsageSessions names them; a path it names none of is gone, or no
// session of src. ok is false where only UsageSessions can say: src
// names no session by its file alone, or a path is a directory (made,
// or gone with sessions under it) or one of its listing's inputs.
func UsageSessionsAt(src Source, paths []string) (sessions []Session, ok bool) {
	if c, isClaude := src.(claudeSource); isClaude {
		return ClaudeFilesAt(c.root, paths)
	}
	if pl, isLister := src.(PathLister); isLister && UsageByListing(src) {
		return pl.ListPaths(paths, true)
	}
	return nil, false
}

// UsageByListing reports whether UsageSessions of src is its listing
// (List), which reads every file's head and tail, where its files can be
// named without opening one (FileNamer): a ledger that may read none of
// them (its groups kept) names them, and lists them only to read one.
func UsageByListing(src Source) bool {
	_, lists := src.(usageLister)
	_, names := src.(FileNamer)
	return !lists && names
}

// usageLister is a Source whose usage ledger reads other sessions than
// its listing shows, or reads them more cheaply.
type usageLister interface {
	usageSessions() []Session
}

// usageAppender is a Source whose calls can be read on from where an
// earlier read of a file ended.
type usageAppender interface {
	usageFrom(s Session, prev usage.Session, from int64) (usage.Session, bool, error)
}

// ReadsGrown reports whether src's sessions can be read on from where
// an earlier read of a file ended (UsageFrom).
func ReadsGrown(src Source) bool {
	_, ok := src.(usageAppender)
	return ok
}

// UsageFrom reads on from offset from of a session whose calls up to it
// are prev's (what Usage read when its file ended there, at a line's
// end): the calls of the lines appended since, after prev's. ok is false
// where the harness's calls cannot be read so (a Codex rollout's running
// totals, a Copilot log's shutdowns, a conversion): then Usage reads the
// whole file.
func UsageFrom(src Source, s Session, prev usage.Session, from int64) (u usage.Session, ok bool, err error) {
	if a, ok := src.(usageAppender); ok {
		return a.usageFrom(s, prev, from)
	}
	return usage.Session{}, false, nil
}

// Usage reads the model calls of the session s of src (its Source's
// Usage).
func Usage(src Source, s Session) (usage.Session, error) { return src.Usage(s) }

// newUsage is what a usage read of s knows before it reads a call: the
// listing's id, path, parent, project and title.
func newUsage(harness string, s Session) usage.Session {
	return usage.Session{Harness: harness, Path: s.Path, ID: s.ID, Parent: s.ParentSession,
		Subagent: s.Subagent, Project: s.Cwd, Title: s.Title}
}

// Claude Code's ledger reads every transcript as its place names it
// (ClaudeFiles; the ledger's read of each line finds its cwd and title,
// where ListClaude would read each file's head and tail again), and a
// transcript that only grew from where it ended: a running agent's file,
// read again for every status line, costs what it grew by.
func (c claudeSource) usageSessions() []Session { return ClaudeFiles(c.root) }

func (c claudeSource) usageFrom(s Session, prev usage.Session, from int64) (usage.Session, bool, error) {
	if strings.HasSuffix(s.Path, ".zst") {
		return usage.Session{}, false, nil
	}
	prev.Calls = slices.Clone(prev.Calls)
	return prev, true, claudeCallsFrom(&prev, from)
}

func (c claudeSource) Usage(s Session) (usage.Session, error) {
	u := newUsage(HarnessClaude, s)
	return u, claudeCalls(&u)
}

func (c codexSource) Usage(s Session) (usage.Session, error) {
	u := newUsage(HarnessCodex, s)
	return u, codexCalls(&u)
}

func (c copilotSource) Usage(s Session) (usage.Session, error) {
	u := newUsage(HarnessCopilot, s)
	return u, copilotCalls(&u)
}

// pi's files are omp's format: read as omp's are.
func (p piSource) Usage(s Session) (usage.Session, error) {
	read, err := usage.ReadSession(s.Path)
	read.Harness, read.ID, read.Subagent = HarnessPi, s.ID, s.Subagent
	if read.Title == "" {
		read.Title = s.Title
	}
	return read, err
}

// Gemini CLI records each response's tokens on the response: its
// conversion's assistant messages carry them. It calls Google's Gemini
// API: its price is Google's (the catalog's google-gemini-cli entries are
// the free tier of the CLI's own sign-in, which a file does not say it
// was).
func (g geminiSource) Usage(s Session) (usage.Session, error) {
	u := newUsage(HarnessGemini, s)
	err := convertedCalls(g, s, &u, false)
	for k := range u.Calls {
		u.Calls[k].Model = u.Calls[k].Model.WithProvider("google")
	}
	return u, err
}

// opencode records each response's tokens on the response: its
// conversion's assistant messages carry them.
func (o opencodeSource) Usage(s Session) (usage.Session, error) {
	u := newUsage(HarnessOpencode, s)
	return u, convertedCalls(o, s, &u, true)
}

// counter reads a token counter: 0 (and one more in *bad) for anything
// but a finite non-negative number; 0 for an absent one.
func counter(v jsonx.Value, bad *int) float64 {
	f, ok := v.Float()
	if !ok || math.IsInf(f, 0) || math.IsNaN(f) || f < 0 {
		if v.Defined() && !v.Nullish() {
			*bad++
		}
		return 0
	}
	return f
}

// rawCounter is counter of a value as it is in the line (checked as
// JSON): nil (absent) and null are 0; a number is its value; anything
// else, or a number that is not finite non-negative, is 0 and one more
// in *bad.
func rawCounter(v []byte, bad *int) float64 {
	if v == nil || string(v) == "null" {
		return 0
	}
	if v[0] == '-' || v[0] >= '0' && v[0] <= '9' {
		if f, err := strconv.ParseFloat(string(v), 64); err == nil && f >= 0 {
			return f
		}
	}
	*bad++
	return 0
}

// claudeCalls reads a Claude Code transcript's calls: every assistant
// record with a usage object. The streamed lines of one response (one
// message id; ccusage also asks for one request id, which a response's
// lines always share) are one call, with the usage of the line of most
// tokens (the last holds the final count), named by the message id
// (usage.ResponseKey) so that a ledger counts the copies a resumed
// session's file holds, and an import's, once too. A subagent's transcript (sidechain
// records naming another session's id) descends from that session.
// Claude Code's "<synthetic>" messages (an interruption, an error) are no
// call. Each line is read once (claudeUsageRecord.read: checked to be a
// JSON object, its members kept as bytes), and only what is asked of it
// is decoded: every line's type, a call's ids, model and time, a title.
// The project is the first cwd a record names.
func claudeCalls(u *usage.Session) error { return claudeCallsFrom(u, 0) }

// claudeCallsFrom is claudeCalls from byte offset from on, u's calls
// those of the lines before it.
func claudeCallsFrom(u *usage.Session, from int64) error {
	first := from == 0
	byRequest := map[uint64]int{}
	for k, c := range u.Calls {
		if c.Request != 0 {
			byRequest[c.Request] = k
		}
	}
	var custom, ai, summary string
	cwd := ""
	if from > 0 {
		cwd = u.Project
	}
	var r claudeUsageRecord
	skipped, err := eachLineInPlace(u.Path, from, func(b []byte, _ int) (bool, error) {
		if !r.read(b) {
			return false, nil
		}
		if first {
			first = false
			if id := jsonText(r.sessionID); r.sidechain && u.Parent == "" && id != "" && id != u.ID {
				u.Parent, u.Subagent = id, true
			}
		}
		if cwd == "" {
			cwd = jsonText(r.cwd)
		}
		switch {
		case jsonIs(r.typ, "custom-title"):
			custom = cmp.Or(jsonText(r.customTitle), custom)
		case jsonIs(r.typ, "ai-title"):
			ai = cmp.Or(jsonText(r.aiTitle), ai)
		case jsonIs(r.typ, "summary"):
			summary = cmp.Or(jsonText(r.summary), summary)
		case jsonIs(r.typ, "progress") && r.data != nil:
			r.readAgentProgress()
		}
		// Any record whose message has a usage is a call, whatever its
		// type, as ccusage reads them (a progress record may carry one).
		if !r.message || len(r.usage) == 0 || r.usage[0] != '{' {
			return true, nil
		}
		model := jsonText(r.model)
		if model == "<synthetic>" {
			return true, nil
		}
		c := usage.Call{Time: r.time(), Model: usage.RefModel("anthropic", cmp.Or(model, "unknown"), "anthropic-messages")}
		bad := &c.MalformedUsageCounters
		var in, out, cr, cw, cw1h []byte
		jsonx.MembersWithin(r.usage, "cache_creation", func(name, v []byte) {
			if string(name) == "ephemeral_1h_input_tokens" {
				cw1h = v
			}
		}, func(name, v []byte) {
			switch string(name) {
			case "input_tokens":
				in = v
			case "output_tokens":
				out = v
			case "cache_read_input_tokens":
				cr = v
			case "cache_creation_input_tokens":
				cw = v
			}
		})
		c.Tokens = usage.Tokens{Input: rawCounter(in, bad), Output: rawCounter(out, bad), CacheRead: rawCounter(cr, bad), CacheWrite: rawCounter(cw, bad)}
		c.Tokens.CacheWrite1h = min(c.Tokens.CacheWrite, rawCounter(cw1h, bad))
		c.Total = c.Tokens.Sum()
		if id := jsonText(r.id); id != "" {
			c.Request = usage.ResponseKey("anthropic", id)
			if at, ok := byRequest[c.Request]; ok {
				if c.Total > u.Calls[at].Total {
					c.Time = u.Calls[at].Time // the response's, from its first line
					u.Calls[at] = c
				}
				return true, nil
			}
			byRequest[c.Request] = len(u.Calls)
		}
		u.Calls = append(u.Calls, c)
		return true, nil
	})
	if cwd != "" {
		u.Project = cwd
	}
	if t := cmp.Or(custom, ai, summary); t != "" {
		u.Title = t
	}
	u.Skipped += skipped
	return err
}

// claudeUsageRecord is what claudeCalls reads of a record: its envelope's
// members and three of its message's, found in one pass over the line
// that builds no value of the rest (jsonx.MembersWithin: a message's long
// text is scanned, never decoded), the last of a duplicated member as
// JSON.parse keeps it.
type claudeUsageRecord struct {
	// The members read, as they are in the line (JSON text, decoded when
	// asked: most lines need only their type looked at).
	typ, sessionID, cwd, customTitle, aiTitle, summary, timestamp []byte
	sidechain, message                                            bool
	id, model                                                     []byte
	usage                                                         []byte // the message's usage
	data                                                          []byte // a progress record's data
	// outerTimestamp is the record's own, where its call is a subagent's
	// copied into a progress record whose message has none.
	outerTimestamp []byte
}

// time is the record's timestamp in ms, 0 if it has none that reads.
func (r *claudeUsageRecord) time() float64 {
	for _, ts := range [][]byte{r.timestamp, r.outerTimestamp} {
		if len(ts) == 0 {
			continue
		}
		if x, err := jsonx.Parse(ts); err == nil {
			if ms := timestampMs(x, 0); ms != 0 {
				return ms
			}
		}
	}
	return 0
}

// jsonText is the text of the JSON string v, "" if v is not one.
func jsonText(v []byte) string {
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	x, err := jsonx.Parse(v)
	if err != nil {
		return ""
	}
	s, _ := x.Text()
	return s
}

// jsonIs reports whether v is the JSON string of text s, decoding it only
// when it has an escape.
func jsonIs(v []byte, s string) bool {
	if len(v) == len(s)+2 && v[0] == '"' && v[len(v)-1] == '"' && string(v[1:len(v)-1]) == s {
		return true
	}
	return bytes.IndexByte(v, '\\') >= 0 && jsonText(v) == s
}

// readAgentProgress reads a subagent's call from a progress record of its
// parent's transcript ({"type":"progress","data":{"type":"agent_progress",
// "message":{"type":"assistant","message":{"id","model","usage",…}}}}):
// Claude Code copies each of a subagent's turns there as it runs, as well
// as into the subagent's own transcript when it keeps one. r then reads
// as that assistant record. The call's key is its message id, as in the
// subagent's transcript, so a ledger that has both counts it once; where
// the subagent's transcript is gone, these lines are its only record.
func (r *claudeUsageRecord) readAgentProgress() {
	var kind, msg []byte
	jsonx.Members(r.data, func(name, v []byte) {
		switch string(name) {
		case "type":
			kind = v
		case "message":
			msg = v
		}
	})
	if !jsonIs(kind, "agent_progress") || len(msg) == 0 || msg[0] != '{' {
		return
	}
	var inner claudeUsageRecord
	if !inner.read(msg) || !jsonIs(inner.typ, "assistant") {
		return
	}
	r.typ, r.message, r.id, r.model, r.usage = inner.typ, inner.message, inner.id, inner.model, inner.usage
	r.timestamp, r.outerTimestamp = inner.timestamp, r.timestamp
}

// read reads the record of line b, keeping its members' text as slices of
// b (valid while b is); false for a line that is not a JSON object. It is
// the one pass over the line: the check that it is JSON and the read of
// the few members wanted.
func (r *claudeUsageRecord) read(b []byte) bool {
	*r = claudeUsageRecord{}
	end, err := jsonx.MembersWithin(b, "message", func(name, v []byte) {
		switch string(name) {
		case "id":
			r.id = v
		case "model":
			r.model = v
		case "usage":
			r.usage = v
		}
	}, func(name, v []byte) {
		switch string(name) {
		case "type":
			r.typ = v
		case "sessionId":
			r.sessionID = v
		case "cwd":
			r.cwd = v
		case "customTitle":
			r.customTitle = v
		case "aiTitle":
			r.aiTitle = v
		case "summary":
			r.summary = v
		case "isSidechain":
			r.sidechain = string(v) == "true"
		case "data":
			r.data = v
		case "message":
			r.message = len(v) > 0 && v[0] == '{'
		case "timestamp":
			r.timestamp = v
		}
	})
	return err == nil && jsonSpaceOnly(b[end:])
}

// codexCalls reads a Codex rollout's calls from its token_count events.
// Each carries the rollout's running total (total_token_usage); Codex
// repeats an event, and its total, many times, so a call is an event
// whose total moved, with the tokens it moved by: the calls of a rollout
// sum to its last total, never to the sum of the events. A total lower
// than the one before starts again from zero. Codex counts the cached
// input in input_tokens; here Input is the rest. The model is the last
// turn_context's. A fork (session_meta's forked_from_id) begins with its
// parent's history replayed, stamped before the fork's own time: its
// totals are where the fork starts from, not calls of the fork.
func codexCalls(u *usage.Session) error {
	var c codexCallReader
	skipped, err := eachLineInPlace(u.Path, 0, func(b []byte, _ int) (bool, error) {
		record, wanted := codexUsageLine(b)
		if !wanted {
			return record, nil
		}
		v, perr := jsonx.Parse(b)
		if perr != nil || v.Kind() != jsonx.Object {
			return false, nil
		}
		c.record(u, v)
		return true, nil
	})
	u.Skipped += skipped
	return err
}

// codexCallReader reads a rollout's records in order into its calls.
type codexCallReader struct {
	forkAt    float64
	prevTotal codexTotal
	model     string
}

// record reads record v of u's rollout: a session_meta, a turn_context or
// a token_count event; any other record is nothing to it.
func (c *codexCallReader) record(u *usage.Session, v jsonx.Value) {
	p := v.Get("payload")
	at := timestampMs(v.Get("timestamp"), 0)
	switch {
	case v.Get("type").Is("session_meta"):
		if from, ok := stringField(p, "forked_from_id"); ok && from != "" {
			if u.Parent == "" {
				u.Parent = from
			}
			c.forkAt = timestampMs(p.Get("timestamp"), at)
		}
	case v.Get("type").Is("turn_context"):
		if m, ok := stringField(p, "model"); ok && m != "" {
			c.model = m
		}
	case v.Get("type").Is("event_msg") && p.Get("type").Is("token_count"):
		info := p.Get("info")
		if !isRecordValue(info) || !isRecordValue(info.Get("total_token_usage")) {
			return
		}
		var bad int
		t := readCodexTotal(info.Get("total_token_usage"), &bad)
		if t == c.prevTotal && bad == 0 {
			return // a repeat
		}
		d := t.minus(c.prevTotal)
		if !d.nonNegative() {
			d = t // a total that went down: counting started again
		}
		c.prevTotal = t
		if c.forkAt > 0 && at < c.forkAt {
			return // the parent's, replayed
		}
		call := usage.Call{Time: at, Model: usage.RefModel("openai", cmp.Or(c.model, "unknown"), "openai-codex-responses"), MalformedUsageCounters: bad,
			Tokens: usage.Tokens{Input: max(0, d.input-d.cached), CacheRead: min(d.cached, d.input), Output: d.output, Reasoning: d.reasoning}}
		call.Total = call.Tokens.Sum()
		if call.Total > 0 || call.Tokens.Reasoning > 0 {
			u.Calls = append(u.Calls, call)
		}
	}
}

// codexUsageLine reads a rollout's line as far as codexCalls needs to
// know whether to decode it: whether it is a JSON object (record), and
// whether it may be a session_meta, a turn_context or a token_count event
// (wanted): whether its type, or a type of its payload, is one of those
// words. It is one pass over the line that builds nothing (a message, a
// tool call and its output, most of a rollout's bytes, are scanned only);
// a line wanted is decoded whole. Any type member read counts, of every
// payload of a line that has several: what it over-reads is only decoded.
func codexUsageLine(b []byte) (record, wanted bool) {
	is := func(v []byte) {
		if !wanted && len(v) > 0 && v[0] == '"' {
			t := string(v)
			if bytes.IndexByte(v, '\\') >= 0 {
				x, _ := jsonx.Parse(v)
				s, _ := x.Text()
				t = `"` + s + `"`
			}
			wanted = t == `"session_meta"` || t == `"turn_context"` || t == `"token_count"`
		}
	}
	end, err := jsonx.MembersWithin(b, "payload", func(name, v []byte) {
		if string(name) == "type" {
			is(v)
		}
	}, func(name, v []byte) {
		if string(name) == "type" {
			is(v)
		}
	})
	if err != nil || !jsonSpaceOnly(b[end:]) {
		return false, false
	}
	return true, wanted
}

// codexTotal is a token_count's running total.
type codexTotal struct{ input, cached, output, reasoning float64 }

func readCodexTotal(v jsonx.Value, bad *int) codexTotal {
	return codexTotal{counter(v.Get("input_tokens"), bad), counter(v.Get("cached_input_tokens"), bad),
		counter(v.Get("output_tokens"), bad), counter(v.Get("reasoning_output_tokens"), bad)}
}

func (t codexTotal) minus(u codexTotal) codexTotal {
	return codexTotal{t.input - u.input, t.cached - u.cached, t.output - u.output, t.reasoning - u.reasoning}
}

func (t codexTotal) nonNegative() bool {
	return t.input >= 0 && t.cached >= 0 && t.output >= 0 && t.reasoning >= 0
}

// copilotCalls reads a Copilot CLI session's calls: Copilot records
// tokens only per session run, in the session.shutdown event that ends
// it (a resumed session appends a second run and a second shutdown, each
// with its own run's tokens), per model in modelMetrics. Each model of a
// shutdown is one record here, at the shutdown's time. Its inputTokens
// count the cache reads and writes; Input is the rest.
func copilotCalls(u *usage.Session) error {
	skipped, err := eachRecord(u.Path, func(r record) error {
		v := r.v
		if !v.Get("type").Is("session.shutdown") {
			return nil
		}
		at := timestampMs(v.Get("timestamp"), 0)
		for _, m := range v.Get("data").Get("modelMetrics").Members() {
			use := m.Value.Get("usage")
			if !isRecordValue(use) {
				continue
			}
			c := usage.Call{Time: at, Model: usage.RefModel("github-copilot", cmp.Or(m.Name, "unknown"), "")}
			bad := &c.MalformedUsageCounters
			in := counter(use.Get("inputTokens"), bad)
			c.Tokens = usage.Tokens{CacheRead: counter(use.Get("cacheReadTokens"), bad), CacheWrite: counter(use.Get("cacheWriteTokens"), bad),
				Output: counter(use.Get("outputTokens"), bad), Reasoning: counter(use.Get("reasoningTokens"), bad)}
			c.Tokens.Input = max(0, in-c.Tokens.CacheRead-c.Tokens.CacheWrite)
			c.Total = c.Tokens.Sum()
			u.Calls = append(u.Calls, c)
		}
		return nil
	})
	u.Skipped += skipped
	return err
}

// UsageRules names how this package reads the harnesses' calls: a cache
// of the calls read (the usage ledger's) is keyed by it, so that a change
// of what is read, or of which recorded zero is a cost, is never hidden
// by a cache a build before it wrote.
const UsageRules = "foreign usage 2: a conversion's zero cost is no cost where the harness records none\n"

// convertedCalls reads the calls of a session from its conversion to
// omp's entries: each assistant message's usage, as the harness recorded
// it on the response (usage.CallOf). Entry ids of a conversion name no
// copy, so they are dropped. A conversion writes a cost on every message
// (omp's usage has one); costed says whether the harness recorded it:
// where it did not, the zero is no recorded cost, and a call of a model
// with no price is unpriced, never $0.
func convertedCalls(src Source, s Session, u *usage.Session, costed bool) error {
	return src.Stream(s, ForReading)(func(c *Converted) error {
		u.Skipped += c.Skipped
		if u.Project == "" {
			u.Project = c.Cwd
		}
		if u.Title == "" {
			u.Title = c.Title
		}
		return nil
	}, func(_ string, entry []byte) error {
		if c, ok := usage.CallOf(entry); ok {
			c.Entry = 0
			c.HasCost = c.HasCost && costed
			u.Calls = append(u.Calls, c)
		}
		return nil
	})
}
