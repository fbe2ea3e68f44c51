// Package ai defines the unified message that flows between xdev, its
// session files and model providers.
//
// A [Message] is the JSON object omp and pi store under an entry's "message"
// key and hand to the model. The typed fields cover every role omp 18.2.3
// writes; anything else a message carries (provider payloads, fields from a
// newer harness) is kept, because a decoded Message remembers the text it
// came from and the fields it was decoded into: it encodes back to that
// text, with every field that was changed since re-encoded in its place.
package ai

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/xdev/xdev/internal/jsonx"
)

// Role says who produced a message.
type Role string

// The roles omp 18.2.3 writes or synthesizes.
const (
	RoleUser              Role = "user"
	RoleAssistant         Role = "assistant"
	RoleToolResult        Role = "toolResult"
	RoleDeveloper         Role = "developer"
	RoleCustom            Role = "custom"
	RoleBashExecution     Role = "bashExecution"
	RolePythonExecution   Role = "pythonExecution"
	RoleFileMention       Role = "fileMention"
	RoleBranchSummary     Role = "branchSummary"     // only synthesized by a context build
	RoleCompactionSummary Role = "compactionSummary" // only synthesized by a context build
	RoleHookMessage       Role = "hookMessage"       // format v2's name for RoleCustom
)

// Stop reasons of an assistant turn.
const (
	StopEnd     = "stop"
	StopLength  = "length"
	StopToolUse = "toolUse"
	StopError   = "error"
	StopAborted = "aborted"
)

// Message is one model-visible message. Fields a role does not use stay
// zero and are left out of its JSON. The field order is the order omp's
// object literals use, so a message xdev creates encodes the way omp's
// JSON.stringify would.
type Message struct {
	Role Role `json:"role"`

	// toolResult
	ToolCallID string `json:"toolCallId,omitempty"`
	ToolName   string `json:"toolName,omitempty"`

	// custom, hookMessage
	CustomType string `json:"customType,omitempty"`

	Content Content `json:"content,omitzero"`

	Display     *bool          `json:"display,omitempty"`
	Details     jsontext.Value `json:"details,omitzero"`
	Attribution string         `json:"attribution,omitempty"`

	// assistant
	API        string `json:"api,omitempty"`
	Provider   string `json:"provider,omitempty"`
	Model      string `json:"model,omitempty"`
	Usage      *Usage `json:"usage,omitempty"`
	StopReason string `json:"stopReason,omitempty"`

	// bashExecution, pythonExecution
	Command  string `json:"command,omitempty"`
	Code     string `json:"code,omitempty"`
	Output   string `json:"output,omitempty"`
	ExitCode *int   `json:"exitCode,omitempty"`

	// branchSummary, compactionSummary
	Summary      string `json:"summary,omitempty"`
	ShortSummary string `json:"shortSummary,omitempty"`
	FromID       string `json:"fromId,omitempty"`
	TokensBefore *int64 `json:"tokensBefore,omitempty"`
	TokensAfter  *int64 `json:"tokensAfter,omitempty"`
	Method       string `json:"method,omitempty"`

	IsError *bool `json:"isError,omitempty"`

	// Timestamp is milliseconds since the Unix epoch, as omp writes it.
	Timestamp int64 `json:"timestamp"`

	ErrorMessage  string `json:"errorMessage,omitempty"`
	RetryRecovery bool   `json:"retryRecovery,omitzero"`

	raw jsontext.Value // the text this message was decoded from; nil when built in Go
}

// Usage is the token accounting of one assistant turn.
type Usage struct {
	Input       int64 `json:"input"`
	Output      int64 `json:"output"`
	CacheRead   int64 `json:"cacheRead"`
	CacheWrite  int64 `json:"cacheWrite"`
	TotalTokens int64 `json:"totalTokens"`
	Cost        Cost  `json:"cost"`
}

// Cost is the price of one assistant turn in US dollars.
type Cost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`
}

// Raw returns the exact JSON the message was decoded from, or nil for a
// message built in Go. The caller must not modify it.
func (m *Message) Raw() jsontext.Value { return m.raw }

// message is Message without its methods, so (un)marshaling it does not recurse.
type message Message

// MarshalJSON emits the text a decoded message came from, so members xdev
// does not model survive, with each typed field that was changed since
// re-encoded in place (a zero field with omitempty removed); a message
// built in Go encodes its typed fields.
func (m Message) MarshalJSON() ([]byte, error) {
	if m.raw == nil {
		return jsonx.Marshal((*message)(&m))
	}
	return patchChanged(m.raw, (*message)(&m))
}

// UnmarshalJSON decodes a message the way omp reads one: with JSON.parse
// and no validation. Every JSON value decodes; a typed field whose value
// has another type (a string timestamp, a float token count) stays zero,
// and the message remembers the value as JSON.stringify would write it,
// which is what omp hands the model.
func (m *Message) UnmarshalJSON(b []byte) error {
	v, err := jsonx.Parse(b)
	if err != nil {
		return err
	}
	m.DecodeJS(v)
	return nil
}

// DecodeJS fills m from a parsed JavaScript value; see UnmarshalJSON.
func (m *Message) DecodeJS(v jsonx.Value) {
	m.decode(v)
	m.raw = v.JSONText()
}

// decode fills m's typed fields from v.
func (m *Message) decode(v jsonx.Value) {
	*m = Message{}
	jsonx.Decode(v, (*message)(m))
}

// Text returns the concatenated text blocks of the message (or its string
// content). Thinking, tool calls and images are left out.
func (m *Message) Text() string { return m.Content.Text() }

// ToolCalls returns the tool-call blocks of an assistant message.
func (m *Message) ToolCalls() []Block {
	var calls []Block
	for _, b := range m.Content.Blocks {
		if b.Type == BlockToolCall {
			calls = append(calls, b)
		}
	}
	return calls
}

// WithContent returns a copy of m whose content is c. Every other member of
// a decoded message, modeled or not, keeps its bytes.
func (m Message) WithContent(c Content) (Message, error) {
	m.Content = c
	return m, nil // MarshalJSON re-encodes the changed content in place
}
