package foreign

import (
	"crypto/sha256"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/xdev/xdev/internal/jsonx"
)

// CodexInfo is what omp's CodexSessionStore.list knows of a rollout before
// loading it, and load falls back on: its id, cwd, title (from Codex's
// session_index.jsonl) and creation time in ms.
type CodexInfo struct {
	ID, Cwd, Title string
	Created        float64
}

// ConvertCodex converts the Codex rollout at path as omp's
// CodexSessionStore.load does, rule for rule: response items are the
// conversation; event_msg records add only what no response item already
// says (Codex logs most things twice); turn_context changes the model;
// compacted records become compactions that keep Codex's replacement
// history for the OpenAI provider; thread_rolled_back drops the last
// turns. A .zst rollout is read through zstd (omp reads only .jsonl). It
// holds every entry in memory; StreamCodex does not.
func ConvertCodex(path string, info CodexInfo) (*Converted, error) {
	var c *Converted
	err := StreamCodex(path, info, ForResume, func(m *Converted) error { c = m; return nil },
		func(_ string, e []byte) error { c.Entries = append(c.Entries, e); return nil })
	return c, err
}

// StreamCodex is ConvertCodex in three reads of the file and memory that
// follows the number of entries, not their size: the first learns what
// the response items say (as hashes) and the cwd; the second converts
// without keeping anything but which items survive the rollbacks, the
// title and the last time, and passes them to begin; the third converts
// again and passes each surviving entry, with its id, to emit.
func StreamCodex(path string, info CodexInfo, purpose Purpose, begin func(*Converted) error, emit func(id string, entry []byte) error) error {
	meta := &Converted{Cwd: info.Cwd, TitleTrigger: "codex-import"}
	canon := codexCanon{map[textKey]bool{}, map[textKey]bool{}, map[string]bool{}}
	n, cwdSet := 0, false
	var err error
	meta.Skipped, err = eachRecord(path, func(r record) error {
		n++
		if !cwdSet && r.v.Get("type").Is("session_meta") && isRecordValue(r.v.Get("payload")) {
			cwdSet = true
			if c, ok := r.v.Get("payload").Get("cwd").Text(); ok {
				meta.Cwd = c
			}
		}
		meta.noteStart(r.v.Get("timestamp"))
		canon.add(r)
		return nil
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s: empty or malformed (Codex session %s)", path, info.ID)
	}

	// The dry run: which items outlive the rollbacks (by their position
	// among the items pushed), as omp's splice leaves them.
	var kept []int
	var isUser []bool
	pushed := 0
	fallback, title, err := codexPass(path, info, canon, func(it *codexItem) error {
		if it.rollback != 0 && !math.IsNaN(it.rollback) {
			keep := codexRollback(isUser, it.rollback)
			kept, isUser = kept[:keep], isUser[:keep]
			return nil
		}
		kept = append(kept, pushed)
		isUser = append(isUser, it.msg.Get("role").Is("user"))
		pushed++
		return nil
	})
	if err != nil {
		return err
	}
	meta.Title, meta.TitleSource = title, "auto"
	if title == "" {
		meta.TitleSource = ""
	}
	if err := begin(meta); err != nil {
		return err
	}

	parent := ""
	pushed, next := 0, 0
	_, _, err = codexPass(path, info, canon, func(it *codexItem) error {
		if it.rollback != 0 && !math.IsNaN(it.rollback) {
			return nil
		}
		at := pushed
		pushed++
		if next >= len(kept) || kept[next] != at {
			return nil // rolled back later
		}
		next++
		id := "codex-" + formatBase36(next)
		e, err := codexEntry(it, id, parent, fallback, purpose)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if e == nil {
			return nil // a title or an empty rollback: it took an ordinal, as in omp
		}
		parent = id
		if purpose == ForReading {
			e = withSourceLine(e, it.line)
		}
		return emit(id, e)
	})
	return err
}

// codexPass reads the rollout once, converting each record as omp's load
// loop does and passing the items (rollbacks included, a tool result
// that follows its call as an item of its own) to visit. It returns the
// last fallback time and the title.
func codexPass(path string, info CodexInfo, canon codexCanon, visit func(*codexItem) error) (fallback float64, title string, err error) {
	cv := codexConverter{canon: canon, toolNames: map[string]string{}, model: "codex"}
	fallback, title = info.Created, info.Title
	_, err = eachRecord(path, func(r record) error {
		ts := codexMillis(r.v.Get("timestamp"), fallback)
		fallback = math.Max(fallback+1, ts)
		it := cv.item(r.v, ts)
		if it == nil {
			return nil
		}
		it.line = r.line
		if err := visit(it); err != nil {
			return err
		}
		if it.following.Defined() {
			if err := visit(&codexItem{msg: it.following, ts: ts, hasTS: true, line: r.line}); err != nil {
				return err
			}
		}
		if it.title != "" {
			title = it.title
		}
		return nil
	})
	return fallback, title, err
}

// item is what the rollout's record v, at ts, becomes as omp's load loop
// reads it (nil for none): the one rule for a whole rollout's pass and
// for one line read alone (lineEntries).
func (cv *codexConverter) item(v jsonx.Value, ts float64) *codexItem {
	p := v.Get("payload")
	if !isRecordValue(p) {
		return nil
	}
	switch typ := v.Get("type"); {
	case typ.Is("turn_context"):
		if m, ok := p.Get("model").Text(); ok && m != "" && m != cv.model {
			cv.model = m
			return &codexItem{model: m, ts: ts, hasTS: true}
		}
	case typ.Is("response_item"):
		return cv.responseItem(p, ts)
	case typ.Is("event_msg"):
		return cv.event(p, ts)
	case typ.Is("compacted"):
		return codexCompacted(p, ts)
	}
	return nil
}

// codexEntry is the omp entry an item becomes, or nil for an item that
// becomes none. Its time is the item's, else fallback (omp's last).
// omp's import labels a compaction "Imported Codex compaction"; a
// conversion for reading leaves the label out: it is text the rollout
// never held, and a search for "codex" found it at a line without it.
func codexEntry(it *codexItem, id, parent string, fallback float64, purpose Purpose) ([]byte, error) {
	ms := fallback
	if it.hasTS {
		ms = it.ts
	}
	stamp, err := isoTimestamp(ms)
	if err != nil {
		return nil, err // omp's toISOString throws, for entries or not
	}
	head := []jsonx.Member{member("id", jsonx.Str(id)), member("parentId", parentValue(parent)), member("timestamp", jsonx.Str(stamp))}
	var e []jsonx.Member
	switch {
	case it.msg.Defined():
		e = append(append([]jsonx.Member{member("type", jsonx.Str("message"))}, head...), member("message", it.msg))
	case it.model != "":
		e = append(append([]jsonx.Member{member("type", jsonx.Str("model_change"))}, head...),
			member("model", jsonx.Str("openai-codex/"+it.model)))
	case it.compaction != nil:
		e = append(append([]jsonx.Member{member("type", jsonx.Str("compaction"))}, head...),
			member("summary", jsonx.Str(it.compaction.summary)))
		if purpose != ForReading {
			e = append(e, member("shortSummary", jsonx.Str("Imported Codex compaction")))
		}
		e = append(e, member("firstKeptEntryId", jsonx.Str(id)), member("tokensBefore", jsonx.Num(0)))
		if it.compaction.history.Defined() {
			remote := []jsonx.Member{member("provider", jsonx.Str("openai-codex")), member("replacementHistory", it.compaction.history)}
			if it.compaction.item.Defined() {
				remote = append(remote, member("compactionItem", it.compaction.item))
			}
			e = append(e, member("preserveData", jsonx.ObjectOf(member("openaiRemoteCompaction", jsonx.ObjectOf(remote...)))))
		}
	default:
		return nil, nil
	}
	return jsonx.ObjectOf(e...).JSON(), nil
}

// codexItem is one converted record, as omp's ConvertedRecord: a message
// (and the tool result that follows it), a model change, a compaction, a
// rollback or a title.
type codexItem struct {
	msg, following jsonx.Value
	model          string
	compaction     *codexCompaction
	rollback       float64
	title          string
	ts             float64
	hasTS          bool
	line           int // the rollout's line it came from
}

type codexCompaction struct {
	summary       string
	history, item jsonx.Value
}

// codexCanon holds what the response items say, so that the event_msg
// records repeating them are dropped. Texts are kept as hashes: a
// rollout's every message need not stay in memory to be recognized.
type codexCanon struct {
	users, assistants map[textKey]bool
	toolCalls         map[string]bool
}

// textKey is a text's SHA-256, cut to 128 bits: a collision (which would
// drop one event's duplicate wrongly) is not a practical concern.
type textKey [16]byte

func keyOf(s string) textKey {
	sum := sha256.Sum256([]byte(s))
	return textKey(sum[:16])
}

// codexConverter is the state one rollout's conversion carries.
type codexConverter struct {
	canon     codexCanon
	toolNames map[string]string
	model     string
}

// textField is a string member, empty or not (omp's Codex stringField).
func textField(v jsonx.Value, name string) (string, bool) { return v.Get(name).Text() }

// idField is a.call_id ?? a.id as omp writes it: an empty call_id is kept
// (and then refused by the caller), an absent one falls back.
func idField(v jsonx.Value, first, second string) string {
	if s, ok := textField(v, first); ok {
		return s
	}
	s, _ := textField(v, second)
	return s
}

// add notes what one record, if a response item, says.
func (c codexCanon) add(r record) {
	p := r.v.Get("payload")
	if !r.v.Get("type").Is("response_item") || !isRecordValue(p) {
		return
	}
	if id := idField(p, "call_id", "id"); id != "" {
		if t, ok := p.Get("type").Text(); ok && strings.Contains(t, "call") {
			c.toolCalls[id] = true
		}
	}
	switch {
	case p.Get("type").Is("message"):
		text := codexText(p.Get("content"))
		if text == "" {
			return
		}
		if p.Get("role").Is("user") {
			c.users[keyOf(text)] = true
		} else if p.Get("role").Is("assistant") {
			c.assistants[keyOf(text)] = true
		}
	case p.Get("type").Is("reasoning"):
		for _, part := range codexReasoning(p) {
			t, _ := part.Get("thinking").Text()
			c.assistants[keyOf(t)] = true
		}
	}
}

// codexMillis is omp's timestampMillis: a finite number is seconds below
// 1e10 and ms above, a string is Date.parse'd, else fallback.
func codexMillis(v jsonx.Value, fallback float64) float64 {
	if f, ok := v.Float(); ok && !math.IsInf(f, 0) && !math.IsNaN(f) {
		if f < 10_000_000_000 {
			return f * 1000
		}
		return f
	}
	if s, ok := v.Text(); ok {
		if ms := jsonx.ParseDate(s); !math.IsNaN(ms) {
			return ms
		}
	}
	return fallback
}

func textPart(s string) jsonx.Value {
	return jsonx.ObjectOf(member("type", jsonx.Str("text")), member("text", jsonx.Str(s)))
}

// codexImage is an input_image's data: URL as omp's image content.
func codexImage(url, detail jsonx.Value) (jsonx.Value, bool) {
	s, ok := url.Text()
	if !ok || !strings.HasPrefix(s, "data:") {
		return jsonx.Value{}, false
	}
	rest := s[len("data:"):]
	i := strings.IndexAny(rest, ";,")
	if i <= 0 || !strings.HasPrefix(rest[i:], ";base64,") || len(rest) == i+len(";base64,") {
		return jsonx.Value{}, false
	}
	ms := []jsonx.Member{member("type", jsonx.Str("image")), member("mimeType", jsonx.Str(rest[:i])),
		member("data", jsonx.Str(rest[i+len(";base64,"):]))}
	for _, d := range []string{"auto", "low", "high", "original"} {
		if detail.Is(d) {
			ms = append(ms, member("detail", jsonx.Str(d)))
		}
	}
	return jsonx.ObjectOf(ms...), true
}

// codexContent is omp's responseContent: the text and image parts of a
// response item's content.
func codexContent(v jsonx.Value) []jsonx.Value {
	if v.Kind() != jsonx.Array {
		return nil
	}
	var out []jsonx.Value
	for _, it := range v.Items() {
		if !isRecordValue(it) {
			continue
		}
		typ := it.Get("type")
		if t, ok := textField(it, "text"); ok && (typ.Is("input_text") || typ.Is("output_text") || typ.Is("text")) {
			out = append(out, textPart(t))
			continue
		}
		if typ.Is("input_image") {
			if img, ok := codexImage(it.Get("image_url"), it.Get("detail")); ok {
				out = append(out, img)
			}
		}
	}
	return out
}

// codexText is the content's text parts joined.
func codexText(v jsonx.Value) string {
	var b strings.Builder
	for _, p := range codexContent(v) {
		if p.Get("type").Is("text") {
			t, _ := p.Get("text").Text()
			b.WriteString(t)
		}
	}
	return b.String()
}

// codexArguments is omp's toolArguments: an object as it is, a string
// that parses as an object, else the string as {input}; anything else {}.
func codexArguments(v jsonx.Value) jsonx.Value {
	if isRecordValue(v) {
		return v
	}
	s, ok := v.Text()
	if !ok {
		return jsonx.ObjectOf()
	}
	if p, err := jsonx.Parse([]byte(s)); err == nil && isRecordValue(p) {
		return p
	}
	return jsonx.ObjectOf(member("input", v))
}

// codexOutput is omp's toolOutputContent.
func codexOutput(v jsonx.Value) jsonx.Value {
	if parts := codexContent(v); len(parts) > 0 {
		return jsonx.ArrayOf(parts...)
	}
	if s, ok := v.Text(); ok {
		return jsonx.ArrayOf(textPart(s))
	}
	if !v.Defined() {
		return jsonx.ArrayOf()
	}
	return jsonx.ArrayOf(textPart(string(v.JSON())))
}

func codexReasoning(p jsonx.Value) []jsonx.Value {
	var out []jsonx.Value
	for _, key := range []string{"summary", "content"} {
		v := p.Get(key)
		if v.Kind() != jsonx.Array {
			continue
		}
		for _, it := range v.Items() {
			if !isRecordValue(it) {
				continue
			}
			if t, ok := textField(it, "text"); ok && t != "" {
				out = append(out, jsonx.ObjectOf(member("type", jsonx.Str("thinking")), member("thinking", jsonx.Str(t))))
			}
		}
	}
	return out
}

func (cv *codexConverter) assistant(content []jsonx.Value, ts float64, stop string) *codexItem {
	zero := jsonx.Num(0)
	usage := jsonx.ObjectOf(member("input", zero), member("output", zero), member("cacheRead", zero),
		member("cacheWrite", zero), member("totalTokens", zero),
		member("cost", jsonx.ObjectOf(member("input", zero), member("output", zero), member("cacheRead", zero),
			member("cacheWrite", zero), member("total", zero))))
	return &codexItem{msg: jsonx.ObjectOf(member("role", jsonx.Str("assistant")), member("content", jsonx.ArrayOf(content...)),
		member("api", jsonx.Str("openai-codex-responses")), member("provider", jsonx.Str("openai-codex")),
		member("model", jsonx.Str(cv.model)), member("usage", usage), member("stopReason", jsonx.Str(stop)),
		member("timestamp", jsonx.Num(ts))), ts: ts, hasTS: true}
}

func (cv *codexConverter) call(id, name string, args jsonx.Value, wire bool, ts float64) *codexItem {
	ms := []jsonx.Member{member("type", jsonx.Str("toolCall")), member("id", jsonx.Str(id)), member("name", jsonx.Str(name)),
		member("arguments", codexArguments(args))}
	if wire {
		ms = append(ms, member("customWireName", jsonx.Str(name)))
	}
	return cv.assistant([]jsonx.Value{jsonx.ObjectOf(ms...)}, ts, "toolUse")
}

func toolResult(id, name string, content jsonx.Value, isErr bool, ts float64) jsonx.Value {
	return jsonx.ObjectOf(member("role", jsonx.Str("toolResult")), member("toolCallId", jsonx.Str(id)),
		member("toolName", jsonx.Str(name)), member("content", content), member("isError", jsonx.BoolValue(isErr)),
		member("timestamp", jsonx.Num(ts)))
}

func (cv *codexConverter) nameOf(id, fallback string) string {
	if n, ok := cv.toolNames[id]; ok {
		return n
	}
	return fallback
}

// responseItem is omp's convertedResponseItem.
func (cv *codexConverter) responseItem(p jsonx.Value, ts float64) *codexItem {
	switch typ := p.Get("type"); {
	case typ.Is("message"):
		content := codexContent(p.Get("content"))
		if len(content) == 0 {
			return nil
		}
		if p.Get("role").Is("user") {
			return &codexItem{msg: jsonx.ObjectOf(member("role", jsonx.Str("user")), member("content", jsonx.ArrayOf(content...)),
				member("timestamp", jsonx.Num(ts))), ts: ts, hasTS: true}
		}
		if p.Get("role").Is("assistant") {
			return cv.assistant(content, ts, "stop")
		}
	case typ.Is("reasoning"):
		if content := codexReasoning(p); len(content) > 0 {
			return cv.assistant(content, ts, "stop")
		}
	case typ.Is("function_call"), typ.Is("custom_tool_call"):
		id := idField(p, "call_id", "id")
		name, _ := textField(p, "name")
		if id == "" || name == "" {
			return nil
		}
		cv.toolNames[id] = name
		custom := typ.Is("custom_tool_call")
		args := p.Get("arguments")
		if custom {
			args = p.Get("input")
		}
		return cv.call(id, name, args, custom, ts)
	case typ.Is("function_call_output"), typ.Is("custom_tool_call_output"):
		id, _ := textField(p, "call_id")
		if id == "" {
			return nil
		}
		return &codexItem{msg: toolResult(id, cv.nameOf(id, "unknown"), codexOutput(p.Get("output")), false, ts), ts: ts, hasTS: true}
	case typ.Is("web_search_call"), typ.Is("tool_search_call"):
		id := idField(p, "call_id", "id")
		if id == "" {
			return nil
		}
		name, input := "web_search", p.Get("action")
		if typ.Is("tool_search_call") {
			name, input = "tool_search", p.Get("arguments")
		}
		cv.toolNames[id] = name
		return cv.call(id, name, input, false, ts)
	case typ.Is("tool_search_output"):
		id, _ := textField(p, "call_id")
		if id == "" {
			return nil
		}
		return &codexItem{msg: toolResult(id, cv.nameOf(id, "tool_search"), codexOutput(p.Get("tools")), p.Get("status").Is("failed"), ts),
			ts: ts, hasTS: true}
	}
	return nil
}

// orElse is a ?? b.
func orElse(a, b jsonx.Value) jsonx.Value {
	if a.Nullish() {
		return b
	}
	return a
}

// event is omp's convertedEvent: an event_msg record, unless a response
// item already says the same.
func (cv *codexConverter) event(p jsonx.Value, ts float64) *codexItem {
	switch typ := p.Get("type"); {
	case typ.Is("user_message"):
		text, _ := textField(p, "message")
		if text == "" || cv.canon.users[keyOf(text)] {
			return nil
		}
		return &codexItem{msg: jsonx.ObjectOf(member("role", jsonx.Str("user")), member("content", jsonx.Str(text)),
			member("timestamp", jsonx.Num(ts))), ts: ts, hasTS: true}
	case typ.Is("agent_message"):
		text, _ := textField(p, "message")
		if text == "" || cv.canon.assistants[keyOf(text)] {
			return nil
		}
		return cv.assistant([]jsonx.Value{textPart(text)}, ts, "stop")
	case typ.Is("agent_reasoning"):
		text, _ := textField(p, "text")
		if text == "" || cv.canon.assistants[keyOf(text)] {
			return nil
		}
		return cv.assistant([]jsonx.Value{jsonx.ObjectOf(member("type", jsonx.Str("thinking")), member("thinking", jsonx.Str(text)))}, ts, "stop")
	case typ.Is("dynamic_tool_call_request"):
		id := idField(p, "callId", "call_id")
		name, _ := textField(p, "tool")
		if id == "" || name == "" || cv.canon.toolCalls[id] {
			return nil
		}
		cv.toolNames[id] = name
		return cv.call(id, name, p.Get("arguments"), false, ts)
	case typ.Is("dynamic_tool_call_response"):
		id := idField(p, "call_id", "callId")
		if id == "" || cv.canon.toolCalls[id] {
			return nil
		}
		errText, hasErr := textField(p, "error")
		name, ok := cv.toolNames[id]
		if !ok {
			if name, ok = textField(p, "tool"); !ok {
				name = "unknown"
			}
		}
		content := codexOutput(p.Get("content_items"))
		if errText != "" {
			content = jsonx.ArrayOf(textPart(errText))
		}
		isErr := hasErr || p.Get("success").Kind() == jsonx.Bool && !p.Get("success").Truthy()
		return &codexItem{msg: toolResult(id, name, content, isErr, ts), ts: ts, hasTS: true}
	case typ.Is("web_search_end"):
		id, _ := textField(p, "call_id")
		if id == "" {
			return nil
		}
		name := cv.nameOf(id, "web_search")
		result := toolResult(id, name, codexOutput(orElse(p.Get("results"), p.Get("query"))), false, ts)
		if _, named := cv.toolNames[id]; cv.canon.toolCalls[id] || named {
			return &codexItem{msg: result, ts: ts, hasTS: true}
		}
		cv.toolNames[id] = name
		it := cv.call(id, name, orElse(p.Get("action"), p.Get("query")), false, ts)
		it.following = result
		return it
	case typ.Is("mcp_tool_call_end"):
		id, _ := textField(p, "call_id")
		inv := p.Get("invocation")
		if id == "" || cv.canon.toolCalls[id] || !isRecordValue(inv) {
			return nil
		}
		server, _ := textField(inv, "server")
		tool, _ := textField(inv, "tool")
		if server == "" || tool == "" {
			return nil
		}
		name := server + "/" + tool
		cv.toolNames[id] = name
		it := cv.call(id, name, inv.Get("arguments"), false, ts)
		result := p.Get("result")
		if isRecordValue(result) && isRecordValue(result.Get("Ok")) {
			result = result.Get("Ok")
		}
		// The error is read from the record itself, the content from Ok
		// when there is one: omp's order.
		errText, hasErr := "", false
		if raw := p.Get("result"); isRecordValue(raw) {
			errText, hasErr = raw.Get("Err").Text()
		}
		var content jsonx.Value
		switch {
		case errText != "":
			content = jsonx.ArrayOf(textPart(errText))
		case isRecordValue(result):
			content = codexOutput(result.Get("content"))
		default:
			content = codexOutput(result)
		}
		isErr := hasErr || isRecordValue(result) && result.Get("isError").Kind() == jsonx.Bool && result.Get("isError").Truthy()
		it.following = toolResult(id, name, content, isErr, ts)
		return it
	case typ.Is("thread_name_updated"):
		t, _ := textField(p, "thread_name")
		return &codexItem{title: t}
	case typ.Is("thread_rolled_back"):
		n, ok := p.Get("num_turns").Float()
		if !ok || math.IsInf(n, 0) {
			n = 0
		}
		return &codexItem{rollback: n}
	}
	return nil
}

// codexCompacted is a compacted record as omp's compaction item.
func codexCompacted(p jsonx.Value, ts float64) *codexItem {
	summary := ""
	if s, ok := textField(p, "message"); ok {
		summary = jsTrim(s)
	}
	history := p.Get("replacement_history")
	if history.Kind() == jsonx.Array {
		for _, it := range history.Items() {
			if !isRecordValue(it) {
				history = jsonx.Value{}
				break
			}
		}
	} else {
		history = jsonx.Value{}
	}
	if summary == "" && !history.Defined() {
		return nil
	}
	c := &codexCompaction{summary: summary, history: history}
	if summary == "" {
		c.summary = "Context compacted by Codex."
	}
	if history.Defined() {
		items := history.Items()
		for i := len(items) - 1; i >= 0; i-- {
			it := items[i]
			if it.Get("type").Is("compaction") && it.Get("encrypted_content").Kind() == jsonx.String || it.Get("type").Is("compaction_summary") {
				c.item = it
				break
			}
		}
	}
	return &codexItem{compaction: c, ts: ts, hasTS: true}
}

// codexRollback drops the last turns from the items kept, given which of
// them are user messages, and returns how many stay: each turn is
// everything from the last user message on. A fractional count drops one
// more, as omp's loop does.
func codexRollback(isUser []bool, turns float64) int {
	n := len(isUser)
	for remaining := turns; remaining > 0; remaining-- {
		last := -1
		for i := n - 1; i >= 0; i-- {
			if isUser[i] {
				last = i
				break
			}
		}
		if last < 0 {
			return n
		}
		n = last
	}
	return n
}

// jsTrim is String.prototype.trim: JavaScript's white space and line
// terminators, which are not quite unicode.IsSpace (U+FEFF is, U+0085 is
// not).
func jsTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		switch r {
		case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
			return true
		}
		return r >= 0x2000 && r <= 0x200A
	})
}

func formatBase36(n int) string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 36 {
		b = append([]byte{digits[n%36]}, b...)
	}
	return string(b)
}

// CodexRolloutID is a rollout's id as omp derives it from a file name
// without session_meta's: the uuid before .jsonl, else the base name.
func CodexRolloutID(path string) string {
	base := filepath.Base(path)
	name := strings.TrimSuffix(strings.TrimSuffix(base, ".zst"), ".jsonl")
	if len(name) >= 36 {
		id := name[len(name)-36:]
		if isRolloutUUID(id) {
			return id
		}
	}
	return name
}

func isRolloutUUID(s string) bool {
	hex := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
	for i := range 36 {
		c := s[i]
		switch {
		case i < 8 && !hex(c), i == 8 && c != '-', i > 8 && !hex(c) && c != '-':
			return false
		}
	}
	return true
}
