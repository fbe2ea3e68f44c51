package session

import (
	"math"
	"slices"
	"strconv"
	"strings"

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
	// Tokens approximates the context size: the last assistant turn's
	// reported usage plus about a token per four characters after it.
	Tokens int64
	// MissingBlobs counts image references whose blob could not be read;
	// such images keep their reference, as omp keeps them.
	MissingBlobs int
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
	return s.buildContext(s.leaf)
}

// BuildContextAt rebuilds the model context as if id were the leaf.
func (s *Store) BuildContextAt(id string) Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buildContext(id)
}

// step is one entry of the path as omp holds it in memory: the line as
// JSON.parse returned it, with blob references resolved (or, for a
// streamed build, its skeleton: see skeleton).
type step struct {
	e *Entry
	v jsonx.Value
}

func (p step) is(t string) bool { return p.v.Get("type").Is(t) }

// contextPath is the path a context build walks, an entry at a time:
// held in memory (steps), or re-read from skeletons for a streamed build.
type contextPath interface {
	Len() int
	At(i int) step
}

// steps is a path held in memory.
type steps []step

func (s steps) Len() int      { return len(s) }
func (s steps) At(i int) step { return s[i] }

// loadStep is what omp's load does to one entry's line: JSON.parse, the
// truncated-frames repair of a compaction, blob references resolved, the
// v1 and v2 migrations, and the Copilot replay strip. ok is false for a
// line that is not JSON (not in the tree).
func (s *Store) loadStep(e *Entry, blobs *blobResolver) (jsonx.Value, bool) {
	v, err := jsonx.Parse(e.raw)
	if err != nil {
		return jsonx.Value{}, false // not in the tree: decodeRecords kept only JSON lines
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
		ctx.Messages[i].DecodeJS(m.v)
	}
	ctx.Tokens = estimateTokens(ctx.Messages)
	return ctx
}

// planMsg is one message of a context plan: its value (the message as omp
// builds it, from the path entry's value), the path entry it comes from
// (src; -1 for none), how it is made from that entry's value (make), and
// whether its dangling tool calls are to be stripped (strip).
type planMsg struct {
	v     jsonx.Value
	src   int
	make  func(entry jsonx.Value) jsonx.Value
	strip bool
}

// contextPlan is a context build's outcome before its messages are
// decoded: the settings, and the messages that survive every rule. A
// streamed build makes the plan on skeletons and the messages again from
// the lines (see ContextStream).
type contextPlan struct {
	Context
	msgs   []planMsg
	paired jsIDSet // the tool call ids a tool result answers
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
		p := path.At(i)
		switch {
		case p.is(TypeThinkingLevelChange):
			thinking = p.v.Get("thinkingLevel")
			if thinking.Nullish() {
				thinking = jsonx.Str("off")
			}
		case p.is(TypeModelChange):
			if model := p.v.Get("model"); model.Truthy() {
				role := p.v.Get("role")
				if role.Nullish() {
					role = jsonx.Str(DefaultRole)
				}
				ctx.Models[role.ToString()] = model.ToString()
				if role.Is(DefaultRole) {
					explicitDefault = true
				}
			}
		case p.is(TypeMessage):
			if m := p.v.Get("message"); m.Get("role").Is("assistant") && !explicitDefault {
				ctx.Models[DefaultRole] = m.Get("provider").ToString() + "/" + m.Get("model").ToString()
			}
		case p.is(TypeCompaction):
			compIdx = i
		case p.is(TypeResetBoundary):
			resetIdx = i
		}
	}
	ctx.ThinkingLevel = thinking.ToString()
	if compIdx >= 0 {
		// omp finds the compaction again by id: the first compaction on the
		// path with the latest one's id.
		id := path.At(compIdx).e.ID
		for i := range path.Len() {
			if p := path.At(i); p.is(TypeCompaction) && p.e.ID == id {
				compIdx = i
				break
			}
		}
	}

	add := func(src int, make func(jsonx.Value) jsonx.Value) {
		if v := make(path.At(src).v); v.Defined() {
			pl.msgs = append(pl.msgs, planMsg{v: v, src: src, make: make})
		}
	}
	emit := func(i int) {
		p := path.At(i)
		switch {
		case p.is(TypeMessage):
			add(i, entryMessage)
		case p.is(TypeCustomMessage):
			if ct := p.v.Get("customType"); ct.Is(customPrewalkPlan) || ct.Is(customVibeModeContext) {
				return
			}
			add(i, func(v jsonx.Value) jsonx.Value { m, _ := customEntryMessage(v); return m })
		case p.is(TypeBranchSummary):
			add(i, branchSummaryMessage)
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
		add(compIdx, func(c jsonx.Value) jsonx.Value { return compactionMessage(c, ts, blobs) })
		ctx.MissingBlobs = blobs.missing
		if d := c.Get("details"); d.Kind() == jsonx.Object && d.Get("kind").Is(rolloverKind) {
			// A notes-backed rollover keeps the latest user request from
			// before the kept window.
			kept := findID(c.Get("firstKeptEntryId"), path.Len())
			for i := compIdx - 1; i > resetIdx; i-- {
				if !isUserRequest(path.At(i).v) {
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
		pl.msgs = append([]planMsg{{v: notesMessage(path.At(k).v), src: k, make: notesMessage}}, pl.msgs...)
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
	if m.Get("role").Is("assistant") && (m.Get("retryRecovery").Truthy() || isEmptyErrorTurn(m)) {
		return jsonx.Value{}
	}
	return m
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

// isEmptyErrorTurn is omp's isEmptyErrorTurn: an errored assistant turn
// with nothing in it. (omp throws on content that is not an array, or a
// text block whose text is not a string; such a turn is kept here.)
func isEmptyErrorTurn(m jsonx.Value) bool {
	if !m.Get("stopReason").Is(ai.StopError) {
		return false
	}
	if m.Get("content").Kind() != jsonx.Array {
		return false
	}
	for _, b := range m.Get("content").Items() {
		t := b.Get("type")
		switch {
		case t.Is(ai.BlockText):
			if strings.TrimSpace(b.Get("text").ToString()) != "" {
				return false
			}
		case t.Is(ai.BlockThinking):
			if strings.TrimSpace(b.Get("thinking").ToString()) != "" {
				return false
			}
			if sig := b.Get("thinkingSignature"); !sig.Nullish() && strings.TrimSpace(sig.ToString()) != "" {
				return false
			}
		case t.Is(ai.BlockRedactedThinking):
			if strings.TrimSpace(b.Get("data").ToString()) != "" {
				return false
			}
		case t.Is("fallback"):
		default:
			return false // tool calls and unknown blocks are content
		}
	}
	return true
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
// thinking and thinking signatures, and an emptied turn is dropped.
func (pl *contextPlan) stripDanglingToolCalls() {
	msgs := pl.msgs
	pl.paired = jsIDSet{}
	for _, m := range msgs {
		if m.v.Get("role").Is(string(ai.RoleToolResult)) {
			pl.paired.add(m.v.Get("toolCallId"))
		}
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if !m.v.Get("role").Is(string(ai.RoleAssistant)) {
			continue
		}
		stripped, changed := stripBlocks(m.v, pl.paired)
		switch {
		case !changed:
		case !stripped.Defined():
			msgs = append(msgs[:i], msgs[i+1:]...)
		default:
			msgs[i].v, msgs[i].strip = stripped, true
		}
	}
	pl.msgs = msgs
}

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
func (pl *contextPlan) dropFailedTurns() {
	msgs := pl.msgs
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i].v
		if !m.Get("role").Is(string(ai.RoleAssistant)) {
			continue
		}
		if sr := m.Get("stopReason"); !sr.Is(ai.StopAborted) && !sr.Is(ai.StopError) {
			continue
		}
		if i+1 < len(msgs) && msgs[i+1].v.Get("role").Is(string(ai.RoleCustom)) &&
			msgs[i+1].v.Get("customType").Is(customInterruptedThinking) {
			continue
		}
		var dropped []jsonx.Value
		if c := m.Get("content"); c.Kind() == jsonx.Array {
			for _, b := range c.Items() {
				if b.Get("type").Is(ai.BlockToolCall) {
					dropped = append(dropped, b.Get("id"))
				}
			}
		}
		msgs = append(msgs[:i], msgs[i+1:]...)
		if len(dropped) == 0 {
			continue
		}
		for j := len(msgs) - 1; j >= i; j-- {
			if !msgs[j].v.Get("role").Is(string(ai.RoleToolResult)) {
				continue
			}
			for _, id := range dropped {
				if sameID(id, msgs[j].v.Get("toolCallId")) {
					msgs = append(msgs[:j], msgs[j+1:]...)
					break
				}
			}
		}
	}
	pl.msgs = msgs
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
