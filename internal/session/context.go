package session

import (
	"math"
	"slices"
	"strconv"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/jsonx"
)

// Context is what a model sees when the session resumes.
type Context struct {
	LeafID   string
	Messages []ai.Message
	// Models maps a role to "provider/model"; "default" is the main model.
	// A value that is not a string in the file is given as JavaScript's
	// String() of it, as omp's template literals render it.
	Models        map[string]string
	ThinkingLevel string
	// ModelValue and ThinkingValue are the main model and the thinking
	// level as omp holds them: the value the entry gave, of whatever type
	// (an object stays an object, 2 stays a number), where Models and
	// ThinkingLevel give its String().
	ModelValue, ThinkingValue jsonx.Value
	// ThinkingSet: an entry on the path set the thinking level; without
	// one it is omp's default, "off", whatever the turns did (a
	// transcript of another harness converted records none).
	ThinkingSet bool
	// Tokens approximates the context size: the last assistant turn's
	// reported usage plus about a token per four characters after it.
	Tokens int64
	// MissingBlobs counts image references whose blob could not be read;
	// such images keep their reference, as omp keeps them.
	MissingBlobs int
	// OmpRefuses says why omp cannot build this context, "" when it can:
	// omp's rebuild throws on a shape xdev reads (see ompfault.go), in the
	// entry of line OmpRefusesLine.
	OmpRefuses     string
	OmpRefusesLine int
}

// Model returns the main model, "provider/model", or "".
func (c *Context) Model() string { return c.Models[DefaultRole] }

// Custom message types omp treats specially when it rebuilds the context.
const (
	customPrewalkPlan         = "prewalk-plan"
	customVibeModeContext     = "vibe-mode-context"
	customInterruptedThinking = "interrupted-thinking"
	customDefault             = "custom-message"
	customSkillPrompt         = "skill-prompt"
	customCollabPrompt        = "collab-prompt"
	customContextNotes        = "experimental_context_notes"
)

// BuildContext rebuilds the model context at the current leaf.
func (s *Store) BuildContext() Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.dropParsed()
	return s.buildContext(s.leaf)
}

// dropParsed lets go of the lines a load parsed (Entry.parsed), which only
// the first context build reads: a store kept open for appends holds its
// lines, not their values too.
func (s *Store) dropParsed() {
	for _, e := range s.entries {
		e.parsed = jsonx.Value{}
	}
	for _, e := range s.prefix {
		e.parsed = jsonx.Value{}
	}
}

// BuildContextAt rebuilds the model context as if id were the leaf.
func (s *Store) BuildContextAt(id string) Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.dropParsed()
	return s.buildContext(id)
}

// step is one entry of the path as omp holds it in memory: the line as
// JSON.parse returned it, with blob references resolved.
type step struct {
	e *Entry
	v jsonx.Value
}

// contextPath is the path a context build walks, an entry at a time:
// held in memory (steps), or read again from the file for a streamed
// build (filePath). Type is the entry's type as its envelope gives it,
// which is its value's "type" (loadStep changes no type): the rules ask
// it first, so that a streamed build reads only the entries a rule reads.
type contextPath interface {
	Len() int
	Type(i int) string
	At(i int) step
}

// steps is a path held in memory.
type steps []step

func (s steps) Len() int          { return len(s) }
func (s steps) Type(i int) string { return s[i].e.Type }
func (s steps) At(i int) step     { return s[i] }

// loadStep is what omp's load does to one entry's line: JSON.parse, the
// truncated-frames repair of a compaction, blob references resolved, the
// v1 and v2 migrations, and the Copilot replay strip. ok is false for a
// line that is not JSON (not in the tree).
func (s *Store) loadStep(e *Entry, blobs *blobResolver) (jsonx.Value, bool) {
	// An entry's line is never changed once read (a loaded entry holds its
	// own copy; a streamed read, a fresh buffer): the value may share it.
	v := e.parsed
	if !v.Defined() {
		var err error
		if v, err = jsonx.ParseOwned(e.raw); err != nil {
			return jsonx.Value{}, false // not in the tree: decodeRecords kept only JSON lines
		}
	}
	if v.Get("type").Is(TypeCompaction) {
		v = repairTruncatedFrames(v)
	}
	v = blobs.resolve(v, "")
	if s.version < 2 {
		v = migrateV1(e, v)
	}
	if s.version < 3 && v.Get("type").Is(TypeMessage) && v.Get("message").Get("role").Is(string(ai.RoleHookMessage)) {
		v = v.With("message", v.Get("message").With("role", jsonx.Str(string(ai.RoleCustom)))) // v2 → v3
	}
	if m := v.Get("message"); v.Get("type").Is(TypeMessage) && m.Get("role").Is("assistant") {
		v = v.With("message", sanitizeCopilotReplay(m))
	}
	return v, true
}

// buildContext is omp 18.2.3's buildSessionContext (session-context.ts)
// for the model context, rule for rule, on the values JSON.parse gives: walk
// the path, fold the settings, let the later of the last reset and the
// last compaction govern, emit messages, prepend the context notes, then
// strip dangling tool calls and failed turns.
func (s *Store) buildContext(leafID string) Context {
	if _, ok := s.byID[leafID]; !ok && len(s.entries) > 0 {
		leafID = s.entries[len(s.entries)-1].ID
	}
	entries := s.pathTo(leafID)
	blobs := &blobResolver{s: s}
	path := make([]step, 0, len(entries))
	for _, e := range entries {
		if v, ok := s.loadStep(e, blobs); ok {
			path = append(path, step{e, v})
		}
	}
	pl := planContext(steps(path), blobs)
	ctx := pl.Context
	ctx.LeafID = leafID
	ctx.Messages = make([]ai.Message, len(pl.msgs))
	for i, m := range pl.msgs {
		ctx.Messages[i].DecodeJS(pl.message(m, path[m.src].v, blobs))
	}
	ctx.Tokens = estimateTokens(ctx.Messages)
	return ctx
}

// planMsg is one message of a context plan: the path entry it is made
// from (src), how (make), whether its dangling tool calls are stripped
// (strip), and what the last two rules read of it (f). It holds no value:
// the message is made again from the entry's value when it is decoded,
// so that a plan costs a few dozen bytes a message however long the
// session (a streamed build reads the entry's line again).
type planMsg struct {
	src   int32
	make  maker
	strip bool
	f     msgFacts
}

// maker says how a plan's message is made from its entry's value.
type maker uint8

const (
	makeEntry         maker = iota // a message entry: entryMessage
	makeCustom                     // a custom_message entry: customEntryMessage
	makeBranchSummary              // branchSummaryMessage
	makeCompaction                 // the governing compaction: compactionMessage
	makeNotes                      // the context notebook: notesMessage
)

// contextPlan is a context build's outcome before its messages are
// made: the settings, and the messages that survive every rule.
type contextPlan struct {
	Context
	msgs      []planMsg
	ids       []string    // the messages' ids (msgFacts.ids)
	paired    jsIDSet     // the tool call ids a tool result answers
	compactTS jsonx.Value // the compaction message's date (see planContext)
}

// fault records the first shape omp's rebuild throws on, in the entry p.
func (pl *contextPlan) fault(f ompFault, p step) {
	if pl.OmpRefuses == "" && f != "" {
		pl.OmpRefuses, pl.OmpRefusesLine = string(f), p.e.Line()
	}
}

// message makes m from its entry's value, as the plan found it.
func (pl *contextPlan) message(m planMsg, entry jsonx.Value, blobs *blobResolver) jsonx.Value {
	var v jsonx.Value
	switch m.make {
	case makeEntry:
		v = entryMessage(entry)
	case makeCustom:
		v, _ = customEntryMessage(entry)
	case makeBranchSummary:
		v = branchSummaryMessage(entry)
	case makeCompaction:
		v = compactionMessage(entry, pl.compactTS, blobs)
	case makeNotes:
		v = notesMessage(entry)
	}
	if m.strip {
		v, _ = stripBlocks(v, pl.paired)
	}
	return v
}

// msgFacts is what stripDanglingToolCalls and dropFailedTurns read of a
// message: its role, whether an assistant turn failed (aborted or
// errored), whether a custom message is an interrupted-thinking note,
// whether an assistant turn has a block that survives any strip (neither
// a tool call nor redacted thinking), and the ids it carries as jsIDSet
// keys: a tool result's toolCallId, an assistant turn's tool calls' ids
// ("" for an id === to nothing).
type msgFacts struct {
	role        factRole
	failed      bool
	interrupted bool
	kept        bool
	usage       bool // the token estimate starts again here (see tokenCount)
	ids         idSpan
}

// idSpan is a message's ids among its plan's (contextPlan.ids): held
// apart, so that a message without any costs no slice.
type idSpan struct{ at, n uint32 }

type factRole uint8

// usageProbe is what the token estimate reads of a message, decoded by
// the rules Message.DecodeJS decodes it by.
type usageProbe struct {
	Role       ai.Role   `json:"role"`
	Usage      *ai.Usage `json:"usage"`
	StopReason string    `json:"stopReason"`
}

// resets reports whether tokenCount starts again at this message.
func (u *usageProbe) resets() bool {
	return u.Role == ai.RoleAssistant && u.Usage != nil && u.StopReason != ai.StopAborted && u.StopReason != ai.StopError
}

const (
	factOther factRole = iota
	factAssistant
	factToolResult
	factCustom
)

// idsOf returns the ids of f.
func (pl *contextPlan) idsOf(f msgFacts) []string { return pl.ids[f.ids.at : f.ids.at+f.ids.n] }

// factsOf reads a made message's facts.
func (pl *contextPlan) factsOf(m jsonx.Value) msgFacts {
	f := msgFacts{ids: idSpan{at: uint32(len(pl.ids))}}
	switch role := m.Get("role"); {
	case role.Is(string(ai.RoleAssistant)):
		f.role = factAssistant
		sr := m.Get("stopReason")
		f.failed = sr.Is(ai.StopAborted) || sr.Is(ai.StopError)
		var u usageProbe
		jsonx.Decode(m, &u)
		f.usage = u.resets()
		if c := m.Get("content"); c.Kind() == jsonx.Array {
			for _, b := range c.Items() {
				switch t := b.Get("type"); {
				case t.Is(ai.BlockToolCall):
					k, _ := idKey(b.Get("id"))
					pl.ids = append(pl.ids, k)
					f.ids.n++
				case t.Is(ai.BlockRedactedThinking):
				default:
					f.kept = true
				}
			}
		}
	case role.Is(string(ai.RoleToolResult)):
		f.role = factToolResult
		if k, ok := idKey(m.Get("toolCallId")); ok {
			pl.ids = append(pl.ids, k)
			f.ids.n = 1
		}
	case role.Is(string(ai.RoleCustom)):
		f.role = factCustom
		f.interrupted = m.Get("customType").Is(customInterruptedThinking)
	}
	return f
}

// planContext applies omp's rules to path.
func planContext(path contextPath, blobs *blobResolver) contextPlan {
	pl := contextPlan{Context: Context{Models: map[string]string{}, ThinkingLevel: "off"}}
	ctx := &pl.Context
	ctx.MissingBlobs = blobs.missing

	// Settings.
	thinking := jsonx.Str("off")
	explicitDefault := false
	compIdx, resetIdx := -1, -1
	for i := range path.Len() {
		switch path.Type(i) {
		case TypeThinkingLevelChange:
			ctx.ThinkingSet = true
			thinking = path.At(i).v.Get("thinkingLevel")
			if thinking.Nullish() {
				thinking = jsonx.Str("off")
			}
		case TypeModelChange:
			p := path.At(i)
			if model := p.v.Get("model"); model.Truthy() {
				role := p.v.Get("role")
				if role.Nullish() {
					role = jsonx.Str(DefaultRole)
				}
				ctx.Models[role.ToString()] = model.ToString()
				if role.Is(DefaultRole) {
					explicitDefault = true
					ctx.ModelValue = model
				}
			}
		case TypeCompaction:
			compIdx = i
		case TypeResetBoundary:
			resetIdx = i
		case TypeTTSRInjection:
			if p := path.At(i); !jsIterable(p.v.Get("injectedRules")) {
				pl.fault(faultTTSRRules, p)
			}
		}
	}
	if !explicitDefault {
		// omp lets each assistant turn name the main model until a model
		// change names it: without one, the last turn's model is the one.
		for i := path.Len() - 1; i >= 0; i-- {
			if path.Type(i) != TypeMessage {
				continue
			}
			if m := path.At(i).v.Get("message"); m.Get("role").Is("assistant") {
				ctx.Models[DefaultRole] = m.Get("provider").ToString() + "/" + m.Get("model").ToString()
				ctx.ModelValue = jsonx.Str(ctx.Models[DefaultRole])
				break
			}
		}
	}
	ctx.ThinkingLevel, ctx.ThinkingValue = thinking.ToString(), thinking
	if compIdx >= 0 {
		// omp finds the compaction again by id: the first compaction on the
		// path with the latest one's id.
		id := path.At(compIdx).e.ID
		for i := range path.Len() {
			if path.Type(i) != TypeCompaction {
				continue
			}
			if p := path.At(i); p.e.ID == id {
				compIdx = i
				break
			}
		}
	}

	add := func(src int, v jsonx.Value, make maker) {
		m := planMsg{src: int32(src), make: make}
		if make == makeEntry {
			if msg := v.Get("message"); msg.Get("role").Is("assistant") && !msg.Get("retryRecovery").Truthy() {
				_, f := emptyErrorTurn(msg)
				pl.fault(f, path.At(src))
			}
		}
		if v = pl.message(m, v, blobs); v.Defined() {
			m.f = pl.factsOf(v)
			if m.f.role == factAssistant {
				pl.fault(contentFault(v), path.At(src))
			}
			pl.msgs = append(pl.msgs, m)
		}
	}
	emit := func(i int) {
		switch path.Type(i) {
		case TypeMessage:
			add(i, path.At(i).v, makeEntry)
		case TypeCustomMessage:
			p := path.At(i)
			if ct := p.v.Get("customType"); ct.Is(customPrewalkPlan) || ct.Is(customVibeModeContext) {
				return
			}
			add(i, p.v, makeCustom)
		case TypeBranchSummary:
			add(i, path.At(i).v, makeBranchSummary)
		}
	}
	// findID returns the index on the path of the entry whose id equals id
	// (JavaScript's ===), searching indexes below limit, or -1.
	findID := func(id jsonx.Value, limit int) int {
		for i := 0; i < limit && i < path.Len(); i++ {
			if sameID(path.At(i).v.Get("id"), id) {
				return i
			}
		}
		return -1
	}

	switch {
	case resetIdx >= 0 && resetIdx > compIdx:
		for i := resetIdx + 1; i < path.Len(); i++ {
			emit(i)
		}
	case compIdx >= 0:
		c := path.At(compIdx).v
		remote := openAIRemotePayload(c)
		ts := c.Get("timestamp")
		if anthropicPayload(c).Defined() {
			// omp predates a natively replayed summary to just before the
			// first retained entry, so the tail's signed thinking stays valid.
			var first *step
			if k := findID(c.Get("firstKeptEntryId"), path.Len()); k >= 0 && k < compIdx {
				p := path.At(k)
				first = &p
			} else if compIdx+1 < path.Len() {
				p := path.At(compIdx + 1)
				first = &p
			}
			if first != nil {
				if at := jsonx.DateMillis(first.v.Get("timestamp")); !math.IsNaN(at) {
					ts = jsonx.Str(jsonx.ISOString(at - 1))
				}
			}
		}
		pl.compactTS = ts
		add(compIdx, c, makeCompaction)
		ctx.MissingBlobs = blobs.missing
		if d := c.Get("details"); d.Kind() == jsonx.Object && d.Get("kind").Is(rolloverKind) {
			// A notes-backed rollover keeps the latest user request from
			// before the kept window.
			kept := findID(c.Get("firstKeptEntryId"), path.Len())
			for i := compIdx - 1; i > resetIdx; i-- {
				if t := path.Type(i); t != TypeMessage && t != TypeCustomMessage || !isUserRequest(path.At(i).v) {
					continue
				}
				if i < kept {
					emit(i)
				}
				break
			}
		}
		if !remote.Defined() {
			if k := findID(c.Get("firstKeptEntryId"), compIdx); k >= 0 {
				for i := k; i < compIdx; i++ {
					emit(i)
				}
			}
		} else if through := c.Get("providerReplayThroughEntryId"); through.Truthy() {
			if k := findID(through, path.Len()); k >= 0 && k < compIdx {
				for i := k + 1; i < compIdx; i++ {
					emit(i)
				}
			}
		}
		for i := compIdx + 1; i < path.Len(); i++ {
			emit(i)
		}
	default:
		for i := range path.Len() {
			emit(i)
		}
	}

	if k, ok := contextNotes(path); ok {
		notes := planMsg{src: int32(k), make: makeNotes, f: pl.factsOf(notesMessage(path.At(k).v))}
		pl.msgs = append([]planMsg{notes}, pl.msgs...)
	}
	pl.stripDanglingToolCalls()
	pl.dropFailedTurns()
	return pl
}

// entryMessage is the message a message entry holds, or undefined: omp
// throws on a message entry without a message, and drops an assistant
// turn that is a retry's recovery or an empty errored turn.
func entryMessage(v jsonx.Value) jsonx.Value {
	m := v.Get("message")
	if !m.Defined() {
		return jsonx.Value{}
	}
	if m.Get("role").Is("assistant") && (m.Get("retryRecovery").Truthy() || isEmptyErrorTurnOf(m)) {
		return jsonx.Value{}
	}
	return m
}

// isEmptyErrorTurnOf is emptyErrorTurn's verdict: a turn omp throws on is
// kept.
func isEmptyErrorTurnOf(m jsonx.Value) bool {
	empty, _ := emptyErrorTurn(m)
	return empty
}

// branchSummaryMessage is the message a branch_summary entry replays as,
// or undefined when it has no summary.
func branchSummaryMessage(v jsonx.Value) jsonx.Value {
	if !v.Get("summary").Truthy() {
		return jsonx.Value{}
	}
	return object(
		"role", jsonx.Str(string(ai.RoleBranchSummary)),
		"summary", v.Get("summary"),
		"fromId", v.Get("fromId"),
		"timestamp", dateValue(v.Get("timestamp")),
	)
}

// compactionMessage is the compactionSummary message of the governing
// compaction c, dated ts: its summary, payload, and a snapcompact
// archive's blocks and images.
func compactionMessage(c, ts jsonx.Value, blobs *blobResolver) jsonx.Value {
	remote := openAIRemotePayload(c)
	anthropic := anthropicPayload(c)
	payload := remote
	if !payload.Defined() {
		payload = anthropic
	}
	// Archived snapcompact history comes back as blocks (and its images).
	var blocks, images jsonx.Value
	if a, ok := preservedArchive(c.Get("preserveData")); ok {
		bs := blobs.historyBlocks(a)
		var imgs []jsonx.Value
		for _, b := range bs {
			if b.Get("type").Is(ai.BlockImage) {
				imgs = append(imgs, b)
			}
		}
		if len(bs) > 0 {
			blocks = jsonx.ArrayOf(bs...)
		}
		if len(imgs) > 0 {
			images = jsonx.ArrayOf(imgs...)
		}
	}
	return object(
		"role", jsonx.Str(string(ai.RoleCompactionSummary)),
		"summary", c.Get("summary"),
		"shortSummary", c.Get("shortSummary"),
		"tokensBefore", c.Get("tokensBefore"),
		"tokensAfter", c.Get("tokensAfter"),
		"method", c.Get("method"),
		"providerPayload", payload,
		"blocks", blocks,
		"images", images,
		"warning", c.Get("warning"),
		"timestamp", dateValue(ts),
	)
}

// object builds a JavaScript object literal: name/value pairs in order,
// undefined values left out as JSON.stringify leaves them out.
func object(pairs ...any) jsonx.Value {
	members := make([]jsonx.Member, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		v := pairs[i+1].(jsonx.Value)
		if v.Defined() {
			members = append(members, jsonx.Member{Name: pairs[i].(string), Value: v})
		}
	}
	return jsonx.ObjectOf(members...)
}

// dateValue is new Date(ts).getTime() as a JSON value (NaN is null).
func dateValue(ts jsonx.Value) jsonx.Value {
	ms := jsonx.DateMillis(ts)
	if math.IsNaN(ms) {
		return jsonx.NullValue()
	}
	return jsonx.Num(ms)
}

// jsIDSet is a set of id values under JavaScript's ===: a value is in it if
// it is === to one added (objects and NaN are === to nothing).
type jsIDSet map[string]bool

// idKey is the key of v in a jsIDSet, false for a value === to nothing.
func idKey(v jsonx.Value) (string, bool) {
	switch v.Kind() {
	case jsonx.Undefined:
		return "u", true
	case jsonx.Null:
		return "z", true
	case jsonx.String:
		return "s" + v.String(), true
	case jsonx.Number:
		f, _ := v.Float()
		if math.IsNaN(f) {
			return "", false
		}
		if f == 0 {
			f = 0 // -0 === 0
		}
		return "n" + strconv.FormatFloat(f, 'g', -1, 64), true
	case jsonx.Bool:
		b, _ := v.Boolean()
		return "b" + strconv.FormatBool(b), true
	}
	return "", false
}

func (s jsIDSet) add(v jsonx.Value) {
	if k, ok := idKey(v); ok {
		s[k] = true
	}
}

func (s jsIDSet) has(v jsonx.Value) bool {
	k, ok := idKey(v)
	return ok && s[k]
}

// sameID is JavaScript's a === b for two id values.
func sameID(a, b jsonx.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case jsonx.Undefined, jsonx.Null:
		return true
	case jsonx.String:
		return a.String() == b.String()
	case jsonx.Number:
		x, _ := a.Float()
		y, _ := b.Float()
		return x == y
	case jsonx.Bool:
		x, _ := a.Boolean()
		y, _ := b.Boolean()
		return x == y
	}
	return false // objects: identity, and these are different parses
}

// customEntryMessage is omp's customMessageEntryMessage: the "custom"
// message a custom_message entry replays as, normalized as
// normalizeCustomMessagePayload does; ok=false when its content is neither
// a string nor an array.
func customEntryMessage(v jsonx.Value) (jsonx.Value, bool) {
	content := v.Get("content")
	if k := content.Kind(); k != jsonx.String && k != jsonx.Array {
		return jsonx.Value{}, false
	}
	customType := v.Get("customType")
	if s, ok := customType.Text(); !ok || s == "" {
		customType = jsonx.Str(customDefault)
	}
	display := v.Get("display")
	if display.Kind() != jsonx.Bool {
		display = jsonx.BoolValue(false)
	}
	var attribution jsonx.Value
	if v.Get("attribution").Defined() {
		attribution = jsonx.Str("agent")
		if v.Get("attribution").Is("user") {
			attribution = jsonx.Str("user")
		}
	}
	return object(
		"role", jsonx.Str(string(ai.RoleCustom)),
		"customType", customType,
		"content", content,
		"display", display,
		"details", v.Get("details"),
		"attribution", attribution,
		"timestamp", dateValue(v.Get("timestamp")),
	), true
}

// isUserRequest is omp's isUserRequestEntry: a user message, or a custom
// message that starts a user turn (a skill prompt or a collaborator's
// prompt the user sent).
func isUserRequest(v jsonx.Value) bool {
	switch {
	case v.Get("type").Is(TypeMessage):
		m := v.Get("message")
		switch {
		case m.Get("role").Is("user"):
			return true
		case m.Get("role").Is("custom"):
			return startsUserTurn(m)
		}
	case v.Get("type").Is(TypeCustomMessage):
		if m, ok := customEntryMessage(v); ok {
			return startsUserTurn(m)
		}
	}
	return false
}

func startsUserTurn(m jsonx.Value) bool {
	ct := m.Get("customType")
	return (ct.Is(customSkillPrompt) || ct.Is(customCollabPrompt)) && m.Get("attribution").Is("user")
}

// openAIRemotePayload is omp's getOpenAiRemoteCompactionPayload: the
// replacement history an OpenAI remote compaction preserved, or undefined.
func openAIRemotePayload(c jsonx.Value) jsonx.Value {
	cand := c.Get("preserveData").Get("openaiRemoteCompaction")
	if cand.Kind() != jsonx.Object {
		return jsonx.Value{}
	}
	provider, ok := cand.Get("provider").Text()
	if !ok || provider == "" {
		return jsonx.Value{}
	}
	items := cand.Get("replacementHistory")
	if items.Kind() != jsonx.Array {
		return jsonx.Value{}
	}
	for _, it := range items.Items() {
		if it.Kind() != jsonx.Object {
			return jsonx.Value{}
		}
	}
	return object("type", jsonx.Str("openaiResponsesHistory"), "provider", cand.Get("provider"), "items", items)
}

// anthropicPayload is pi-agent-core's getAnthropicCompactionPayload: the
// server compaction Anthropic returned, or undefined.
func anthropicPayload(c jsonx.Value) jsonx.Value {
	cand := c.Get("preserveData").Get("anthropicCompaction")
	if cand.Kind() != jsonx.Object {
		return jsonx.Value{}
	}
	nonEmpty := func(name string) jsonx.Value {
		if s, ok := cand.Get(name).Text(); ok && s != "" {
			return cand.Get(name)
		}
		return jsonx.Value{}
	}
	if !nonEmpty("provider").Defined() || !nonEmpty("content").Defined() {
		return jsonx.Value{}
	}
	return object(
		"type", jsonx.Str("anthropicCompaction"),
		"provider", cand.Get("provider"),
		"content", cand.Get("content"),
		"encryptedContent", nonEmpty("encryptedContent"),
		"filesText", nonEmpty("filesText"),
	)
}

// stripDanglingToolCalls removes tool calls without a result in the
// context from every assistant turn; a rewritten turn loses its redacted
// thinking and thinking signatures (see stripBlocks, applied as the
// message is made), and an emptied turn is dropped.
func (pl *contextPlan) stripDanglingToolCalls() {
	pl.paired = jsIDSet{}
	for _, m := range pl.msgs {
		if m.f.role == factToolResult && m.f.ids.n > 0 {
			pl.paired[pl.idsOf(m.f)[0]] = true
		}
	}
	msgs := pl.msgs[:0]
	for _, m := range pl.msgs {
		if ids := pl.idsOf(m.f); m.f.role == factAssistant && slices.ContainsFunc(ids, pl.dangling) {
			m.f.ids.n = uint32(len(slices.DeleteFunc(ids, pl.dangling)))
			if !m.f.kept && m.f.ids.n == 0 {
				continue
			}
			m.strip = true
		}
		msgs = append(msgs, m)
	}
	pl.msgs = msgs
}

// dangling reports whether a tool call's id key has no result.
func (pl *contextPlan) dangling(key string) bool { return key == "" || !pl.paired[key] }

// stripBlocks is stripDanglingToolCalls on one assistant turn: m without
// its tool calls that no id of paired answers (and, when it had one, its
// redacted thinking and thinking signatures), changed whether any was;
// undefined when nothing is left.
func stripBlocks(m jsonx.Value, paired jsIDSet) (out jsonx.Value, changed bool) {
	dangling := func(b jsonx.Value) bool {
		return b.Get("type").Is(ai.BlockToolCall) && !paired.has(b.Get("id"))
	}
	blocks := m.Get("content").Items()
	if !slices.ContainsFunc(blocks, dangling) {
		return m, false
	}
	kept := []jsonx.Value{}
	for _, b := range blocks {
		if dangling(b) || b.Get("type").Is(ai.BlockRedactedThinking) {
			continue
		}
		if b.Get("type").Is(ai.BlockThinking) && b.Get("thinkingSignature").Truthy() {
			b = b.With("thinkingSignature", jsonx.Value{})
		}
		kept = append(kept, b)
	}
	if len(kept) == 0 {
		return jsonx.Value{}, true
	}
	return m.With("content", jsonx.ArrayOf(kept...)), true
}

// dropFailedTurns removes aborted and errored assistant turns with their
// tool results, unless an interrupted-thinking note follows the turn.
// omp walks the list from its end, removing as it goes: a turn is judged
// by the message that follows it once the later turns are gone, and takes
// with it every later tool result that answers one of its calls. The same
// walk here marks instead of removing (the next live message found
// through a path-compressed skip list, the results answering an id kept
// by id), so that it takes a pass, not a pass per failed turn.
func (pl *contextPlan) dropFailedTurns() {
	msgs := pl.msgs
	n := len(msgs)
	// skip[j] leads to the first live message at j or after it.
	skip := make([]int32, n+1)
	for j := range skip {
		skip[j] = int32(j)
	}
	var live func(j int32) int32
	live = func(j int32) int32 {
		for skip[j] != j {
			skip[j], j = skip[skip[j]], skip[j]
		}
		return j
	}
	kill := func(j int) { skip[j] = int32(j + 1) }
	var results map[string][]int // live tool results by id key, in order
	for i := n - 1; i >= 0; i-- {
		f := msgs[i].f
		if f.role != factAssistant || !f.failed {
			continue
		}
		if nx := live(int32(i + 1)); int(nx) < n && msgs[nx].f.role == factCustom && msgs[nx].f.interrupted {
			continue
		}
		kill(i)
		if f.ids.n == 0 {
			continue
		}
		if results == nil {
			results = map[string][]int{}
			for j, m := range msgs {
				if m.f.role == factToolResult && m.f.ids.n > 0 {
					id := pl.idsOf(m.f)[0]
					results[id] = append(results[id], j)
				}
			}
		}
		for _, id := range pl.idsOf(f) {
			at := results[id]
			for len(at) > 0 && at[len(at)-1] > i {
				kill(at[len(at)-1])
				at = at[:len(at)-1]
			}
			results[id] = at
		}
	}
	out := msgs[:0]
	for j := range n {
		if skip[j] == int32(j) {
			out = append(out, msgs[j])
		}
	}
	pl.msgs = out
}

// estimateTokens approximates the context size the way pi does: the usage
// the last assistant turn reported, plus four characters a token after it.
func estimateTokens(msgs []ai.Message) int64 {
	var t tokenCount
	for i := range msgs {
		t.add(&msgs[i])
	}
	return t.total()
}
