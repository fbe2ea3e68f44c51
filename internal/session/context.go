package session

import (
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/xdev/xdev/internal/ai"
)

// Context is what a model sees when the session resumes.
type Context struct {
	LeafID        string
	Messages      []ai.Message
	Models        map[string]string // role → "provider/model"; "default" is the main model
	ThinkingLevel string
	// Tokens approximates the context size: the last assistant turn's
	// reported usage plus about a token per four characters after it.
	Tokens int64
	// MissingBlobs counts image references whose blob could not be read;
	// such images keep their reference, as omp keeps them.
	MissingBlobs int
}

// Model returns the main model, "provider/model", or "".
func (c *Context) Model() string { return c.Models["default"] }

// Custom message types omp leaves out of the model context.
const (
	customPrewalkPlan         = "prewalk-plan"
	customVibeModeContext     = "vibe-mode-context"
	customInterruptedThinking = "interrupted-thinking"
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

// buildContext follows omp 18.2.3's buildSessionContext: walk the path,
// fold the settings, let the later of the last reset and the last
// compaction govern, emit messages, then strip dangling tool calls and
// failed turns.
func (s *Store) buildContext(leafID string) Context {
	ctx := Context{LeafID: leafID, Models: map[string]string{}, ThinkingLevel: "off"}
	if _, ok := s.byID[leafID]; !ok && len(s.entries) > 0 {
		leafID = s.entries[len(s.entries)-1].ID
		ctx.LeafID = leafID
	}
	path := s.pathTo(leafID)

	explicitDefault := false
	compaction, reset := -1, -1
	for i, e := range path {
		switch b := e.Body.(type) {
		case *ThinkingLevelChange:
			ctx.ThinkingLevel = "off"
			if b.ThinkingLevel != nil {
				ctx.ThinkingLevel = *b.ThinkingLevel
			}
		case *ModelChange:
			if b.Model != "" {
				role := b.Role
				if role == "" {
					role = "default"
				}
				ctx.Models[role] = b.Model
				if role == "default" {
					explicitDefault = true
				}
			}
		case *Message:
			if m := &b.Message; m.Role == ai.RoleAssistant && !explicitDefault {
				ctx.Models["default"] = jsString(m.Provider) + "/" + jsString(m.Model)
			}
		case *Compaction:
			compaction = i
		case *ResetBoundary:
			reset = i
		}
	}

	var msgs []ai.Message
	emit := func(e *Entry) {
		switch b := e.Body.(type) {
		case *Message:
			m := b.Message
			if m.Role == ai.RoleAssistant && (m.RetryRecovery || isEmptyErrorTurn(&m)) {
				return
			}
			msgs = append(msgs, m)
		case *CustomMessage:
			if b.CustomType == customPrewalkPlan || b.CustomType == customVibeModeContext {
				return
			}
			if m, ok := customMessageFromEntry(e, b); ok {
				msgs = append(msgs, m)
			}
		case *BranchSummary:
			if b.Summary != "" {
				msgs = append(msgs, synthesize(branchSummaryWire{
					Role: ai.RoleBranchSummary, Summary: b.Summary, FromID: b.FromID, Timestamp: epochMillis(e.Timestamp),
				}))
			}
		}
	}
	switch {
	case reset >= 0 && reset > compaction:
		for _, e := range path[reset+1:] {
			emit(e)
		}
	case compaction >= 0:
		ce := path[compaction]
		c := ce.Body.(*Compaction)
		msgs = append(msgs, synthesize(compactionSummaryWire{
			Role: ai.RoleCompactionSummary, Summary: c.Summary, ShortSummary: c.ShortSummary,
			TokensBefore: c.TokensBefore, TokensAfter: c.TokensAfter, Method: c.Method,
			Timestamp: epochMillis(ce.Timestamp),
		}))
		if c.FirstKeptEntryID != nil {
			for i := 0; i < compaction; i++ {
				if path[i].ID == *c.FirstKeptEntryID {
					for _, e := range path[i:compaction] {
						emit(e)
					}
					break
				}
			}
		}
		for _, e := range path[compaction+1:] {
			emit(e)
		}
	default:
		for _, e := range path {
			emit(e)
		}
	}
	msgs = stripDanglingToolCalls(msgs)
	msgs = dropFailedTurns(msgs)
	msgs, ctx.MissingBlobs = s.resolveImages(msgs)
	ctx.Messages = msgs
	ctx.Tokens = estimateTokens(msgs)
	return ctx
}

// isEmptyErrorTurn reports an errored assistant turn with nothing in it.
func isEmptyErrorTurn(m *ai.Message) bool {
	if m.StopReason != ai.StopError {
		return false
	}
	for _, b := range m.Content.Blocks {
		switch b.Type {
		case ai.BlockText:
			if strings.TrimSpace(b.Text) != "" {
				return false
			}
		case ai.BlockThinking:
			if strings.TrimSpace(b.Thinking) != "" || strings.TrimSpace(b.ThinkingSignature) != "" {
				return false
			}
		case ai.BlockRedactedThinking:
			var d struct{ Data string }
			if json.Unmarshal(b.Raw(), &d, ai.DecodeOptions) == nil && strings.TrimSpace(d.Data) != "" {
				return false
			}
		case "fallback":
		default:
			return false // tool calls and unknown blocks are content
		}
	}
	return true
}

// stripDanglingToolCalls removes tool calls without a result in the
// context from every assistant turn; a rewritten turn loses its redacted
// thinking and thinking signatures, and an emptied turn is dropped.
func stripDanglingToolCalls(msgs []ai.Message) []ai.Message {
	paired := map[string]bool{}
	for i := range msgs {
		if msgs[i].Role == ai.RoleToolResult {
			paired[msgs[i].ToolCallID] = true
		}
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := &msgs[i]
		if m.Role != ai.RoleAssistant {
			continue
		}
		dangling := false
		for _, b := range m.Content.Blocks {
			if b.Type == ai.BlockToolCall && !paired[b.ID] {
				dangling = true
			}
		}
		if !dangling {
			continue
		}
		kept := []ai.Block{}
		for _, b := range m.Content.Blocks {
			if b.Type == ai.BlockToolCall && !paired[b.ID] || b.Type == ai.BlockRedactedThinking {
				continue
			}
			if b.Type == ai.BlockThinking {
				b, _ = b.WithoutSignature()
			}
			kept = append(kept, b)
		}
		if len(kept) == 0 {
			msgs = append(msgs[:i], msgs[i+1:]...)
			continue
		}
		if nm, err := m.WithContent(ai.BlockContent(kept...)); err == nil {
			msgs[i] = nm
		}
	}
	return msgs
}

// dropFailedTurns removes aborted and errored assistant turns with their
// tool results, unless an interrupted-thinking note follows the turn.
func dropFailedTurns(msgs []ai.Message) []ai.Message {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := &msgs[i]
		if m.Role != ai.RoleAssistant || (m.StopReason != ai.StopAborted && m.StopReason != ai.StopError) {
			continue
		}
		if i+1 < len(msgs) && msgs[i+1].Role == ai.RoleCustom && msgs[i+1].CustomType == customInterruptedThinking {
			continue
		}
		dropped := map[string]bool{}
		for _, b := range m.Content.Blocks {
			if b.Type == ai.BlockToolCall {
				dropped[b.ID] = true
			}
		}
		msgs = append(msgs[:i], msgs[i+1:]...)
		if len(dropped) > 0 {
			for j := len(msgs) - 1; j >= i; j-- {
				if msgs[j].Role == ai.RoleToolResult && dropped[msgs[j].ToolCallID] {
					msgs = append(msgs[:j], msgs[j+1:]...)
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

// The messages omp synthesizes, with the fields (and order) of its object
// literals in pi-agent-core's compaction/messages.ts.
type compactionSummaryWire struct {
	Role         ai.Role `json:"role"`
	Summary      string  `json:"summary"`
	ShortSummary string  `json:"shortSummary,omitempty"`
	TokensBefore int64   `json:"tokensBefore"`
	TokensAfter  *int64  `json:"tokensAfter,omitempty"`
	Method       string  `json:"method,omitempty"`
	Timestamp    float64 `json:"timestamp"`
}

type branchSummaryWire struct {
	Role      ai.Role `json:"role"`
	Summary   string  `json:"summary"`
	FromID    string  `json:"fromId"`
	Timestamp float64 `json:"timestamp"`
}

type customWire struct {
	Role        ai.Role        `json:"role"`
	CustomType  string         `json:"customType"`
	Content     jsontext.Value `json:"content"`
	Display     bool           `json:"display"`
	Details     jsontext.Value `json:"details,omitzero"`
	Attribution string         `json:"attribution,omitempty"`
	Timestamp   float64        `json:"timestamp"`
}

// synthesize encodes one of the wire structs above into a Message that
// remembers those exact bytes. Invalid UTF-8 copied from a damaged file
// becomes U+FFFD, as it does when JavaScript decodes the file.
func synthesize(v any) ai.Message {
	b, err := json.Marshal(v, jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	var m ai.Message
	if err == nil {
		err = m.UnmarshalJSON(b)
	}
	if err != nil {
		// Only raw values taken from the file can fail to encode; keep the
		// role so the turn structure survives.
		m = ai.Message{Role: v.(interface{ role() ai.Role }).role()}
	}
	return m
}

func (w compactionSummaryWire) role() ai.Role { return w.Role }
func (w branchSummaryWire) role() ai.Role     { return w.Role }
func (w customWire) role() ai.Role            { return w.Role }

// customMessageFromEntry builds the "custom" message omp derives from a
// custom_message entry, normalizing it as omp's normalizeCustomMessagePayload.
func customMessageFromEntry(e *Entry, b *CustomMessage) (ai.Message, bool) {
	var raw struct {
		CustomType  jsontext.Value `json:"customType"`
		Content     jsontext.Value `json:"content"`
		Display     jsontext.Value `json:"display"`
		Details     jsontext.Value `json:"details"`
		Attribution jsontext.Value `json:"attribution"`
	}
	if json.Unmarshal(e.raw, &raw, ai.DecodeOptions) != nil {
		return ai.Message{}, false
	}
	if k := raw.Content.Kind(); k != '"' && k != '[' {
		return ai.Message{}, false
	}
	w := customWire{
		Role: ai.RoleCustom, CustomType: b.CustomType, Content: raw.Content,
		Display: string(raw.Display) == "true", Details: raw.Details,
		Timestamp: epochMillis(e.Timestamp),
	}
	if w.CustomType == "" {
		w.CustomType = "custom-message"
	}
	if raw.Attribution != nil {
		w.Attribution = "agent"
		if string(raw.Attribution) == `"user"` {
			w.Attribution = "user"
		}
	}
	return synthesize(w), true
}

// epochMillis converts an ISO timestamp to JavaScript's getTime(); an
// unparsable one becomes NaN in omp, which JSON.stringify writes as null.
func epochMillis(ts string) float64 {
	t, err := ParseTime(ts)
	if err != nil {
		return 0
	}
	return float64(t.UnixMilli())
}

// jsString renders a missing string the way a JavaScript template literal
// renders undefined, which is what omp names a model it cannot tell.
func jsString(s string) string {
	if s == "" {
		return "undefined"
	}
	return s
}
