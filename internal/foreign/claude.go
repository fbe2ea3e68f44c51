package foreign

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/jsonx"
)

// Converted is a foreign session as omp's importer holds it before
// persisting: its entries (no header), the working directory and the
// title.
type Converted struct {
	Cwd string
	// Title is the session's name and TitleSource "user" (Claude's
	// custom-title) or "auto" (its ai-title); both empty without one.
	Title, TitleSource string
	// Skipped counts the source's lines that are not JSON objects (a torn
	// last line, junk, a line over the store's bound): omp skips them too.
	Skipped int
	// Started is the time of the source's first record that has one
	// (zero when none does): when the session began.
	Started time.Time
	// TitleTrigger is the trigger omp's importer records with the title
	// ("codex-import"), or empty.
	TitleTrigger string
	// EncryptedReasoning counts the messages whose reasoning the harness
	// kept encrypted (Copilot's reasoningOpaque): there, but not readable.
	EncryptedReasoning int
	// Entries are omp session entries, each as JSON.stringify writes it.
	Entries [][]byte
}

// noteStart takes ts as the session's start if it is the first time read.
func (c *Converted) noteStart(ts jsonx.Value) {
	if !c.Started.IsZero() || !ts.Defined() {
		return
	}
	if ms := timestampMs(ts, math.NaN()); !math.IsNaN(ms) && math.Abs(ms) <= 8.64e15 {
		c.Started = Time(ms)
	}
}

// stringField is a member that is a non-empty string, as omp's
// stringField reads it.
func stringField(v jsonx.Value, name string) (string, bool) {
	s, ok := v.Get(name).Text()
	return s, ok && s != ""
}

// numberField is a finite number member, else 0.
func numberField(v jsonx.Value, name string) float64 {
	f, ok := v.Get(name).Float()
	if !ok || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0
	}
	return f
}

// timestampMs reads a timestamp as omp's timestampMs does: a finite
// number as it is, a string by Date.parse, else fallback.
func timestampMs(v jsonx.Value, fallback float64) float64 {
	if f, ok := v.Float(); ok && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return f
	}
	if s, ok := v.Text(); ok {
		if ms := jsonx.ParseDate(s); !math.IsNaN(ms) {
			return ms
		}
	}
	return fallback
}

// isoTimestamp is new Date(ms).toISOString(), which throws (and so fails
// omp's import) for a time out of a Date's range.
func isoTimestamp(ms float64) (string, error) {
	if math.Abs(ms) > 8.64e15 {
		return "", fmt.Errorf("time %v out of range", ms)
	}
	return jsonx.ISOString(math.Trunc(ms)), nil
}

func member(name string, v jsonx.Value) jsonx.Member { return jsonx.Member{Name: name, Value: v} }

func isRecordValue(v jsonx.Value) bool { return v.Kind() == jsonx.Object }

// imageContent is a Claude image block as omp's image content.
func imageContent(v jsonx.Value) (jsonx.Value, bool) {
	if !v.Get("type").Is("image") || !isRecordValue(v.Get("source")) {
		return jsonx.Value{}, false
	}
	data, ok1 := stringField(v.Get("source"), "data")
	mime, ok2 := stringField(v.Get("source"), "media_type")
	if !ok1 || !ok2 {
		return jsonx.Value{}, false
	}
	return jsonx.ObjectOf(member("type", jsonx.Str("image")), member("data", jsonx.Str(data)), member("mimeType", jsonx.Str(mime))), true
}

// userPart is a text or image block of a user message.
func userPart(v jsonx.Value) (jsonx.Value, bool) {
	if !isRecordValue(v) {
		return jsonx.Value{}, false
	}
	if t, ok := v.Get("text").Text(); ok && v.Get("type").Is("text") {
		return jsonx.ObjectOf(member("type", jsonx.Str("text")), member("text", jsonx.Str(t))), true
	}
	return imageContent(v)
}

func toolResultContent(v jsonx.Value) jsonx.Value {
	if s, ok := v.Text(); ok {
		return jsonx.ArrayOf(jsonx.ObjectOf(member("type", jsonx.Str("text")), member("text", jsonx.Str(s))))
	}
	var out []jsonx.Value
	if v.Kind() == jsonx.Array {
		for _, b := range v.Items() {
			if !isRecordValue(b) {
				continue
			}
			if t, ok := b.Get("text").Text(); ok && b.Get("type").Is("text") {
				out = append(out, jsonx.ObjectOf(member("type", jsonx.Str("text")), member("text", jsonx.Str(t))))
			} else if img, ok := imageContent(b); ok {
				out = append(out, img)
			}
		}
	}
	return jsonx.ArrayOf(out...)
}

func assistantContent(v jsonx.Value, toolNames map[string]string) []jsonx.Value {
	if v.Kind() != jsonx.Array {
		return nil
	}
	var out []jsonx.Value
	for _, b := range v.Items() {
		if !isRecordValue(b) {
			continue
		}
		switch {
		case b.Get("type").Is("text") && b.Get("text").Kind() == jsonx.String:
			t, _ := b.Get("text").Text()
			out = append(out, jsonx.ObjectOf(member("type", jsonx.Str("text")), member("text", jsonx.Str(t))))
		case b.Get("type").Is("thinking") && b.Get("thinking").Kind() == jsonx.String:
			t, _ := b.Get("thinking").Text()
			ms := []jsonx.Member{member("type", jsonx.Str("thinking")), member("thinking", jsonx.Str(t))}
			if sig, ok := b.Get("signature").Text(); ok {
				ms = append(ms, member("thinkingSignature", jsonx.Str(sig)))
			}
			out = append(out, jsonx.ObjectOf(ms...))
		case b.Get("type").Is("tool_use"):
			id, ok1 := stringField(b, "id")
			name, ok2 := stringField(b, "name")
			if !ok1 || !ok2 {
				continue
			}
			args := b.Get("input")
			if !isRecordValue(args) {
				args = jsonx.ObjectOf()
			}
			out = append(out, jsonx.ObjectOf(member("type", jsonx.Str("toolCall")), member("id", jsonx.Str(id)),
				member("name", jsonx.Str(name)), member("arguments", args)))
			toolNames[id] = name
		}
	}
	return out
}

func claudeUsage(v jsonx.Value) jsonx.Value {
	var in, out, cr, cw float64
	if isRecordValue(v) {
		in, out = numberField(v, "input_tokens"), numberField(v, "output_tokens")
		cr, cw = numberField(v, "cache_read_input_tokens"), numberField(v, "cache_creation_input_tokens")
	}
	zero := jsonx.Num(0)
	return jsonx.ObjectOf(member("input", jsonx.Num(in)), member("output", jsonx.Num(out)), member("cacheRead", jsonx.Num(cr)),
		member("cacheWrite", jsonx.Num(cw)), member("totalTokens", jsonx.Num(in+out+cr+cw)),
		member("cost", jsonx.ObjectOf(member("input", zero), member("output", zero), member("cacheRead", zero),
			member("cacheWrite", zero), member("total", zero))))
}

func stopReason(v jsonx.Value) string {
	switch {
	case v.Is("tool_use"):
		return "toolUse"
	case v.Is("max_tokens"):
		return "length"
	case v.Is("end_turn"), v.Is("stop_sequence"), v.Is("pause_turn"):
		return "stop"
	case v.Nullish():
		return "stop"
	}
	return "error"
}

// converted is one message a record gives, and the suffix of its id.
type converted struct {
	msg    jsonx.Value
	suffix string
}

// isTrue reports whether member name of r is the boolean true.
func isTrue(r jsonx.Value, name string) bool {
	v := r.Get(name)
	return v.Kind() == jsonx.Bool && v.Truthy()
}

// isMessageRecord reports whether r is a user or assistant record.
func isMessageRecord(r jsonx.Value) bool {
	return r.Get("type").Is("user") || r.Get("type").Is("assistant")
}

// convertRecord is omp's convertRecord: a user or assistant record, not
// meta and (unless sidechains, for a subagent's own transcript) not a
// sidechain's, as the messages it gives.
func convertRecord(r jsonx.Value, fallback float64, toolNames map[string]string, sidechains bool) []converted {
	typ := r.Get("type")
	if !isMessageRecord(r) || !sidechains && isTrue(r, "isSidechain") || isTrue(r, "isMeta") {
		return nil
	}
	m := r.Get("message")
	if !isRecordValue(m) {
		return nil
	}
	ts := jsonx.Num(timestampMs(r.Get("timestamp"), fallback))
	if typ.Is("assistant") {
		content := assistantContent(m.Get("content"), toolNames)
		errMsg, hasErr := stringField(r, "error")
		if len(content) == 0 && !hasErr {
			return nil
		}
		model, ok := stringField(m, "model")
		if !ok {
			model = "unknown"
		}
		stop := stopReason(m.Get("stop_reason"))
		if api := r.Get("isApiErrorMessage"); api.Kind() == jsonx.Bool && api.Truthy() {
			stop = "error"
		}
		ms := []jsonx.Member{member("role", jsonx.Str("assistant")), member("content", jsonx.ArrayOf(content...)),
			member("api", jsonx.Str("anthropic-messages")), member("provider", jsonx.Str("anthropic")),
			member("model", jsonx.Str(model)), member("usage", claudeUsage(m.Get("usage"))),
			member("stopReason", jsonx.Str(stop)), member("timestamp", ts)}
		if id, ok := stringField(m, "id"); ok {
			ms = append(ms, member("responseId", jsonx.Str(id)))
		}
		if hasErr {
			ms = append(ms, member("errorMessage", jsonx.Str(errMsg)))
		}
		if st, ok := r.Get("apiErrorStatus").Float(); ok && !math.IsInf(st, 0) && !math.IsNaN(st) {
			ms = append(ms, member("errorStatus", jsonx.Num(st)))
		}
		return []converted{{jsonx.ObjectOf(ms...), "message"}}
	}
	raw := m.Get("content")
	if raw.Kind() == jsonx.Array {
		var results []converted
		var content []jsonx.Value
		start := 0
		flush := func() {
			if len(content) == 0 {
				return
			}
			results = append(results, converted{jsonx.ObjectOf(member("role", jsonx.Str("user")),
				member("content", jsonx.ArrayOf(content...)), member("timestamp", ts)), "user-" + strconv.Itoa(start)})
			content = nil
		}
		for i, b := range raw.Items() {
			if part, ok := userPart(b); ok {
				if len(content) == 0 {
					start = i
				}
				content = append(content, part)
				continue
			}
			if !isRecordValue(b) || !b.Get("type").Is("tool_result") {
				continue
			}
			callID, ok := stringField(b, "tool_use_id")
			if !ok {
				continue
			}
			flush()
			name, ok := toolNames[callID]
			if !ok {
				name = "unknown"
			}
			isErr := b.Get("is_error").Kind() == jsonx.Bool && b.Get("is_error").Truthy()
			results = append(results, converted{jsonx.ObjectOf(member("role", jsonx.Str("toolResult")),
				member("toolCallId", jsonx.Str(callID)), member("toolName", jsonx.Str(name)),
				member("content", toolResultContent(b.Get("content"))), member("isError", jsonx.BoolValue(isErr)),
				member("timestamp", ts)), "tool-" + strconv.Itoa(i)})
		}
		flush()
		if len(results) > 0 {
			return results
		}
	}
	var content jsonx.Value
	switch {
	case raw.Kind() == jsonx.String:
		if s, _ := raw.Text(); s == "" {
			return nil
		}
		content = raw
	case raw.Kind() == jsonx.Array:
		var parts []jsonx.Value
		for _, b := range raw.Items() {
			if p, ok := userPart(b); ok {
				parts = append(parts, p)
			}
		}
		if len(parts) == 0 {
			return nil
		}
		content = jsonx.ArrayOf(parts...)
	default:
		return nil
	}
	return []converted{{jsonx.ObjectOf(member("role", jsonx.Str("user")), member("content", content), member("timestamp", ts)), "message"}}
}

// ConvertClaude converts the Claude Code transcript at path as omp's
// ClaudeSessionStore.load does (ForResume). fallbackCwd is the listing's
// (the project directory's name, decoded), used when no record names a
// cwd. It holds every entry in memory; StreamClaude does not.
func ConvertClaude(path, fallbackCwd string) (*Converted, error) {
	return convertAll(func(begin func(*Converted) error, emit func(string, []byte) error) error {
		return StreamClaude(path, fallbackCwd, ForResume, begin, emit)
	})
}

// convertAll runs a stream into memory.
func convertAll(conv Stream) (*Converted, error) {
	var c *Converted
	err := conv(func(m *Converted) error { c = m; return nil },
		func(_ string, e []byte) error { c.Entries = append(c.Entries, e); return nil })
	return c, err
}

// StreamClaude is ConvertClaude in two reads of the file and bounded
// memory: the first gathers the tree links, the cwd and the title and
// passes them to begin (Entries empty); the second converts a record at a
// time and passes each entry, with its id, to emit.
//
// Two kinds of file are read other than omp's importer reads them. A
// subagent's own transcript (agent-*.jsonl, every message record a
// sidechain's), which omp's importer would make an empty session, is
// converted whole, for either purpose: it is that subagent's
// conversation. And for reading (ForReading), a compaction boundary (a
// system record of subtype compact_boundary, whose parentUuid is null and
// whose logicalParentUuid names the record before it) hangs from the
// record it follows and becomes an omp compaction entry carrying the
// summary (the isCompactSummary user record under it, folded in), so the
// conversation reads whole with the boundary marked, and its context is
// still the summary and what follows. For resuming, the boundary is a
// new root, as omp's importer leaves it.
func StreamClaude(path, fallbackCwd string, purpose Purpose, begin func(*Converted) error, emit func(id string, entry []byte) error) error {
	return streamClaude(path, fallbackCwd, purpose, eachClaudeLinks, begin, emit)
}

// streamClaude is StreamClaude whose first pass reads the records with
// firstPass: eachClaudeLinks, or eachRecord, which decodes them whole
// (the rule, for a test to compare with).
func streamClaude(path, fallbackCwd string, purpose Purpose, firstPass func(string, func(record) error) (int, error),
	begin func(*Converted) error, emit func(id string, entry []byte) error) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	mtime := mtimeMillis(fi)

	parents := map[string]string{}
	meta := &Converted{Cwd: fallbackCwd}
	cwdSet := false
	var sourceTitle, aiTitle string
	n, messages, sidechain := 0, 0, 0
	// For reading: each compaction boundary's record, and the summary
	// records by the uuid of the record they hang from.
	boundaries := map[string]boundary{}
	summaries := map[string]summaryRecord{}
	meta.Skipped, err = firstPass(path, func(r record) error {
		n++
		uuid, hasUUID := stringField(r.v, "uuid")
		if hasUUID {
			parents[uuid], _ = stringField(r.v, "parentUuid")
		}
		if isMessageRecord(r.v) {
			messages++
			if isTrue(r.v, "isSidechain") {
				sidechain++
			}
		}
		if purpose == ForReading && hasUUID {
			if b, ok := compactBoundary(r.v); ok {
				boundaries[uuid] = b
				parents[uuid] = b.logicalParent
			}
			if isTrue(r.v, "isCompactSummary") && r.v.Get("type").Is("user") {
				if p, ok := stringField(r.v, "parentUuid"); ok {
					if _, dup := summaries[p]; !dup {
						summaries[p] = summaryRecord{uuid, compactSummaryText(r.v.Get("message")), r.line}
					}
				}
			}
		}
		if !cwdSet {
			if c, ok := stringField(r.v, "cwd"); ok {
				meta.Cwd, cwdSet = c, true
			}
		}
		meta.noteStart(r.v.Get("timestamp"))
		if r.v.Get("type").Is("custom-title") {
			if t, ok := stringField(r.v, "customTitle"); ok {
				sourceTitle = t
			}
		}
		if r.v.Get("type").Is("ai-title") {
			if t, ok := stringField(r.v, "aiTitle"); ok {
				aiTitle = t
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n == 0 && fi.Size() > 0 {
		return fmt.Errorf("%s: no readable records (Claude session %s)", path, strings.TrimSuffix(filepath.Base(path), ".jsonl"))
	}
	switch {
	case sourceTitle != "":
		meta.Title, meta.TitleSource = sourceTitle, "user"
	case aiTitle != "":
		meta.Title, meta.TitleSource = aiTitle, "auto"
	}
	if err := begin(meta); err != nil {
		return err
	}
	// A summary folds into its boundary only when it hangs from one.
	folded := map[string]bool{}
	for p, sr := range summaries {
		if b, ok := boundaries[p]; ok {
			b.summary, b.summaryLine = sr.text, sr.line
			boundaries[p] = b
			folded[sr.uuid] = true
		}
	}
	sidechains := messages > 0 && sidechain == messages
	emitLine := func(id string, e []byte, line int) error {
		if purpose == ForReading {
			e = withSourceLine(e, line)
		}
		return emit(id, e)
	}

	tails := map[string]string{}
	used := map[string]bool{}
	toolNames := map[string]string{}
	lastModel := ""
	synthetic := 0
	resolveParent := func(src string) string {
		seen := map[string]bool{}
		for cur := src; cur != "" && !seen[cur]; cur = parents[cur] {
			seen[cur] = true
			if t, ok := tails[cur]; ok {
				return t
			}
		}
		return ""
	}
	_, err = eachRecord(path, func(r record) error {
		uuid, ok := stringField(r.v, "uuid")
		if b, isBoundary := boundaries[uuid]; ok && isBoundary {
			parent := resolveParent(b.logicalParent)
			ts, err := isoTimestamp(timestampMs(r.v.Get("timestamp"), mtime))
			if err != nil {
				return fmt.Errorf("%s: line %d: %w", path, r.line, err)
			}
			id := uniqueID("claude-"+uuid+"-compaction", used)
			// The entry is named by the summary's line, whose text it
			// holds (a search hit in it must point there), or else by the
			// boundary's.
			line := r.line
			if b.summaryLine > 0 {
				line = b.summaryLine
			}
			// firstKeptEntryId is the entry itself: nothing before the
			// boundary is kept, as Claude Code resumes after one.
			if err := emitLine(id, jsonx.ObjectOf(member("type", jsonx.Str("compaction")), member("id", jsonx.Str(id)),
				member("parentId", parentValue(parent)), member("timestamp", jsonx.Str(ts)),
				member("summary", jsonx.Str(b.summary)), member("firstKeptEntryId", jsonx.Str(id)),
				member("tokensBefore", jsonx.Num(b.tokensBefore))).JSON(), line); err != nil {
				return err
			}
			tails[uuid] = id
			return nil
		}
		if ok && folded[uuid] {
			return nil // its text is the compaction's summary
		}
		conv := convertRecord(r.v, mtime, toolNames, sidechains)
		if len(conv) == 0 {
			return nil
		}
		if !ok {
			uuid = "line-" + strconv.Itoa(r.line)
		}
		pu, _ := stringField(r.v, "parentUuid")
		parent := resolveParent(pu)
		ts, err := isoTimestamp(timestampMs(r.v.Get("timestamp"), mtime))
		if err != nil {
			return fmt.Errorf("%s: line %d: %w", path, r.line, err)
		}
		if r.v.Get("type").Is("assistant") && isRecordValue(r.v.Get("message")) {
			if model, ok := stringField(r.v.Get("message"), "model"); ok && model != lastModel {
				id := uniqueID("claude-"+uuid+"-model", used)
				if err := emitLine(id, jsonx.ObjectOf(member("type", jsonx.Str("model_change")),
					member("id", jsonx.Str(id)), member("parentId", parentValue(parent)), member("timestamp", jsonx.Str(ts)),
					member("model", jsonx.Str("anthropic/"+model))).JSON(), r.line); err != nil {
					return err
				}
				parent, lastModel = id, model
			}
		}
		for _, c := range conv {
			synthetic++
			id := uniqueID("claude-"+uuid+"-"+c.suffix+"-"+strconv.Itoa(synthetic), used)
			if err := emitLine(id, jsonx.ObjectOf(member("type", jsonx.Str("message")), member("id", jsonx.Str(id)),
				member("parentId", parentValue(parent)), member("timestamp", jsonx.Str(ts)), member("message", c.msg)).JSON(), r.line); err != nil {
				return err
			}
			parent = id
		}
		if parent != "" {
			tails[uuid] = parent
		}
		return nil
	})
	return err
}

// claudeLinks are the members of a Claude Code record that the first pass
// of a conversion reads: the tree's links, a compaction's boundary, the
// cwd, the start and the title. Its message is read too, where the record
// is a compaction's summary.
var claudeLinks = map[string]bool{"uuid": true, "parentUuid": true, "type": true, "subtype": true, "isSidechain": true,
	"logicalParentUuid": true, "compactMetadata": true, "isCompactSummary": true, "cwd": true, "timestamp": true,
	"customTitle": true, "aiTitle": true}

// eachClaudeLinks is eachRecord for the first pass of a conversion: each
// record that JSON.parse reads as an object, with only the members it
// looks at (claudeLinks), the rest of the line validated, never decoded
// (a message's text is most of a transcript). The lines are read in
// place; the values handed on are copies.
func eachClaudeLinks(path string, fn func(record) error) (skipped int, err error) {
	var raw [16]struct {
		name string
		v    []byte
	}
	return eachLineInPlace(path, 0, func(b []byte, line int) (bool, error) {
		n := 0
		var message []byte
		end, err := jsonx.Members(b, func(name, v []byte) {
			switch {
			case string(name) == "message":
				message = v
			case claudeLinks[string(name)]:
				for k := range n {
					if raw[k].name == string(name) {
						raw[k].v = v // JSON.parse keeps the last
						return
					}
				}
				if n < len(raw) {
					raw[n].name, raw[n].v = string(name), v
					n++
				}
			}
		})
		if err != nil || !jsonSpaceOnly(b[end:]) {
			return false, nil
		}
		ms := make([]jsonx.Member, 0, n+1)
		summary := false
		for _, m := range raw[:n] {
			v, err := jsonx.Parse(bytes.Clone(m.v))
			if err != nil {
				return false, nil // valid as a member: never
			}
			ms = append(ms, member(m.name, v))
			summary = summary || m.name == "isCompactSummary" && v.Truthy()
		}
		if summary && message != nil {
			v, err := jsonx.Parse(bytes.Clone(message))
			if err != nil {
				return false, nil
			}
			ms = append(ms, member("message", v))
		}
		return true, fn(record{jsonx.ObjectOf(ms...), line})
	})
}

// boundary is a compact_boundary record, as reading converts it.
type boundary struct {
	logicalParent string
	tokensBefore  float64
	summary       string
	summaryLine   int // the line of the summary folded in, 0 for none
}

// summaryRecord is an isCompactSummary user record: its uuid, text and
// line.
type summaryRecord struct {
	uuid, text string
	line       int
}

// compactBoundary reads r as a compaction boundary: a system record of
// subtype compact_boundary naming the record it follows.
func compactBoundary(r jsonx.Value) (boundary, bool) {
	if !r.Get("type").Is("system") || !r.Get("subtype").Is("compact_boundary") {
		return boundary{}, false
	}
	lp, ok := stringField(r, "logicalParentUuid")
	if !ok {
		return boundary{}, false
	}
	return boundary{logicalParent: lp, tokensBefore: numberField(r.Get("compactMetadata"), "preTokens")}, true
}

// compactSummaryText is a summary message's text: its string content, or
// its text blocks joined.
func compactSummaryText(m jsonx.Value) string {
	c := m.Get("content")
	if s, ok := c.Text(); ok {
		return s
	}
	var parts []string
	if c.Kind() == jsonx.Array {
		for _, b := range c.Items() {
			if t, ok := b.Get("text").Text(); ok && b.Get("type").Is("text") {
				parts = append(parts, t)
			}
		}
	}
	return strings.Join(parts, "\n\n")
}

func parentValue(id string) jsonx.Value {
	if id == "" {
		return jsonx.NullValue()
	}
	return jsonx.Str(id)
}

// uniqueID is omp's uniqueEntryId: base, else base-2, base-3, …
func uniqueID(base string, used map[string]bool) string {
	id := base
	for n := 2; used[id]; n++ {
		id = base + "-" + strconv.Itoa(n)
	}
	used[id] = true
	return id
}
