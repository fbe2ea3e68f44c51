package session

import (
	"math"
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
// JSON.parse returned it, with blob references resolved.
type step struct {
	e *Entry
	v jsonx.Value
}

func (p step) is(t string) bool { return p.v.Get("type").Is(t) }

// buildContext is omp 18.2.3's buildSessionContext (session-context.ts)
// for the model context, rule for rule, on the values JSON.parse gives: walk
// the path, fold the settings, let the later of the last reset and the
// last compaction govern, emit messages, prepend the context notes, then
// strip dangling tool calls and failed turns.
func (s *Store) buildContext(leafID string) Context {
	ctx := Context{LeafID: leafID, Models: map[string]string{}, ThinkingLevel: "off"}
	if _, ok := s.byID[leafID]; !ok && len(s.entries) > 0 {
		leafID = s.entries[len(s.entries)-1].ID
		ctx.LeafID = leafID
	}
	entries := s.pathTo(leafID)
	blobs := &blobResolver{s: s}
	path := make([]step, 0, len(entries))
	for _, e := range entries {
		v, err := jsonx.Parse(e.raw)
		if err != nil {
			continue // not in the tree: decodeRecords kept only JSON lines
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
		path = append(path, step{e, v})
	}
	ctx.MissingBlobs = blobs.missing

	// Settings.
	thinking := jsonx.Str("off")
	explicitDefault := false
	compIdx, resetIdx := -1, -1
	for i, p := range path {
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
		for i, p := range path {
			if p.is(TypeCompaction) && p.e.ID == path[compIdx].e.ID {
				compIdx = i
				break
			}
		}
	}

	var msgs []jsonx.Value
	emit := func(p step) {
		switch {
		case p.is(TypeMessage):
			m := p.v.Get("message")
			if !m.Defined() {
				return // omp throws on a message entry without a message
			}
			if m.Get("role").Is("assistant") && (m.Get("retryRecovery").Truthy() || isEmptyErrorTurn(m)) {
				return
			}
			msgs = append(msgs, m)
		case p.is(TypeCustomMessage):
			if ct := p.v.Get("customType"); ct.Is(customPrewalkPlan) || ct.Is(customVibeModeContext) {
				return
			}
			if m, ok := customEntryMessage(p.v); ok {
				msgs = append(msgs, m)
			}
		case p.is(TypeBranchSummary):
			if p.v.Get("summary").Truthy() {
				msgs = append(msgs, object(
					"role", jsonx.Str(string(ai.RoleBranchSummary)),
					"summary", p.v.Get("summary"),
					"fromId", p.v.Get("fromId"),
					"timestamp", dateValue(p.v.Get("timestamp")),
				))
			}
		}
	}
	// findID returns the index on the path of the entry whose id equals id
	// (JavaScript's ===), searching indexes below limit, or -1.
	findID := func(id jsonx.Value, limit int) int {
		for i := 0; i < limit && i < len(path); i++ {
			if sameID(path[i].v.Get("id"), id) {
				return i
			}
		}
		return -1
	}

	switch {
	case resetIdx >= 0 && resetIdx > compIdx:
		for _, p := range path[resetIdx+1:] {
			emit(p)
		}
	case compIdx >= 0:
		c := path[compIdx].v
		remote := openAIRemotePayload(c)
		anthropic := anthropicPayload(c)
		payload := remote
		if !payload.Defined() {
			payload = anthropic
		}
		ts := c.Get("timestamp")
		if anthropic.Defined() {
			// omp predates a natively replayed summary to just before the
			// first retained entry, so the tail's signed thinking stays valid.
			var first *step
			if k := findID(c.Get("firstKeptEntryId"), len(path)); k >= 0 && k < compIdx {
				first = &path[k]
			} else if compIdx+1 < len(path) {
				first = &path[compIdx+1]
			}
			if first != nil {
				if at := jsonx.DateMillis(first.v.Get("timestamp")); !math.IsNaN(at) {
					ts = jsonx.Str(jsonx.ISOString(at - 1))
				}
			}
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
		msgs = append(msgs, object(
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
		))
		ctx.MissingBlobs = blobs.missing
		if d := c.Get("details"); d.Kind() == jsonx.Object && d.Get("kind").Is(rolloverKind) {
			// A notes-backed rollover keeps the latest user request from
			// before the kept window.
			kept := findID(c.Get("firstKeptEntryId"), len(path))
			for i := compIdx - 1; i > resetIdx; i-- {
				if !isUserRequest(path[i].v) {
					continue
				}
				if i < kept {
					emit(path[i])
				}
				break
			}
		}
		if !remote.Defined() {
			if k := findID(c.Get("firstKeptEntryId"), compIdx); k >= 0 {
				for _, p := range path[k:compIdx] {
					emit(p)
				}
			}
		} else if through := c.Get("providerReplayThroughEntryId"); through.Truthy() {
			if k := findID(through, len(path)); k >= 0 && k < compIdx {
				for _, p := range path[k+1 : compIdx] {
					emit(p)
				}
			}
		}
		for _, p := range path[compIdx+1:] {
			emit(p)
		}
	default:
		for _, p := range path {
			emit(p)
		}
	}

	if notes, ok := contextNotes(path); ok {
		msgs = append([]jsonx.Value{notes}, msgs...)
	}
	msgs = stripDanglingToolCalls(msgs)
	msgs = dropFailedTurns(msgs)

	ctx.Messages = make([]ai.Message, len(msgs))
	for i, m := range msgs {
		ctx.Messages[i].DecodeJS(m)
	}
	ctx.Tokens = estimateTokens(ctx.Messages)
	return ctx
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
func stripDanglingToolCalls(msgs []jsonx.Value) []jsonx.Value {
	var paired []jsonx.Value
	for _, m := range msgs {
		if m.Get("role").Is(string(ai.RoleToolResult)) {
			paired = append(paired, m.Get("toolCallId"))
		}
	}
	isPaired := func(id jsonx.Value) bool {
		for _, p := range paired {
			if sameID(p, id) {
				return true
			}
		}
		return false
	}
	dangling := func(b jsonx.Value) bool {
		return b.Get("type").Is(ai.BlockToolCall) && !isPaired(b.Get("id"))
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if !m.Get("role").Is(string(ai.RoleAssistant)) {
			continue
		}
		blocks := m.Get("content").Items()
		n := 0
		for _, b := range blocks {
			if dangling(b) {
				n++
			}
		}
		if n == 0 {
			continue
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
			msgs = append(msgs[:i], msgs[i+1:]...)
			continue
		}
		msgs[i] = m.With("content", jsonx.ArrayOf(kept...))
	}
	return msgs
}

// dropFailedTurns removes aborted and errored assistant turns with their
// tool results, unless an interrupted-thinking note follows the turn.
func dropFailedTurns(msgs []jsonx.Value) []jsonx.Value {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if !m.Get("role").Is(string(ai.RoleAssistant)) {
			continue
		}
		if sr := m.Get("stopReason"); !sr.Is(ai.StopAborted) && !sr.Is(ai.StopError) {
			continue
		}
		if i+1 < len(msgs) && msgs[i+1].Get("role").Is(string(ai.RoleCustom)) &&
			msgs[i+1].Get("customType").Is(customInterruptedThinking) {
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
			if !msgs[j].Get("role").Is(string(ai.RoleToolResult)) {
				continue
			}
			for _, id := range dropped {
				if sameID(id, msgs[j].Get("toolCallId")) {
					msgs = append(msgs[:j], msgs[j+1:]...)
					break
				}
			}
		}
	}
	return msgs
}

// estimateTokens approximates the context size the way pi does: the usage
// the last assistant turn reported, plus four characters a token after it.
func estimateTokens(msgs []ai.Message) int64 {
	var chars int64
	for i := len(msgs) - 1; i >= 0; i-- {
		m := &msgs[i]
		if m.Role == ai.RoleAssistant && m.Usage != nil && m.StopReason != ai.StopAborted && m.StopReason != ai.StopError {
			u := m.Usage
			total := u.TotalTokens
			if total == 0 {
				total = u.Input + u.Output + u.CacheRead + u.CacheWrite
			}
			return total + chars/4
		}
		chars += int64(len(m.Content.Text()) + len(m.Summary) + len(m.Output))
		for _, b := range m.Content.Blocks {
			chars += int64(len(b.Thinking) + len(b.Arguments))
		}
	}
	return chars / 4
}
