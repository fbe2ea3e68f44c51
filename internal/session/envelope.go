package session

import (
	"errors"
	"fmt"

	"github.com/valyala/fastjson"
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

// notEntry says why a line whose envelope scan gave env and err is not an
// entry, or "" when it is one: the one rule every reader (the backward and
// forward loads, a store catching up with another writer) skips lines by.
// needID is false for v1 files, whose entries have no ids.
func notEntry(env *envelope, err error, needID bool) string {
	switch {
	case err != nil:
		return err.Error()
	case env.typ == "":
		return "entry has no type"
	case needID && env.id == "":
		return "entry has no id"
	}
	return ""
}

// tooLongReason is the reason a line longer than max is skipped.
func tooLongReason(max int) string { return fmt.Sprintf("line longer than %d bytes", max) }

// scan parses line and returns its envelope. A line that is not a JSON
// object (a torn write, null, a number) is an error: the caller skips and
// counts it.
func (s *scanner) scan(line []byte) (envelope, error) {
	v, err := s.p.ParseBytes(line)
	if err != nil {
		return envelope{}, err
	}
	if v.Type() != fastjson.TypeObject {
		return envelope{}, errNotObject
	}
	env := envelope{keptIndex: -1}
	if t := v.Get("type"); t != nil && t.Type() == fastjson.TypeString {
		env.typ = intern(t.GetStringBytes())
	}
	if id := v.Get("id"); id != nil && id.Type() == fastjson.TypeString {
		env.id = string(id.GetStringBytes())
	}
	if p := v.Get("parentId"); p != nil && p.Type() == fastjson.TypeString {
		env.parentID = string(p.GetStringBytes())
	}
	if env.typ == TypeMessage {
		if r := v.Get("message", "role"); r != nil && r.Type() == fastjson.TypeString {
			env.assistant = string(r.GetStringBytes()) == "assistant"
		}
	}
	if env.typ == TypeModelChange && len(v.GetStringBytes("model")) > 0 {
		env.modelRole = "default"
		if r := v.GetStringBytes("role"); len(r) > 0 {
			env.modelRole = string(r)
		}
	}
	if env.typ == TypeCompaction {
		if k := v.Get("firstKeptEntryId"); k != nil && k.Type() == fastjson.TypeString {
			env.firstKept = string(k.GetStringBytes())
		}
		if k := v.Get("firstKeptEntryIndex"); k != nil && k.Type() == fastjson.TypeNumber {
			if n, err := k.Int(); err == nil && n >= 0 {
				env.keptIndex = n
			}
		}
	}
	return env, nil
}
