package session

import (
	"errors"
	"fmt"

	"github.com/xdev/xdev/internal/jsonx"
)

// xdev reads some files omp 18.2.3 cannot open at all: omp's code takes
// for granted shapes that a line need not have, and throws a TypeError on
// the first entry that lacks them, so `omp --resume` fails on the whole
// file. xdev reads such an entry as JSON.parse gives it (and skips nothing
// omp would not skip), which is the better reading, but the file is then
// one omp cannot resume, and verify says so (ProblemOmpRefuses).
//
// The checks are omp's own throw sites, where they run:
//
//   - on every line, as omp loads the file (session-manager.ts insert,
//     entryUsage, addUsage; sanitizeLoadedOpenAIResponsesReplayMetadata):
//     a line that is JSON null; in a v1 file, a line that is another
//     value but an object or array (the migration gives it an id); a
//     message entry whose message is null or missing; a usage record (an assistant turn's, a model_usage
//     entry's, a task tool result's details.usage) that is truthy but has
//     no cost; a GitHub Copilot turn with replay history whose content is
//     not an array of objects. These are found by the envelope pass
//     (ompLoadFault), so an Index knows them without decoding.
//   - on the path, as omp rebuilds the context (session-context.ts): a
//     ttsr_injection whose injectedRules cannot be iterated; an errored
//     assistant turn isEmptyErrorTurn throws on; an assistant turn in the
//     context whose content cannot be iterated or holds a null block.
//     These are found by the context plan (contextPlan.fault).
//
// The differential tester holds both to real omp: a generated file omp
// refuses is flagged, and one omp opens is not.

// An ompFault names a shape omp throws on; "" is none.
type ompFault string

const (
	faultNullLine     ompFault = "a line that is JSON null (omp's loader reads entry.type of it)"
	faultNoMessage    ompFault = "a message entry without a message (omp reads message.role of it)"
	faultUsageNoCost  ompFault = "a usage record without a cost (omp adds usage.cost.total)"
	faultCopilotBlock ompFault = "a GitHub Copilot turn with replay history whose content is not an array of objects (omp maps it)"
	faultV1Primitive  ompFault = "a line of a v1 file that is a JSON number, string or boolean (omp's migration gives it an id)"
	faultTTSRRules    ompFault = "a ttsr_injection entry without a list of injectedRules (omp iterates it)"
	faultErrorTurn    ompFault = "an errored assistant turn whose content omp cannot check for text (isEmptyErrorTurn)"
	faultContent      ompFault = "an assistant turn whose content is neither text nor a list of blocks (omp iterates it)"
)

// ompFaults numbers the faults a record holds in a byte.
var ompFaults = []ompFault{"", faultNoMessage, faultUsageNoCost, faultCopilotBlock, faultV1Primitive}

func faultCode(f ompFault) uint8 {
	for i, g := range ompFaults {
		if g == f {
			return uint8(i)
		}
	}
	return 0
}

// messageMembers are the members of an entry's message that the envelope
// pass asks of: read in one pass over the message (which holds the
// line's long text), never decoded whole.
type messageMembers struct {
	role, usage, provider, payload, content, toolName, details []byte
}

// read takes one member of a message (jsonx.MembersWithin's inner
// callback).
func (m *messageMembers) read(k, x []byte) {
	switch string(k) {
	case "role":
		m.role = x
	case "usage":
		m.usage = x
	case "provider":
		m.provider = x
	case "providerPayload":
		m.payload = x
	case "content":
		m.content = x
	case "toolName":
		m.toolName = x
	case "details":
		m.details = x
	}
}

// ompLoadFault is the load-time fault of an entry of type typ whose top
// level holds msg (its "message", whose members are m) and usage (its
// "usage"), as raw bytes.
func ompLoadFault(typ string, msg []byte, m messageMembers, usage []byte) ompFault {
	switch typ {
	case TypeModelUsage:
		return usageFault(usage)
	case TypeMessage:
	default:
		return ""
	}
	// Members checked msg: a value that starts with n is null.
	if len(msg) == 0 || msg[0] == 'n' {
		return faultNoMessage
	}
	if msg[0] != '{' {
		return "" // a primitive's role is undefined: omp reads on
	}
	switch r := small(m.role); {
	case r.Is("assistant"):
		if f := usageFault(m.usage); f != "" {
			return f
		}
		if copilotReplay(m) && !blockList(m.content) {
			return faultCopilotBlock
		}
	case r.Is("toolResult") && small(m.toolName).Is("task"):
		// taskUsageFrom: details.usage when it is an object (an array is).
		if len(m.details) > 0 && m.details[0] == '{' {
			if u := memberOf(m.details, "usage"); len(u) > 0 && (u[0] == '{' || u[0] == '[') {
				return usageFault(u)
			}
		}
	}
	return ""
}

// copilotReplay reports whether the message whose members are m is a
// GitHub Copilot assistant turn with OpenAI Responses replay history, which
// omp's loader strips (sanitizeRehydratedOpenAIResponsesAssistantMessage,
// session-manager.ts), marking the file for a whole rewrite.
func copilotReplay(m messageMembers) bool {
	return small(m.role).Is("assistant") && small(memberOf(m.payload, "type")).Is("openaiResponsesHistory") && small(m.provider).Is("github-copilot")
}

// usageFault is addUsage's throw: a truthy usage whose cost is null or
// undefined (a primitive has none).
// Both are asked of the raw bytes: a usage record is a few dozen numbers,
// decoding which was a fifth of reading a file's envelopes.
func usageFault(usage []byte) ompFault {
	if !truthy(usage) {
		return ""
	}
	if cost := memberOf(usage, "cost"); len(cost) == 0 || cost[0] == 'n' {
		return faultUsageNoCost
	}
	return ""
}

// blockList reports whether content is an array none of whose elements is
// null: what omp can map and read .type of.
func blockList(content []byte) bool {
	if len(content) == 0 || content[0] != '[' {
		return false
	}
	ok := true
	jsonx.Elements(content, func(x []byte) {
		if string(x) == "null" {
			ok = false
		}
	})
	return ok
}

// jsIterable reports whether JavaScript's for...of takes v: an array or a
// string.
func jsIterable(v jsonx.Value) bool { return v.Kind() == jsonx.Array || v.Kind() == jsonx.String }

// contentFault is the strip loops' throw on an assistant turn in the
// context: content that for...of does not take, or a null block in it
// (its .type is read).
func contentFault(m jsonx.Value) ompFault {
	c := m.Get("content")
	if !jsIterable(c) {
		return faultContent
	}
	for _, b := range c.Items() {
		if b.Kind() == jsonx.Null {
			return faultContent
		}
	}
	return ""
}

// emptyErrorTurn is omp's isEmptyErrorTurn on an assistant turn, with
// whether it throws: content.some over the blocks, stopping at the first
// that has content, reading text, thinking, its signature and redacted
// data with .trim(), which only a string has. A turn omp throws on is not
// empty to xdev (it is kept, as its content is there to read).
func emptyErrorTurn(m jsonx.Value) (empty bool, fault ompFault) {
	if !m.Get("stopReason").Is("error") {
		return false, ""
	}
	c := m.Get("content")
	if c.Kind() != jsonx.Array {
		return false, faultErrorTurn // content.some is not a function
	}
	trimmed := func(v jsonx.Value) (string, bool) {
		s, ok := v.Text()
		return jsTrim(s), ok
	}
	for _, b := range c.Items() {
		if b.Kind() == jsonx.Null {
			return false, faultErrorTurn
		}
		var has bool
		switch t := b.Get("type"); {
		case t.Is("text"):
			s, ok := trimmed(b.Get("text"))
			if !ok {
				return false, faultErrorTurn
			}
			has = s != ""
		case t.Is("thinking"):
			s, ok := trimmed(b.Get("thinking"))
			if !ok {
				return false, faultErrorTurn
			}
			has = s != ""
			if !has {
				if sig := b.Get("thinkingSignature"); !sig.Nullish() {
					s, ok := trimmed(sig)
					if !ok {
						return false, faultErrorTurn
					}
					has = s != ""
				}
			}
		case t.Is("redactedThinking"):
			s, ok := trimmed(b.Get("data"))
			if !ok {
				return false, faultErrorTurn
			}
			has = s != ""
		case t.Is("fallback"):
		default:
			has = true
		}
		if has {
			return false, ""
		}
	}
	return true, ""
}

// ErrOmpWouldRefuse is returned by a write that would leave a session omp
// cannot resume where it could before: a branch, or a copy of a branch,
// whose path runs through an entry omp throws on as it rebuilds the
// context. Nothing is written.
var ErrOmpWouldRefuse = errors.New("omp could not resume the session afterwards")

// ompResumesAt returns nil when omp can rebuild the context with entry i
// of x as the leaf, and an error wrapping ErrOmpWouldRefuse that names the
// entry it would throw on when it cannot.
func (x *Index) ompResumesAt(i int) error {
	c, err := x.readContextAt(i)
	if err != nil {
		return err
	}
	if c.OmpRefuses != "" {
		return fmt.Errorf("%w: line %d is %s, on the path to entry %s", ErrOmpWouldRefuse, c.OmpRefusesLine, c.OmpRefuses, DisplayID(x.ID(i)))
	}
	return nil
}
