package session

import (
	"bytes"
	"errors"
	"fmt"

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
	// fault is what omp's loader throws on in this entry (see ompfault.go).
	fault ompFault
	// copilotReplay marks a GitHub Copilot turn with replay history, which
	// omp strips as it loads the file and so rewrites it on its next write.
	copilotReplay bool
	// bogus marks a line that is JSON but not an object (a number, a
	// string, an array): omp keeps it as an entry without a type, an id or
	// a parent, which as the last line is the leaf, of an empty context.
	bogus bool
	// readsBack marks a compaction whose context reads entries before its
	// kept one: a notes-backed rollover (the latest user request before
	// the window) or an OpenAI remote compaction with a replay point
	// (providerReplayThroughEntryId). A remote compaction without one
	// reads nothing before itself, so its file is windowed as any other
	// (a Codex import's compactions are such).
	readsBack bool
}

// errNullLine is the envelope's error for a line that is JSON null, which
// omp's loader throws on (see ompfault.go): skipped and counted. Another
// value that is not an object is an entry (see envelope.bogus).
var errNullLine = errors.New("line is JSON null, not an object")

// scanner extracts envelopes.
type scanner struct{}

// knownTypes interns the common type names so the index holds no copies;
// typeNames gives each a code a record holds in a byte (0: none or
// another type, whose name the record holds apart).
var (
	knownTypes = map[string]string{}
	typeCodes  = map[string]uint8{}
	typeNames  = []string{""}
)

func init() {
	for _, t := range []string{TypeMessage, TypeModelChange, TypeThinkingLevelChange,
		TypeServiceTierChange, TypeCompaction, TypeBranchSummary, TypeResetBoundary,
		TypeCustom, TypeCustomMessage, TypeLabel, TypeTitleChange, TypeTTSRInjection,
		TypeSessionInit, TypeModeChange, TypeCredentialPin, TypeModelUsage, "session", "title"} {
		knownTypes[t] = t
		typeCodes[t] = uint8(len(typeNames))
		typeNames = append(typeNames, t)
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

// scan reads line's envelope, as JSON.parse reads the line: the whole line
// is checked (jsonx.Members), but only the members the envelope needs are
// decoded, so a line of any width, depth or length costs no memory
// beyond itself. A line that is not a JSON object (a torn write, null, a
// number) is an error: the caller skips and counts it. A complete object
// with junk after it on the line is read, as omp reads it (see
// jsonx.ParsePrefix): size says where it ends.
func (s *scanner) scan(line []byte) (envelope, error) {
	var typ, id, parent, msg, model, role, kept, keptIndex, customType, details, preserve, through, usage []byte
	// The message's members are read in the same pass (its text is most
	// of the line); of a duplicated message, the last is kept, as
	// JSON.parse keeps it.
	var m, cur messageMembers
	end, err := jsonx.MembersWithin(line, "message", cur.read, func(k, x []byte) {
		switch string(k) {
		case "type":
			typ = x
		case "id":
			id = x
		case "parentId":
			parent = x
		case "message":
			msg = x
			m, cur = cur, messageMembers{}
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
		case "usage":
			usage = x
		}
	})
	if errors.Is(err, jsonx.ErrNotObject) {
		// Members checked the value that starts the line (junk may follow).
		if bytes.TrimLeft(line, " \t\r\n")[0] == 'n' {
			return envelope{}, errNullLine
		}
		env := envelope{keptIndex: -1, bogus: true}
		if !jsonSpace(line[end:]) {
			env.size = end
		}
		return env, nil
	}
	if err != nil {
		return envelope{}, err
	}
	env := envelope{keptIndex: -1}
	if !jsonSpace(line[end:]) {
		env.size = end
	}
	if t, ok := small(typ).Text(); ok {
		env.typ = intern([]byte(t))
	}
	env.id = IDKey(small(id))
	env.parentID = parentKey(small(parent))
	env.fault = ompLoadFault(env.typ, msg, m, usage)
	env.copilotReplay = env.typ == TypeMessage && copilotReplay(m)
	switch env.typ {
	case TypeMessage:
		env.assistant = small(m.role).Is("assistant")
	case TypeModelChange:
		if small(model).Truthy() {
			env.modelRole = DefaultRole
			if r := small(role); !r.Nullish() {
				env.modelRole = r.ToString() // the role names an object key
			}
		}
	case TypeCompaction:
		env.firstKept = IDKey(small(kept))
		if n, ok := small(keptIndex).Float(); ok && n >= 0 && n == float64(int(n)) {
			env.keptIndex = int(n)
		}
		env.readsBack = small(memberOf(details, "kind")).Is(rolloverKind) ||
			memberOf(preserve, "openaiRemoteCompaction") != nil && small(through).Truthy()
	case TypeCustom:
		env.notes = small(customType).Is(customContextNotes)
	}
	return env, nil
}

// rolloverKind is the details.kind of omp's notes-backed compaction.
const rolloverKind = "experimental-context-rollover"

// memberOf returns the bytes of member name of the object raw holds, as
// JSON.parse reads it (the last of duplicate names); nil when raw is not
// an object or has no such member.
func memberOf(raw []byte, name string) []byte {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var found []byte
	jsonx.Members(raw, func(k, x []byte) {
		if string(k) == name {
			found = x
		}
	})
	return found
}

// smallValueBytes is the largest value small decodes whole; a larger
// object or array (which no envelope member holds but in a hostile line)
// stands as an empty one of its kind: what the envelope asks of it (its
// kind, its truthiness, that as an id it is a key of its own) is the same.
const smallValueBytes = 64 << 10

// small decodes a member's value (undefined for none), as JSON.parse
// would.
func small(raw []byte) jsonx.Value {
	if len(raw) == 0 {
		return jsonx.Value{}
	}
	if len(raw) > smallValueBytes {
		switch raw[0] {
		case '{':
			return jsonx.ObjectOf()
		case '[':
			return jsonx.ArrayOf()
		}
	}
	v, _ := jsonx.Parse(raw) // Members checked it
	return v
}

// jsonSpace reports whether b is JSON white space only.
func jsonSpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}
