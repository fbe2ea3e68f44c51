package session

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/xdev/xdev/internal/ai"
)

// Entry types omp 18.2.3 writes. Any other type is kept as an opaque node
// of the tree (its Body is nil).
const (
	TypeMessage             = "message"
	TypeModelChange         = "model_change"
	TypeThinkingLevelChange = "thinking_level_change"
	TypeServiceTierChange   = "service_tier_change"
	TypeCompaction          = "compaction"
	TypeBranchSummary       = "branch_summary"
	TypeResetBoundary       = "reset_boundary"
	TypeCustom              = "custom"
	TypeCustomMessage       = "custom_message"
	TypeLabel               = "label"
	TypeTitleChange         = "title_change"
	TypeTTSRInjection       = "ttsr_injection"
	TypeSessionInit         = "session_init"
	TypeModeChange          = "mode_change"
	TypeCredentialPin       = "credential_pin"
	TypeModelUsage          = "model_usage"
)

// Body is the type-specific part of an entry. Each body encodes only its own
// fields; the envelope (type, id, parentId, timestamp) is added around it.
type Body interface {
	EntryType() string
}

// newBody returns an empty body for a known entry type, or nil.
func newBody(typ string) Body {
	switch typ {
	case TypeMessage:
		return new(Message)
	case TypeModelChange:
		return new(ModelChange)
	case TypeThinkingLevelChange:
		return new(ThinkingLevelChange)
	case TypeServiceTierChange:
		return new(ServiceTierChange)
	case TypeCompaction:
		return new(Compaction)
	case TypeBranchSummary:
		return new(BranchSummary)
	case TypeResetBoundary:
		return new(ResetBoundary)
	case TypeCustom:
		return new(Custom)
	case TypeCustomMessage:
		return new(CustomMessage)
	case TypeLabel:
		return new(Label)
	case TypeTitleChange:
		return new(TitleChange)
	case TypeTTSRInjection:
		return new(TTSRInjection)
	case TypeSessionInit:
		return new(SessionInit)
	case TypeModeChange:
		return new(ModeChange)
	case TypeCredentialPin:
		return new(CredentialPin)
	case TypeModelUsage:
		return new(ModelUsage)
	}
	return nil
}

// payloadFirst lists the types omp writes with the payload before the
// envelope ("type", payload..., "id", "parentId", "timestamp").
func payloadFirst(typ string) bool { return typ == TypeCustom || typ == TypeCustomMessage }

// Message is a model-visible message.
type Message struct {
	Message ai.Message `json:"message"`
}

// DefaultRole is the model role of the main model: a model_change without
// a role sets it, and Context.Models holds the main model under it.
const DefaultRole = "default"

// ModelChange records the model now active for a role ("" = DefaultRole).
type ModelChange struct {
	Model                   string `json:"model"` // "provider/modelId"
	Role                    string `json:"role,omitempty"`
	ResolvedModelIsFallback bool   `json:"resolvedModelIsFallback"`
	// Provider and ModelID are how pi writes the model instead of Model.
	// omp reads Model only (a context takes such an entry's model from
	// the turns); a reader shows them (Name).
	Provider string `json:"provider,omitempty"`
	ModelID  string `json:"modelId,omitempty"`
}

// Name is the model the entry names, as a person reads it: Model, else
// pi's provider/modelId.
func (m *ModelChange) Name() string {
	switch {
	case m.Model != "":
		return m.Model
	case m.Provider != "" && m.ModelID != "":
		return m.Provider + "/" + m.ModelID
	}
	return m.ModelID
}

// ThinkingLevelChange records the reasoning effort now active.
type ThinkingLevelChange struct {
	ThinkingLevel *string `json:"thinkingLevel"`
	Configured    *string `json:"configured"`
}

// ServiceTierChange records the provider service tier.
type ServiceTierChange struct {
	ServiceTier jsontext.Value `json:"serviceTier"`
}

// Compaction replaces the history before it with a summary. The context
// keeps the entries from FirstKeptEntryID up to the compaction.
type Compaction struct {
	Summary          string         `json:"summary"`
	ShortSummary     string         `json:"shortSummary,omitempty"`
	FirstKeptEntryID *string        `json:"firstKeptEntryId"`
	TokensBefore     int64          `json:"tokensBefore"`
	TokensAfter      *int64         `json:"tokensAfter,omitempty"`
	Method           string         `json:"method,omitempty"`
	Details          jsontext.Value `json:"details,omitzero"`
	FromExtension    *bool          `json:"fromExtension,omitempty"`

	// FirstKeptEntryIndex is the v1 form of FirstKeptEntryID: an index into
	// the file's entries with the header at 0. Migration resolves it.
	FirstKeptEntryIndex *int `json:"firstKeptEntryIndex,omitempty"`
}

// BranchSummary summarizes an abandoned branch; it is written with
// parentId = FromID, which is how omp moves the leaf durably.
type BranchSummary struct {
	FromID        string         `json:"fromId"`
	Summary       string         `json:"summary"`
	Details       jsontext.Value `json:"details,omitzero"`
	FromExtension *bool          `json:"fromExtension,omitempty"`
}

// ResetBoundary is a /clear: nothing before it reaches the model.
type ResetBoundary struct{}

// Custom is extension state; it never reaches the model. xdev's branch
// marker is a Custom with CustomType "branch" and Data {"to": id}.
type Custom struct {
	CustomType string         `json:"customType"`
	Data       jsontext.Value `json:"data,omitzero"`
}

// CustomMessage is extension content that reaches the model as a "custom"
// message.
type CustomMessage struct {
	CustomType  string         `json:"customType"`
	Content     ai.Content     `json:"content"`
	Display     bool           `json:"display"`
	Details     jsontext.Value `json:"details,omitzero"`
	Attribution string         `json:"attribution,omitempty"`
}

// Label names an entry; the last label per target in file order wins, and
// an empty label clears it.
type Label struct {
	TargetID string `json:"targetId"`
	Label    string `json:"label,omitempty"`
}

// TitleChange records a retitle; the slot holds the current title.
type TitleChange struct {
	Title         string `json:"title"`
	Source        string `json:"source"`
	PreviousTitle string `json:"previousTitle,omitempty"`
	Trigger       string `json:"trigger,omitempty"`
}

// TTSRInjection records rules injected into the conversation.
type TTSRInjection struct {
	InjectedRules []string `json:"injectedRules"`
}

// SessionInit is the first entry of a subagent transcript.
type SessionInit struct {
	SystemPrompt string   `json:"systemPrompt"`
	Task         string   `json:"task"`
	Tools        []string `json:"tools"`
	Agent        string   `json:"agent,omitempty"`
	ModelRole    string   `json:"modelRole,omitempty"`
}

// ModeChange records a mode switch ("none" leaves a mode).
type ModeChange struct {
	Mode string         `json:"mode"`
	Data jsontext.Value `json:"data,omitzero"`
}

// CredentialPin records which credential a provider is pinned to.
type CredentialPin struct {
	Provider string `json:"provider"`
	Hash     string `json:"hash"`
}

// ModelUsage records tokens spent outside the conversation (titles,
// summaries). omp writes it with the owner's parent as parentId.
type ModelUsage struct {
	Purpose      string    `json:"purpose"`
	Role         string    `json:"role,omitempty"`
	API          string    `json:"api"`
	Provider     string    `json:"provider"`
	Model        string    `json:"model"`
	Usage        *ai.Usage `json:"usage"`
	StopReason   string    `json:"stopReason"`
	ErrorMessage string    `json:"errorMessage,omitempty"`
}

func (*Message) EntryType() string             { return TypeMessage }
func (*ModelChange) EntryType() string         { return TypeModelChange }
func (*ThinkingLevelChange) EntryType() string { return TypeThinkingLevelChange }
func (*ServiceTierChange) EntryType() string   { return TypeServiceTierChange }
func (*Compaction) EntryType() string          { return TypeCompaction }
func (*BranchSummary) EntryType() string       { return TypeBranchSummary }
func (*ResetBoundary) EntryType() string       { return TypeResetBoundary }
func (*Custom) EntryType() string              { return TypeCustom }
func (*CustomMessage) EntryType() string       { return TypeCustomMessage }
func (*Label) EntryType() string               { return TypeLabel }
func (*TitleChange) EntryType() string         { return TypeTitleChange }
func (*TTSRInjection) EntryType() string       { return TypeTTSRInjection }
func (*SessionInit) EntryType() string         { return TypeSessionInit }
func (*ModeChange) EntryType() string          { return TypeModeChange }
func (*CredentialPin) EntryType() string       { return TypeCredentialPin }
func (*ModelUsage) EntryType() string          { return TypeModelUsage }
