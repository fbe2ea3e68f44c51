package ai

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
)

func decode(t *testing.T, s string) Message {
	t.Helper()
	var m Message
	if err := m.UnmarshalJSON([]byte(s)); err != nil {
		t.Fatal(err)
	}
	return m
}

func encode(t *testing.T, m Message) string {
	t.Helper()
	b, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMessageRoundTrip: a decoded message encodes back to its text as
// JSON.stringify writes it, whatever the typed fields made of it.
func TestMessageRoundTrip(t *testing.T) {
	for _, tt := range []struct{ in, out string }{
		{`{"role":"user","content":"hi","timestamp":1}`, `{"role":"user","content":"hi","timestamp":1}`},
		{`{"role":"assistant","content":[{"type":"text","text":"a","extra":1}],"providerPayload":{"x":[1]},"timestamp":2}`,
			`{"role":"assistant","content":[{"type":"text","text":"a","extra":1}],"providerPayload":{"x":[1]},"timestamp":2}`},
		// Loose types decode (the typed field stays zero) and survive.
		{`{"role":"user","content":"x","timestamp":"2026-01-01T00:00:00Z","usage":{"input":1.5}}`,
			`{"role":"user","content":"x","timestamp":"2026-01-01T00:00:00Z","usage":{"input":1.5}}`},
		// JSON.parse and JSON.stringify: duplicates, numbers, lone surrogates.
		{`{"role":"user","content":"a","content":"b","n":1.0,"s":"\ud800"}`, `{"role":"user","content":"b","n":1,"s":"\ud800"}`},
		// No role, not an object: still a message, as omp passes it on.
		{`{"content":"no role"}`, `{"content":"no role"}`},
		{`"text"`, `"text"`},
	} {
		if got := encode(t, decode(t, tt.in)); got != tt.out {
			t.Errorf("%s → %s, want %s", tt.in, got, tt.out)
		}
	}
}

// TestMessageChangesAreWritten: a field set on a decoded message is what
// MarshalJSON writes, in its place; members xdev does not model keep their
// bytes; a zero omitempty field is removed.
func TestMessageChangesAreWritten(t *testing.T) {
	in := `{"role":"assistant","content":[{"type":"text","text":"a"}],"provider":"p","model":"m","x":{"keep":true},"stopReason":"stop","timestamp":2}`
	m := decode(t, in)
	m.Model = "other"
	if got, want := encode(t, m), strings.Replace(in, `"model":"m"`, `"model":"other"`, 1); got != want {
		t.Errorf("model changed: %s, want %s", got, want)
	}
	m = decode(t, in)
	m.StopReason = ""
	if got := encode(t, m); strings.Contains(got, "stopReason") || !strings.Contains(got, `"x":{"keep":true}`) {
		t.Errorf("stopReason cleared: %s", got)
	}
	m = decode(t, in)
	m.ErrorMessage = "boom" // a member the text did not have goes last
	if got := encode(t, m); !strings.HasSuffix(got, `"timestamp":2,"errorMessage":"boom"}`) {
		t.Errorf("errorMessage added: %s", got)
	}
	m = decode(t, in)
	m.Content.Blocks[0].Text = "changed in place"
	if got := encode(t, m); !strings.Contains(got, `"text":"changed in place"`) {
		t.Errorf("block changed in place: %s", got)
	}
	// The original value is untouched by the change of a copy.
	orig := decode(t, in)
	c := orig
	c.Model = "copy"
	if got := encode(t, orig); got != in {
		t.Errorf("original after a copy changed: %s", got)
	}
}

func TestWithContent(t *testing.T) {
	m := decode(t, `{"role":"user","content":"old","z":1,"timestamp":3}`)
	n, err := m.WithContent(BlockContent(Text("new")))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := encode(t, n), `{"role":"user","content":[{"type":"text","text":"new"}],"z":1,"timestamp":3}`; got != want {
		t.Errorf("WithContent: %s, want %s", got, want)
	}
	if got := encode(t, m); got != `{"role":"user","content":"old","z":1,"timestamp":3}` {
		t.Errorf("the original changed: %s", got)
	}
}

func TestWithoutSignature(t *testing.T) {
	var b Block
	if err := json.Unmarshal([]byte(`{"type":"thinking","thinking":"t","thinkingSignature":"sig","v":1}`), &b); err != nil {
		t.Fatal(err)
	}
	nb, _ := b.WithoutSignature()
	got, _ := nb.MarshalJSON()
	if string(got) != `{"type":"thinking","thinking":"t","v":1}` {
		t.Errorf("WithoutSignature: %s", got)
	}
}

// TestBuiltMessages: a message built in Go encodes its typed fields in
// omp's order, leaving out what a role does not use.
func TestBuiltMessages(t *testing.T) {
	m := Message{Role: RoleUser, Content: TextContent("hi"), Timestamp: 5}
	if got := encode(t, m); got != `{"role":"user","content":"hi","timestamp":5}` {
		t.Errorf("user: %s", got)
	}
	m = Message{Role: RoleAssistant, Content: BlockContent(Text(""), ToolCall("c1", "bash", []byte(`{"a":1}`))), StopReason: StopToolUse, Timestamp: 6}
	if got := encode(t, m); got != `{"role":"assistant","content":[{"type":"text","text":""},{"type":"toolCall","id":"c1","name":"bash","arguments":{"a":1}}],"stopReason":"toolUse","timestamp":6}` {
		t.Errorf("assistant: %s", got)
	}
	if calls := m.ToolCalls(); len(calls) != 1 || calls[0].Name != "bash" {
		t.Errorf("ToolCalls = %v", calls)
	}
}

func TestContent(t *testing.T) {
	for _, tt := range []struct {
		in   string
		text string
		str  bool
	}{
		{`"plain"`, "plain", true},
		{`[{"type":"text","text":"a"},{"type":"image","data":"x"},{"type":"text","text":"b"}]`, "ab", false},
		{`null`, "", false},
		{`5`, "", false},
	} {
		var c Content
		if err := json.Unmarshal([]byte(tt.in), &c); err != nil {
			t.Fatal(err)
		}
		if c.Text() != tt.text || c.IsString != tt.str {
			t.Errorf("%s: text %q string %v", tt.in, c.Text(), c.IsString)
		}
	}
}
