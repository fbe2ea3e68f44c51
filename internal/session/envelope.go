package session

import (
	"errors"
	"fmt"

	"github.com/valyala/fastjson"

	"github.com/xdev/xdev/internal/jsonx"
)

// envelope is what Open reads from every line: enough to place the entry
// in the tree and to find the window the next context build needs. Bodies
// are decoded later, and only for the entries that survive windowing.
type envelope struct {
	typ       string
	id        string
	parentID  string
	firstKept string // compaction: firstKeptEntryId
	keptIndex int    // v1 compaction: firstKeptEntryIndex, or -1
	assistant bool   // a message entry whose role is assistant
	// modelRole: a model_change that sets a model, for this role
	// ("default" when the entry names none); "" otherwise.
	modelRole string
	// notes marks a custom entry that may hold the context notebook, which
	// the context reads however far back it is (until a reset).
	notes bool
	// size is the length of the entry's JSON when junk follows it on the
	// line (see jsonx.ParsePrefix), 0 when the whole line is the entry.
	size int
	// readsBack marks a compaction whose context reads entries before its
	// kept one: a notes-backed rollover (the latest user request before
	// the window) or an OpenAI remote compaction with a replay point
	// (providerReplayThroughEntryId). A remote compaction without one
	// reads nothing before itself, so its file is windowed as any other
	// (a Codex import's compactions are such).
	readsBack bool
}

var errNotObject = errors.New("line is not a JSON object")

// scanner extracts envelopes. It reuses one parser, so it is not safe for
// concurrent use.
type scanner struct {
	p fastjson.Parser
}

// knownTypes interns the common type names so the index holds no copies.
var knownTypes = map[string]string{}

func init() {
	for _, t := range []string{TypeMessage, TypeModelChange, TypeThinkingLevelChange,
		TypeServiceTierChange, TypeCompaction, TypeBranchSummary, TypeResetBoundary,
		TypeCustom, TypeCustomMessage, TypeLabel, TypeTitleChange, TypeTTSRInjection,
		TypeSessionInit, TypeModeChange, TypeCredentialPin, TypeModelUsage, "session", "title"} {
		knownTypes[t] = t
	}
}

func intern(b []byte) string {
	if s, ok := knownTypes[string(b)]; ok { // no allocation for the lookup
		return s
	}
	return string(b)
}

// entryBytes is the part of line that is the entry: all of it, or the
// JSON value junk follows (envelope.size).
func (env *envelope) entryBytes(line []byte) []byte {
	if env.size > 0 {
		return line[:env.size]
	}
	return line
}

// tooLongReason is the reason a line longer than max is skipped.
func tooLongReason(max int) string { return fmt.Sprintf("line longer than %d bytes", max) }

// scan parses line and returns its envelope. A line that is not a JSON
// object (a torn write, null, a number) is an error: the caller skips and
// counts it.
//
// The fast path is fastjson; it reads members as JSON.parse does (the last
// of duplicate names wins) by visiting them all. A line fastjson refuses
// (deeper than its nesting limit) or whose envelope holds anything but
// plain ASCII strings is read again by jsonx, whose reading is
// JavaScript's.
func (s *scanner) scan(line []byte) (envelope, error) {
	v, err := s.p.ParseBytes(line)
	if err != nil {
		return scanJS(line, err)
	}
	if v.Type() != fastjson.TypeObject {
		return envelope{}, errNotObject
	}
	var typ, id, parent, msg, model, role, kept, keptIndex, customType, details, preserve, through *fastjson.Value
	v.GetObject().Visit(func(k []byte, x *fastjson.Value) {
		switch string(k) {
		case "type":
			typ = x
		case "id":
			id = x
		case "parentId":
			parent = x
		case "message":
			msg = x
		case "model":
			model = x
		case "role":
			role = x
		case "firstKeptEntryId":
			kept = x
		case "firstKeptEntryIndex":
			keptIndex = x
		case "customType":
			customType = x
		case "details":
			details = x
		case "preserveData":
			preserve = x
		case "providerReplayThroughEntryId":
			through = x
		}
	})
	env := envelope{keptIndex: -1}
	var ok bool
	if env.typ, ok = plainString(typ); !ok {
		return scanJS(line, nil)
	}
	env.typ = intern([]byte(env.typ))
	if env.id, ok = plainString(id); !ok {
		return scanJS(line, nil)
	}
	if env.parentID, ok = plainString(parent); !ok {
		return scanJS(line, nil)
	}
	switch env.typ {
	case TypeMessage:
		if msg != nil && msg.Type() == fastjson.TypeObject {
			r := member(msg, "role")
			env.assistant = r != nil && r.Type() == fastjson.TypeString && string(r.GetStringBytes()) == "assistant"
		}
	case TypeModelChange:
		if model != nil && model.Type() != fastjson.TypeString {
			return scanJS(line, nil) // a truthy model of another type
		}
		if model != nil && len(model.GetStringBytes()) > 0 {
			env.modelRole = DefaultRole
			if role != nil && role.Type() != fastjson.TypeNull {
				if role.Type() != fastjson.TypeString {
					return scanJS(line, nil)
				}
				env.modelRole = string(role.GetStringBytes())
			}
		}
	case TypeCompaction:
		if env.firstKept, ok = plainString(kept); !ok {
			return scanJS(line, nil)
		}
		if keptIndex != nil && keptIndex.Type() == fastjson.TypeNumber {
			if n, err := keptIndex.Int(); err == nil && n >= 0 {
				env.keptIndex = n
			}
		}
		env.readsBack = string(member(details, "kind").GetStringBytes()) == rolloverKind ||
			preserve != nil && preserve.Get("openaiRemoteCompaction") != nil && fastTruthy(through)
	case TypeCustom:
		env.notes = customType != nil && string(customType.GetStringBytes()) == customContextNotes
	}
	return env, nil
}

// rolloverKind is the details.kind of omp's notes-backed compaction.
const rolloverKind = "experimental-context-rollover"

// member returns member name of object v as JSON.parse reads it: the last
// of duplicate names (fastjson's Get returns the first). Nil when v is not
// an object or has no such member.
func member(v *fastjson.Value, name string) *fastjson.Value {
	if v == nil || v.Type() != fastjson.TypeObject {
		return nil
	}
	var found *fastjson.Value
	v.GetObject().Visit(func(k []byte, x *fastjson.Value) {
		if string(k) == name {
			found = x
		}
	})
	return found
}

// plainString returns the string x holds when that is plain printable
// ASCII (or x is absent or null: ""), and ok=false when x needs JavaScript's
// reading: another type, or text whose escapes fastjson may decode
// differently.
func plainString(x *fastjson.Value) (string, bool) {
	if x == nil || x.Type() == fastjson.TypeNull {
		return "", true
	}
	if x.Type() != fastjson.TypeString {
		return "", false
	}
	b := x.GetStringBytes()
	for _, c := range b {
		if c < 0x20 || c >= 0x7f {
			return "", false
		}
	}
	return string(b), true
}

// scanJS reads the envelope of line with jsonx. fastErr is fastjson's
// error, if it refused the line: when JSON.parse refuses it too, that
// error is the one reported.
func scanJS(line []byte, fastErr error) (envelope, error) {
	v, err := jsonx.Parse(line)
	size := 0
	if err != nil {
		// A complete value with junk after it on the line: omp keeps the
		// value (see jsonx.ParsePrefix).
		if pv, pn, perr := jsonx.ParsePrefix(line); perr == nil {
			v, size, err = pv, pn, nil
		} else if fastErr != nil {
			return envelope{}, fastErr
		} else {
			return envelope{}, err
		}
	}
	if v.Kind() != jsonx.Object {
		return envelope{}, errNotObject
	}
	env := envelope{keptIndex: -1, size: size}
	if t, ok := v.Get("type").Text(); ok {
		env.typ = intern([]byte(t))
	}
	env.id = IDKey(v.Get("id"))
	env.parentID = parentKey(v.Get("parentId"))
	switch env.typ {
	case TypeMessage:
		env.assistant = v.Get("message").Get("role").Is("assistant")
	case TypeModelChange:
		if model := v.Get("model"); model.Truthy() {
			env.modelRole = DefaultRole
			if r := v.Get("role"); !r.Nullish() {
				env.modelRole = r.ToString() // the role names an object key
			}
		}
	case TypeCompaction:
		env.firstKept = IDKey(v.Get("firstKeptEntryId"))
		if n, ok := v.Get("firstKeptEntryIndex").Float(); ok && n >= 0 && n == float64(int(n)) {
			env.keptIndex = int(n)
		}
		env.readsBack = v.Get("details").Get("kind").Is(rolloverKind) ||
			v.Get("preserveData").Has("openaiRemoteCompaction") && v.Get("providerReplayThroughEntryId").Truthy()
	case TypeCustom:
		env.notes = v.Get("customType").Is(customContextNotes)
	}
	return env, nil
}

// fastTruthy is JavaScript's truthiness of a member read by fastjson: a
// missing one, null, false, "" and 0 are false.
func fastTruthy(v *fastjson.Value) bool {
	if v == nil {
		return false
	}
	switch v.Type() {
	case fastjson.TypeNull, fastjson.TypeFalse:
		return false
	case fastjson.TypeString:
		return len(v.GetStringBytes()) > 0
	case fastjson.TypeNumber:
		return v.GetFloat64() != 0
	}
	return true
}
