package ai

import (
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/xdev/xdev/internal/jsonx"
)

// Block types omp writes in a message's content array.
const (
	BlockText             = "text"
	BlockThinking         = "thinking"
	BlockRedactedThinking = "redactedThinking"
	BlockImage            = "image"
	BlockToolCall         = "toolCall"
)

// Content is a message's content: either a plain string (user and custom
// messages may use one) or a list of blocks.
type Content struct {
	String   string
	Blocks   []Block
	IsString bool // the content is String, not Blocks
}

// TextContent returns string content.
func TextContent(s string) Content { return Content{String: s, IsString: true} }

// BlockContent returns content made of blocks.
func BlockContent(blocks ...Block) Content {
	if blocks == nil {
		blocks = []Block{}
	}
	return Content{Blocks: blocks}
}

// IsZero reports whether the content is absent, so "omitzero" leaves it out.
func (c Content) IsZero() bool { return !c.IsString && c.Blocks == nil }

// Text concatenates the text of the content.
func (c Content) Text() string {
	if c.IsString {
		return c.String
	}
	var sb strings.Builder
	for _, b := range c.Blocks {
		if b.Type == BlockText {
			sb.WriteString(b.Text)
		}
	}
	return sb.String()
}

// MarshalJSON encodes the content as a string or an array of blocks.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.IsString {
		return jsonx.Marshal(c.String)
	}
	if c.Blocks == nil {
		return []byte("[]"), nil
	}
	return jsonx.Marshal(c.Blocks)
}

// UnmarshalJSON accepts a string or an array of blocks; any other value
// decodes as no content.
func (c *Content) UnmarshalJSON(b []byte) error {
	v, err := jsonx.Parse(b)
	if err != nil {
		return err
	}
	c.DecodeJS(v)
	return nil
}

// DecodeJS fills c from a parsed JavaScript value.
func (c *Content) DecodeJS(v jsonx.Value) {
	*c = Content{}
	switch v.Kind() {
	case jsonx.String:
		c.String, c.IsString = v.String(), true
	case jsonx.Array:
		c.Blocks = make([]Block, len(v.Items()))
		for i, x := range v.Items() {
			c.Blocks[i].DecodeJS(x)
		}
	}
}

// Block is one element of a content array. A decoded block keeps its bytes,
// so block types and fields xdev does not model survive unchanged.
type Block struct {
	Type string `json:"type"`

	// toolCall
	ID        string         `json:"id,omitempty"`
	Name      string         `json:"name,omitempty"`
	Arguments jsontext.Value `json:"arguments,omitzero"`

	// text
	Text string `json:"text,omitempty"`

	// thinking
	Thinking          string `json:"thinking,omitempty"`
	ThinkingSignature string `json:"thinkingSignature,omitempty"`

	// image: base64 data, or a blob reference on disk
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`

	raw jsontext.Value // the text this block was decoded from; nil when built in Go
}

type block Block

// Text returns a text block.
func Text(s string) Block { return Block{Type: BlockText, Text: s} }

// Image returns an image block holding base64 data.
func Image(data, mimeType string) Block {
	return Block{Type: BlockImage, Data: data, MimeType: mimeType}
}

// ToolCall returns a tool-call block; args must be a JSON object.
func ToolCall(id, name string, args jsontext.Value) Block {
	return Block{Type: BlockToolCall, ID: id, Name: name, Arguments: args}
}

// Raw returns the bytes the block was decoded from, or nil.
func (b *Block) Raw() jsontext.Value { return b.raw }

// MarshalJSON emits the text a decoded block came from, with each typed
// field changed since re-encoded in place (see Message.MarshalJSON).
func (b Block) MarshalJSON() ([]byte, error) {
	if b.raw != nil {
		return patchChanged(b.raw, (*block)(&b))
	}
	if b.Type == BlockText {
		// omp always writes "text", even when empty.
		type textBlock struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		return jsonx.Marshal(textBlock{b.Type, b.Text})
	}
	return jsonx.Marshal((*block)(&b))
}

// UnmarshalJSON decodes a block and remembers its bytes.
func (b *Block) UnmarshalJSON(data []byte) error {
	v, err := jsonx.Parse(data)
	if err != nil {
		return err
	}
	b.DecodeJS(v)
	return nil
}

// DecodeJS fills b from a parsed JavaScript value, remembering it as
// JSON.stringify writes it.
func (b *Block) DecodeJS(v jsonx.Value) {
	b.decode(v)
	b.raw = v.JSONText()
}

// decode fills b's typed fields from v.
func (b *Block) decode(v jsonx.Value) {
	*b = Block{}
	jsonx.Decode(v, (*block)(b))
}

// WithoutSignature returns a copy of a thinking block whose signature is
// removed, the way omp neutralizes signed reasoning in a rewritten turn.
func (b Block) WithoutSignature() (Block, error) {
	b.ThinkingSignature = "" // omitempty: MarshalJSON removes the member
	return b, nil
}
