package session

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/jsonx"
)

// ompStripAndDrop is omp's stripDanglingToolCalls then dropFailedTurns
// (session-context.ts) transcribed literally: the list walked from its
// end, removing as it goes, one pass over the later messages per failed
// turn. It is the reference the plan's one-pass rules are held to. It
// returns the indexes of the messages kept and, for each, whether its
// blocks were rewritten.
func ompStripAndDrop(msgs []jsonx.Value) (kept []int, stripped []bool) {
	type msg struct {
		v     jsonx.Value
		i     int
		strip bool
	}
	list := make([]msg, len(msgs))
	for i, v := range msgs {
		list[i] = msg{v: v, i: i}
	}
	paired := jsIDSet{}
	for _, m := range list {
		if m.v.Get("role").Is(string(ai.RoleToolResult)) {
			paired.add(m.v.Get("toolCallId"))
		}
	}
	for i := len(list) - 1; i >= 0; i-- {
		if !list[i].v.Get("role").Is(string(ai.RoleAssistant)) {
			continue
		}
		out, changed := stripBlocks(list[i].v, paired)
		switch {
		case !changed:
		case !out.Defined():
			list = append(list[:i], list[i+1:]...)
		default:
			list[i].v, list[i].strip = out, true
		}
	}
	for i := len(list) - 1; i >= 0; i-- {
		m := list[i].v
		if !m.Get("role").Is(string(ai.RoleAssistant)) {
			continue
		}
		if sr := m.Get("stopReason"); !sr.Is(ai.StopAborted) && !sr.Is(ai.StopError) {
			continue
		}
		if i+1 < len(list) && list[i+1].v.Get("role").Is(string(ai.RoleCustom)) &&
			list[i+1].v.Get("customType").Is(customInterruptedThinking) {
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
		list = append(list[:i], list[i+1:]...)
		for j := len(list) - 1; j >= i; j-- {
			if !list[j].v.Get("role").Is(string(ai.RoleToolResult)) {
				continue
			}
			for _, id := range dropped {
				if sameID(id, list[j].v.Get("toolCallId")) {
					list = append(list[:j], list[j+1:]...)
					break
				}
			}
		}
	}
	for _, m := range list {
		kept = append(kept, m.i)
		stripped = append(stripped, m.strip)
	}
	return kept, stripped
}

// randomTurns is a list of made messages that exercises the two rules:
// assistant turns that stop normally, abort or error, with tool calls,
// text, thinking and redacted thinking; tool results answering calls (or
// nothing, or twice); interrupted-thinking notes; ids of every JSON kind,
// few enough that they collide.
func randomTurns(r *rand.Rand, n int) []jsonx.Value {
	id := func() jsonx.Value {
		switch r.IntN(12) {
		case 0:
			return jsonx.Num(float64(r.IntN(3)))
		case 1:
			return jsonx.NullValue()
		case 2:
			return jsonx.Value{}
		case 3:
			return jsonx.ObjectOf()
		case 4:
			return jsonx.Num(0)
		}
		return jsonx.Str(fmt.Sprintf("c%d", r.IntN(n/3+2)))
	}
	var out []jsonx.Value
	for range n {
		switch r.IntN(6) {
		case 0, 1:
			var blocks []jsonx.Value
			for range r.IntN(4) {
				switch r.IntN(5) {
				case 0, 1:
					blocks = append(blocks, object("type", jsonx.Str(ai.BlockToolCall), "id", id()))
				case 2:
					blocks = append(blocks, object("type", jsonx.Str(ai.BlockRedactedThinking), "data", jsonx.Str("x")))
				case 3:
					blocks = append(blocks, object("type", jsonx.Str(ai.BlockThinking), "thinking", jsonx.Str("t"), "thinkingSignature", jsonx.Str("s")))
				default:
					blocks = append(blocks, object("type", jsonx.Str(ai.BlockText), "text", jsonx.Str("t")))
				}
			}
			stop := []string{ai.StopToolUse, ai.StopAborted, ai.StopError, "stop"}[r.IntN(4)]
			content := jsonx.ArrayOf(blocks...)
			if r.IntN(20) == 0 {
				content = jsonx.Str("text")
			}
			out = append(out, object("role", jsonx.Str("assistant"), "stopReason", jsonx.Str(stop), "content", content))
		case 2, 3:
			out = append(out, object("role", jsonx.Str(string(ai.RoleToolResult)), "toolCallId", id()))
		case 4:
			ct := customInterruptedThinking
			if r.IntN(3) == 0 {
				ct = "other"
			}
			out = append(out, object("role", jsonx.Str(string(ai.RoleCustom)), "customType", jsonx.Str(ct)))
		default:
			out = append(out, object("role", jsonx.Str("user"), "content", jsonx.Str("u")))
		}
	}
	return out
}

// TestFailedTurnRulesMatchOmp: on 20,000 generated message lists the
// plan's one-pass strip and drop keep exactly the messages omp's
// remove-as-you-go walk keeps, rewriting the same ones.
func TestFailedTurnRulesMatchOmp(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 22))
	for k := range 20_000 {
		msgs := randomTurns(r, 1+r.IntN(40))
		wantKept, wantStrip := ompStripAndDrop(msgs)
		pl := contextPlan{}
		for i, v := range msgs {
			pl.msgs = append(pl.msgs, planMsg{src: int32(i), f: pl.factsOf(v)})
		}
		pl.stripDanglingToolCalls()
		pl.dropFailedTurns()
		var gotKept []int
		var gotStrip []bool
		for _, m := range pl.msgs {
			gotKept = append(gotKept, int(m.src))
			gotStrip = append(gotStrip, m.strip)
		}
		if !slices.Equal(gotKept, wantKept) || !slices.Equal(gotStrip, wantStrip) {
			var dump []string
			for _, v := range msgs {
				dump = append(dump, string(v.JSON()))
			}
			t.Fatalf("list %d:\n%v\nkept %v strip %v\nomp  %v strip %v", k, dump, gotKept, gotStrip, wantKept, wantStrip)
		}
	}
}

// BenchmarkFailedTurns: a context of 300,000 messages where every
// assistant turn aborted with a tool call, answered: omp's walk is
// quadratic in it, the plan's rules one pass.
func BenchmarkFailedTurns(b *testing.B) {
	const n = 100_000
	var msgs []jsonx.Value
	for i := range n {
		id := fmt.Sprintf("s%d", i)
		msgs = append(msgs,
			object("role", jsonx.Str("user")),
			object("role", jsonx.Str("assistant"), "stopReason", jsonx.Str(ai.StopAborted),
				"content", jsonx.ArrayOf(object("type", jsonx.Str(ai.BlockToolCall), "id", jsonx.Str(id)))),
			object("role", jsonx.Str(string(ai.RoleToolResult)), "toolCallId", jsonx.Str(id)))
	}
	for b.Loop() {
		pl := contextPlan{}
		for i, v := range msgs {
			pl.msgs = append(pl.msgs, planMsg{src: int32(i), f: pl.factsOf(v)})
		}
		pl.stripDanglingToolCalls()
		pl.dropFailedTurns()
		if len(pl.msgs) != n {
			b.Fatalf("%d messages kept", len(pl.msgs))
		}
	}
}
