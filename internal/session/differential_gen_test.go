package session

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// sessionGen writes random but plausible session files: what omp writes,
// what older builds and other writers leave (loosely typed values, odd
// number spellings, escapes, duplicate names, stray lines), every entry
// type, random trees with branches, compactions, resets and summaries, and
// blob references to blobs that exist, are missing or are damaged.
type sessionGen struct {
	r     *rand.Rand
	blobs map[string][]byte // file name → bytes
	dir   string
	now   time.Time

	// per file
	ids      []any // ids of the entries written so far (string or number)
	lastID   any   // the previous entry's id
	toolIDs  []string
	odd      bool // this file uses odd spellings
	numberID bool // this file uses numeric ids
}

func newSessionGen(seed uint64, blobDir string) *sessionGen {
	return &sessionGen{
		r:     rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		blobs: map[string][]byte{},
		dir:   blobDir,
		now:   time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
	}
}

func (g *sessionGen) writeBlobs() error {
	if err := os.MkdirAll(g.dir, 0o700); err != nil {
		return err
	}
	for name, b := range g.blobs {
		if err := os.WriteFile(filepath.Join(g.dir, name), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// obj is an object in the order its members are written.
type obj []kv

type kv struct {
	k string
	v any
}

// raw is JSON text written as is.
type raw string

func (g *sessionGen) p(prob float64) bool { return g.r.Float64() < prob }

func (g *sessionGen) pick(xs ...any) any { return xs[g.r.IntN(len(xs))] }

// file generates one session file.
func (g *sessionGen) file(name string) *diffCase {
	c := &diffCase{name: name}
	g.ids, g.lastID, g.toolIDs = nil, nil, nil
	g.odd = g.p(0.5)
	g.numberID = g.p(0.05)
	g.now = g.now.Add(time.Duration(g.r.IntN(3600)) * time.Second)

	var lines []string
	if g.p(0.7) {
		slot, refused := g.slot()
		lines = append(lines, slot)
		c.ompRefuses = refused
	}
	if g.p(0.03) {
		lines = append(lines, g.pick("garbage", `{"type":"session"`, "[1,2", "").(string))
	}
	header := g.header()
	if g.p(0.02) {
		header += " junk"
	}
	lines = append(lines, header)
	if g.p(0.04) && len(lines) > 0 {
		lines[0] = "\ufeff" + lines[0]
	}
	n := 1 + g.r.IntN(30)
	if g.p(0.05) {
		n = 0
	}
	for range n {
		if g.p(0.03) {
			lines = append(lines, g.pick("", "   ", `{"type":"message","id":"torn`, "not json", "{}x").(string))
		}
		line := g.entry()
		if g.p(0.02) {
			// Junk after a complete entry: omp keeps the entry.
			line += g.pick(" x", "garbage", ",", "]", `{"type":"message","id":"zz"}`, " \t").(string)
		}
		lines = append(lines, line)
	}
	if n > 0 && g.p(0.05) {
		// An id-less last entry is omp's leaf all the same.
		lines = append(lines, g.encode(g.messageEntry(nil, g.lastID)))
	}
	if g.p(0.05) {
		lines = append(lines, `{"type":"message","id":"zz","parentId":"`+fmt.Sprint(g.lastID)+`","message":{"role":"user","content":"cut`)
		c.torn = true
	}
	if g.p(0.05) {
		for i := range lines {
			lines[i] += "\r"
		}
	}
	c.lines = lines
	return c
}

func (g *sessionGen) slot() (string, bool) {
	title := g.pick("", "Fix the build", "naïve café ☕", "emoji 🎉 title", "tab\there", `quote " and \ slash`).(string)
	src := g.pick("auto", "user", nil, "")
	refused := false
	o := obj{{"type", "title"}, {"v", 1}, {"title", title}}
	switch {
	case g.p(0.05):
		src, refused = g.pick("manual", "subagent", "bogus").(string), true
	case g.p(0.03):
		o = append(o, kv{"source", nil})
		refused = true
		src = ""
	}
	if s, ok := src.(string); ok && s != "" {
		o = append(o, kv{"source", s})
	}
	o = append(o, kv{"updatedAt", isoTime(g.now)})
	if g.p(0.03) {
		o[1].v = 2
		refused = true
	}
	line := encodeJSON(o, false, nil)
	if g.p(0.03) {
		refused = true // no pad
		return line, refused
	}
	// Pad to the slot width.
	padLen := TitleSlotWidth - 1 - len(line) - len(`,"pad":""`)
	if padLen < 0 {
		padLen = 0
	}
	o = append(o, kv{"pad", strings.Repeat(" ", padLen)})
	line = encodeJSON(o, false, nil)
	if g.p(0.05) {
		// Invalid UTF-8 in the title: omp's TextDecoder makes U+FFFD of it.
		line = strings.Replace(line, `"title":"`, "\"title\":\"\xe2\x82x\xff", 1)
	}
	return line, refused
}

func (g *sessionGen) header() string {
	var version any = 3
	switch {
	case g.p(0.05):
		version = g.pick(3.0, "3", raw("3.0"), raw("3e0"), 4, "x", nil)
	case g.p(0.05):
		version = 2
	}
	id := "0190f000-0000-7000-8000-" + fmt.Sprintf("%012x", g.r.Uint64()&0xffffffffffff)
	if g.p(0.03) {
		id = ""
	}
	o := obj{{"type", "session"}}
	if version != nil {
		o = append(o, kv{"version", version})
	}
	o = append(o, kv{"id", id}, kv{"timestamp", isoTime(g.now)}, kv{"cwd", "/home/dev/proj"})
	if g.p(0.1) {
		// Another writer's title may be of another type: omp keeps it.
		o = append(o, kv{"title", g.pick("Header title", "Header title", 42, obj{{"t", 1}}, true, nil)})
	}
	return g.encode(o)
}

func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// newID draws an id, and sometimes uses a numeric one.
func (g *sessionGen) newID() any {
	if g.numberID && g.p(0.6) {
		return g.r.IntN(100000)
	}
	return fmt.Sprintf("%08x", g.r.Uint32())
}

// parent picks the parent of the next entry: mostly the previous entry,
// sometimes an earlier one (a branch), a root, or an id nowhere.
func (g *sessionGen) parent() any {
	switch {
	case len(g.ids) == 0 || g.p(0.02):
		return g.pick(nil, nil, "", 0)
	case g.p(0.15):
		return g.ids[g.r.IntN(len(g.ids))]
	case g.p(0.02):
		return "deadbeef"
	case g.p(0.02):
		// A numeric id referred to as a string does not match in omp's Map.
		if n, ok := g.lastID.(int); ok {
			return strconv.Itoa(n)
		}
	}
	return g.lastID
}

func (g *sessionGen) timestamp() any {
	g.now = g.now.Add(time.Duration(1+g.r.IntN(5000)) * time.Millisecond)
	if !g.p(0.15) {
		return isoTime(g.now)
	}
	switch g.r.IntN(16) {
	case 11:
		return g.now.UTC().Format("Mon Jan 02 2006 15:04:05 GMT-0700 (Coordinated Universal Time)")
	case 12:
		return g.now.UTC().Format("2006/01/02 15:04:05")
	case 13:
		return g.now.UTC().Format("01/02/2006")
	case 14:
		return g.now.UTC().Format("2006-1-2")
	case 15:
		return g.now.UTC().Format("Jan 2006")
	case 0:
		return g.now.UTC().Format("2006-01-02T15:04:05Z")
	case 1:
		return g.now.UTC().Format("2006-01-02")
	case 2:
		return g.now.UTC().Format(time.RFC1123)
	case 3:
		return g.now.Format("2006-01-02T15:04:05.000000+02:00")
	case 4:
		return "garbage"
	case 5:
		return float64(g.now.UnixMilli())
	case 6:
		return nil
	case 7:
		return g.now.UTC().Format("2006-01-02T15:04:05.0Z")
	case 8:
		return g.now.UTC().Format("Jan 2, 2006")
	case 9:
		return g.now.UTC().Format("2006-01-02 15:04:05Z")
	}
	return float64(g.now.UnixMilli()) + 0.5
}

// envelope starts an entry: type, id, parentId, timestamp, in omp's order.
func (g *sessionGen) envelope(typ any) (obj, any) {
	id := g.newID()
	o := obj{}
	if typ != nil {
		o = append(o, kv{"type", typ})
	}
	if !g.p(0.01) {
		o = append(o, kv{"id", id})
	} else {
		id = nil
	}
	o = append(o, kv{"parentId", g.parent()})
	if !g.p(0.02) {
		o = append(o, kv{"timestamp", g.timestamp()})
	}
	return o, id
}

func (g *sessionGen) entry() string {
	var o obj
	var id any
	switch k := g.r.IntN(100); {
	case k < 55:
		o, id = g.messageEntryWithID()
	case k < 60:
		o, id = g.envelope("model_change")
		o = append(o, kv{"model", g.pick("anthropic/claude-sonnet-4-5", "openai/gpt-5", "", nil, 5, obj{{"provider", "x"}, {"id", "y"}})})
		if g.p(0.3) {
			o = append(o, kv{"role", g.pick("default", "smol", "slow", nil, 7)})
		}
	case k < 64:
		o, id = g.envelope("thinking_level_change")
		o = append(o, kv{"thinkingLevel", g.pick("high", "low", "off", nil, 3, false, obj{{"level", "high"}})})
	case k < 70:
		o, id = g.compaction()
	case k < 74:
		o, id = g.envelope("branch_summary")
		if g.p(0.8) && len(g.ids) > 0 {
			o = append(o, kv{"fromId", g.ids[g.r.IntN(len(g.ids))]})
		}
		o = append(o, kv{"summary", g.pick("We tried X; it failed.", "", 42, nil)})
	case k < 77:
		o, id = g.envelope("reset_boundary")
	case k < 80:
		o, id = g.envelope("label")
		if len(g.ids) > 0 {
			o = append(o, kv{"targetId", g.ids[g.r.IntN(len(g.ids))]}, kv{"label", g.pick("checkpoint", "").(string)})
		}
	case k < 86:
		o, id = g.customMessage()
	case k < 91:
		o, id = g.custom()
	case k < 94:
		o, id = g.envelope(g.pick("title_change", "service_tier_change", "mode_change", "ttsr_injection", "session_init", "model_usage").(string))
		switch o[0].v {
		case "ttsr_injection":
			// omp iterates the rules: a string is iterable, the rest throw.
			if rules := g.pick([]any{"rule-a"}, []any{"rule-a"}, []any{"rule-a"}, "ab", nil, 5, obj{}, omitted{}); rules != (omitted{}) {
				o = append(o, kv{"injectedRules", rules})
			}
		case "model_usage":
			o = append(o, kv{"usage", g.usage()})
		}
	case k < 97:
		o, id = g.envelope(g.pick("future_entry_kind", 12, nil))
		o = append(o, kv{"payload", obj{{"x", 1}}})
	case k < 99:
		o, id = g.envelope("message")
		o = append(o, kv{"message", obj{{"role", "user"}, {"content", "deep"}, {"details", raw(strings.Repeat("[", 3000) + strings.Repeat("]", 3000))}, {"timestamp", 1}}})
	default:
		// Shapes omp's loader throws on, and their harmless neighbours.
		switch g.r.IntN(4) {
		case 0:
			g.record(nil)
			return g.pick("null", " null ", "5", `"s"`, "[null]").(string)
		case 1:
			o, id = g.envelope("message")
			if m := g.pick(nil, omitted{}, 5, "s", obj{}); m != (omitted{}) {
				o = append(o, kv{"message", m})
			}
		default:
			o, id = g.messageEntryWithID()
		}
	}
	g.record(id)
	return g.encode(o)
}

// omitted stands for a member left out.
type omitted struct{}

// usage is a usage record: mostly omp's, sometimes one omp's loader
// throws on (truthy, without a cost) or one it passes (falsy, or a cost of
// any kind but null).
func (g *sessionGen) usage() any {
	full := obj{{"input", g.pick(100, 1.0, raw("5e0"), raw("1.5"))}, {"output", 20}, {"cacheRead", 0}, {"cacheWrite", 0},
		{"totalTokens", g.pick(120, raw("120.0"))}, {"cost", obj{{"input", 0.0003}, {"output", raw("3E-4")}, {"total", 0.0006}}}}
	if g.p(0.98) {
		return full
	}
	return g.pick(obj{{"input", 1}, {"output", 2}, {"totalTokens", 3}}, obj{{"input", 1}, {"cost", nil}},
		obj{{"input", 1}, {"cost", 0}}, obj{{"cost", "x"}}, 0, "", "x", 5, true, []any{}, nil)
}

func (g *sessionGen) record(id any) {
	if id != nil {
		g.ids = append(g.ids, id)
	}
	g.lastID = id
}

func (g *sessionGen) messageEntryWithID() (obj, any) {
	o, id := g.envelope("message")
	o = append(o, kv{"message", g.message()})
	return o, id
}

// messageEntry builds a message entry with the given id (nil: none).
func (g *sessionGen) messageEntry(id, parent any) obj {
	o := obj{{"type", "message"}}
	if id != nil {
		o = append(o, kv{"id", id})
	}
	o = append(o, kv{"parentId", parent}, kv{"timestamp", g.timestamp()}, kv{"message", g.message()})
	return o
}

func (g *sessionGen) msgTimestamp() any {
	ms := g.now.UnixMilli()
	switch {
	case g.p(0.85):
		return ms
	case g.p(0.3):
		return isoTime(g.now)
	case g.p(0.3):
		return float64(ms) + 0.25
	case g.p(0.3):
		return raw(fmt.Sprintf("%de0", ms))
	}
	return nil
}

func (g *sessionGen) text() string {
	return g.pick("hello", "Run the tests", "naïve café", "emoji 🎉", "line\nbreak", "tab\tand \"quotes\"",
		"lone \uFFFD surrogate", "  ", "", "<b>html</b>", "1e21", "\u2028sep").(string)
}

func (g *sessionGen) message() any {
	if g.p(0.01) {
		return obj{{"content", "no role"}, {"timestamp", 1}}
	}
	switch k := g.r.IntN(100); {
	case k < 35:
		m := obj{{"role", "user"}}
		switch {
		case g.p(0.7):
			m = append(m, kv{"content", g.text()})
		case g.p(0.03):
			m = append(m, kv{"content", nil})
		default:
			m = append(m, kv{"content", g.blocks(false)})
		}
		m = append(m, kv{"timestamp", g.msgTimestamp()})
		return g.extras(m)
	case k < 70:
		return g.assistant()
	case k < 85:
		id := "call_x"
		if len(g.toolIDs) > 0 && g.p(0.9) {
			id = g.toolIDs[g.r.IntN(len(g.toolIDs))]
		}
		m := obj{{"role", "toolResult"}, {"toolCallId", id}, {"toolName", g.pick("bash", "bash", "task").(string)},
			{"content", g.blocks(false)}, {"isError", g.pick(false, true, "false")}, {"timestamp", g.msgTimestamp()}}
		switch {
		case m[2].v == "task" && g.p(0.5):
			// A task's usage counts toward the session's, as an object only.
			m = append(m, kv{"details", obj{{"usage", g.usage()}}})
		case g.p(0.15):
			m = append(m, kv{"details", obj{{"images", []any{g.image()}}}})
		case g.p(0.1):
			m = append(m, kv{"details", obj{{"content", []any{g.image()}}, {"image_url", g.blobRef()}}})
		case g.p(0.05):
			m = append(m, kv{"details", obj{{"type", "image_generation_call"}, {"result", g.blobRef()}}})
		case g.p(0.05):
			m = append(m, kv{"images", []any{g.image(), obj{{"data", g.blobRef()}, {"mimeType", "IMAGE/png"}}}})
		}
		return g.extras(m)
	case k < 90:
		return obj{{"role", g.pick("custom", "hookMessage").(string)}, {"customType", g.pick("note", 5, nil, "skill-prompt", "interrupted-thinking")},
			{"content", g.text()}, {"display", g.pick(true, "true", nil)}, {"attribution", g.pick("user", "agent", nil)}, {"timestamp", g.msgTimestamp()}}
	case k < 95:
		return obj{{"role", "bashExecution"}, {"command", "ls"}, {"output", "a\nb"}, {"exitCode", g.pick(0, 1.0, nil)}, {"timestamp", g.msgTimestamp()}}
	}
	return obj{{"role", g.pick("developer", "fileMention", "newRole").(string)}, {"content", g.text()}, {"timestamp", g.msgTimestamp()}}
}

// extras adds fields another writer might: unknown members, integer-like
// names, odd numbers.
func (g *sessionGen) extras(m obj) obj {
	if g.p(0.1) {
		m = append(m, kv{"2", "two"}, kv{"1", "one"})
	}
	if g.p(0.1) {
		m = append(m, kv{"n", g.pick(raw("12345678901234567890"), raw("1e21"), raw("1E-7"), raw("-0"), raw("0.1"), raw("1e400"), raw("5e-324")).(raw)})
	}
	if g.p(0.05) {
		m = append(m, kv{"steering", true})
	}
	return m
}

func (g *sessionGen) image() obj {
	switch {
	case g.p(0.5):
		return obj{{"type", "image"}, {"data", base64.StdEncoding.EncodeToString([]byte("tiny png"))}, {"mimeType", "image/png"}}
	default:
		return obj{{"type", "image"}, {"data", g.blobRef()}, {"mimeType", g.pick("image/png", "image/JPEG", "text/plain").(string)}}
	}
}

// blobRef returns a reference to a blob that exists, is missing, or whose
// bytes do not match its name.
func (g *sessionGen) blobRef() string {
	data := []byte(fmt.Sprintf("image bytes %d", g.r.IntN(50)))
	sum := sha256.Sum256(data)
	name := hex.EncodeToString(sum[:])
	switch {
	case g.p(0.1):
		return BlobRefPrefix + strings.Repeat("0", 63) + "1" // missing
	case g.p(0.1):
		g.blobs[name] = append([]byte("damaged "), data...)
	default:
		if _, ok := g.blobs[name]; !ok {
			g.blobs[name] = data
		}
	}
	return BlobRefPrefix + name
}

func (g *sessionGen) blocks(assistant bool) []any {
	var bs []any
	for range 1 + g.r.IntN(3) {
		switch k := g.r.IntN(10); {
		case k < 5:
			bs = append(bs, obj{{"type", "text"}, {"text", g.text()}})
		case k < 6:
			bs = append(bs, g.image())
		case assistant && k < 8:
			b := obj{{"type", "thinking"}, {"thinking", g.pick("hmm", "", "  ").(string)}}
			if g.p(0.5) {
				b = append(b, kv{"thinkingSignature", g.pick("sig", "", nil)})
			}
			bs = append(bs, b)
		case assistant && k < 9:
			bs = append(bs, obj{{"type", "redactedThinking"}, {"data", g.pick("enc", "").(string)}})
		case assistant:
			id := fmt.Sprintf("call_%d", g.r.IntN(1000))
			g.toolIDs = append(g.toolIDs, id)
			bs = append(bs, obj{{"type", "toolCall"}, {"id", id}, {"name", "bash"}, {"arguments", obj{{"command", "ls"}}}})
		default:
			bs = append(bs, obj{{"type", "text"}, {"text", g.text()}})
		}
	}
	return bs
}

func (g *sessionGen) assistant() obj {
	var content any = g.blocks(true)
	switch {
	case g.p(0.03):
		content = g.text() // another writer's string content
	case g.p(0.005):
		// Content omp cannot iterate, or a null block in it.
		content = g.pick(nil, 5, obj{}, []any{nil}, append([]any{obj{{"type", "text"}, {"text", "ok"}}}, nil))
	case g.p(0.01):
		// Blocks isEmptyErrorTurn reads with .trim(), which only a string has.
		content = []any{g.pick(obj{{"type", "text"}, {"text", 5}}, obj{{"type", "thinking"}},
			obj{{"type", "thinking"}, {"thinking", ""}, {"thinkingSignature", 7}}, obj{{"type", "redactedThinking"}, {"data", nil}},
			obj{{"type", "text"}, {"text", "  "}}, obj{{"type", "fallback"}}), obj{{"type", "text"}, {"text", g.pick(nil, "after")}}}
	}
	m := obj{{"role", "assistant"}, {"content", content}}
	if g.p(0.9) {
		m = append(m, kv{"api", "anthropic-messages"})
	}
	provider := g.pick("anthropic", "openai", "github-copilot", "", nil)
	if provider != nil || g.p(0.5) {
		m = append(m, kv{"provider", provider})
	}
	if g.p(0.9) {
		m = append(m, kv{"model", g.pick("claude-sonnet-4-5", "gpt-5", "", nil)})
	}
	if g.p(0.8) {
		m = append(m, kv{"usage", g.usage()})
	}
	stop := g.pick("stop", "stop", "toolUse", "toolUse", "error", "aborted", "length").(string)
	m = append(m, kv{"stopReason", stop})
	if g.p(0.2) {
		m = append(m, kv{"providerPayload", obj{{"type", g.pick("openaiResponsesHistory", "other").(string)}, {"items", []any{obj{{"k", 1}}}}}})
	}
	if g.p(0.05) {
		m = append(m, kv{"retryRecovery", g.pick(true, 1, "")})
	}
	if g.p(0.1) {
		m = append(m, kv{"errorMessage", "boom"})
	}
	m = append(m, kv{"timestamp", g.msgTimestamp()})
	return g.extras(m)
}

func (g *sessionGen) compaction() (obj, any) {
	o, id := g.envelope("compaction")
	o = append(o, kv{"summary", g.pick("Summary of earlier work.", "", 7)})
	if g.p(0.5) {
		o = append(o, kv{"shortSummary", g.pick("short", "").(string)})
	}
	switch {
	case len(g.ids) > 0 && g.p(0.7):
		o = append(o, kv{"firstKeptEntryId", g.ids[len(g.ids)-1-g.r.IntN(min(len(g.ids), 6))]})
	case g.p(0.5):
		o = append(o, kv{"firstKeptEntryId", g.pick("nowhere", nil)})
	}
	if g.p(0.8) {
		o = append(o, kv{"tokensBefore", g.pick(50000, raw("5e4"), 1.5, "many")})
	}
	if g.p(0.3) {
		o = append(o, kv{"tokensAfter", 1200})
	}
	if g.p(0.3) {
		o = append(o, kv{"method", g.pick("soft", "", "remote").(string)})
	}
	if g.p(0.2) {
		o = append(o, kv{"warning", "lossy"})
	}
	if g.p(0.15) {
		o = append(o, kv{"details", obj{{"kind", "experimental-context-rollover"}}})
	}
	if g.p(0.1) {
		o = append(o, kv{"preserveData", obj{{"snapcompact", g.snapcompact()}}})
	} else if g.p(0.2) {
		switch g.r.IntN(3) {
		case 0:
			o = append(o, kv{"preserveData", obj{{"anthropicCompaction", obj{{"provider", "anthropic"}, {"content", "native summary"},
				{"encryptedContent", g.pick("", "enc").(string)}, {"model", "m"}}}}})
		case 1:
			pd := obj{{"openaiRemoteCompaction", obj{{"provider", "openai"}, {"replacementHistory", []any{
				obj{{"type", "message"}, {"content", []any{obj{{"type", "image"}, {"data", g.blobRef()}, {"mimeType", "image/png"}}}}}}}}}}
			o = append(o, kv{"preserveData", pd})
			if len(g.ids) > 0 && g.p(0.5) {
				o = append(o, kv{"providerReplayThroughEntryId", g.ids[len(g.ids)-1-g.r.IntN(min(len(g.ids), 4))]})
			}
		default:
			o = append(o, kv{"preserveData", obj{{"other", 1}}})
		}
	}
	return o, id
}

// notesText is a notebook's text: what omp's prompt formatter changes
// (trailing blanks, blank runs, tables, closing tags, fences, white space
// JavaScript trims and Go's TrimSpace does not) in a few lines.
func (g *sessionGen) notesText() string {
	pieces := []string{"- task: fix", "- next: test", "notes  ", "", "", "after gap", "one line", "  padded  ",
		"| a | b |", "|---|:--:|", "  | x |  y |", "| sep | - | ", "|:-- | --:|", "| not a row", "|\r|",
		"</task>", "</Task>", "</ta sk>", "<task>", "  </notes>", "\u3000```", "```go", "  code  ", "~~~",
		"\u00a0indented", "\u3000", " \t ", "tail\u2028", "\ufeff", "text\r"}
	var lines []string
	for range 1 + g.r.IntN(7) {
		lines = append(lines, pieces[g.r.IntN(len(pieces))])
	}
	return strings.Join(lines, "\n")
}

func (g *sessionGen) customMessage() (obj, any) {
	o := obj{{"type", "custom_message"}}
	o = append(o, kv{"customType", g.pick("note", "skill-prompt", "collab-prompt", "prewalk-plan", "interrupted-thinking", "", 5, nil)})
	o = append(o, kv{"content", g.pick(g.text(), []any{obj{{"type", "text"}, {"text", "block"}}}, 12, nil)})
	o = append(o, kv{"display", g.pick(true, false, "true", nil)})
	if g.p(0.3) {
		o = append(o, kv{"details", obj{{"images", []any{g.image()}}}})
	}
	if g.p(0.6) {
		o = append(o, kv{"attribution", g.pick("user", "agent", "bot", nil)})
	}
	env, id := g.envelope(nil)
	o = append(o, env...) // omp writes the payload first for custom types
	return o, id
}

func (g *sessionGen) custom() (obj, any) {
	o := obj{{"type", "custom"}}
	if g.p(0.6) {
		o = append(o, kv{"customType", "experimental_context_notes"})
		switch g.r.IntN(5) {
		case 0:
			o = append(o, kv{"data", obj{{"version", 1}, {"text", ""}}})
		case 1:
			o = append(o, kv{"data", obj{{"version", 2}, {"text", "v2"}}})
		case 2:
			o = append(o, kv{"data", obj{{"version", 1}, {"text", "x"}, {"extra", true}}})
		default:
			o = append(o, kv{"data", obj{{"version", g.pick(1, raw("1.0"))}, {"text", g.notesText()}}})
		}
	} else {
		o = append(o, kv{"customType", g.pick("branch", "state", 3)}, kv{"data", obj{{"to", "x"}}})
	}
	env, id := g.envelope(nil)
	o = append(o, env...)
	return o, id
}

// encode writes an object as one line, with odd spellings in odd files.
func (g *sessionGen) encode(o obj) string {
	return encodeJSON(o, g.odd, g.r)
}

// encodeJSON writes v. With odd set it spells numbers and strings the
// ways other writers do and repeats some names (JSON.parse keeps the last).
func encodeJSON(v any, odd bool, r *rand.Rand) string {
	var b strings.Builder
	writeJSON(&b, v, odd, r)
	return b.String()
}

func writeJSON(b *strings.Builder, v any, odd bool, r *rand.Rand) {
	chance := func(p float64) bool { return odd && r != nil && r.Float64() < p }
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int:
		switch {
		case chance(0.1):
			fmt.Fprintf(b, "%d.0", x)
		case chance(0.05) && x != 0:
			fmt.Fprintf(b, "%de0", x)
		default:
			b.WriteString(strconv.Itoa(x))
		}
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	case raw:
		b.WriteString(string(x))
	case string:
		writeString(b, x, chance(0.2))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, e, odd, r)
		}
		b.WriteByte(']')
	case obj:
		b.WriteByte('{')
		for i, m := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if chance(0.03) {
				// A decoy first: JSON.parse keeps the last value.
				writeString(b, m.k, false)
				b.WriteString(`:"decoy",`)
			}
			if chance(0.02) {
				b.WriteString(" ")
			}
			writeString(b, m.k, chance(0.05))
			b.WriteByte(':')
			writeJSON(b, m.v, odd, r)
		}
		b.WriteByte('}')
	default:
		panic(fmt.Sprintf("writeJSON: %T", v))
	}
}

// writeString writes s as a JSON string; escapeAll spells letters as \u
// escapes. A lone surrogate in s (written in Go as "\ud800", which Go
// turns into U+FFFD) is written as the escape omp's JSON.stringify uses.
func writeString(b *strings.Builder, s string, escapeAll bool) {
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == 0xFFFD:
			b.WriteString(`\ud800`)
		case c < 0x20:
			fmt.Fprintf(b, `\u%04x`, c)
		case escapeAll && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'):
			fmt.Fprintf(b, `\u%04X`, c)
		case escapeAll && c == '/':
			b.WriteString(`\/`)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
}

// snapcompact builds a preserved snapcompact archive: frames that are blob
// references (present, missing, large enough to pass the byte budget),
// inline data, frames an old build cut short, legacy frames without shape
// metadata, and text regions with newline glyphs, dim toggles and data URLs.
func (g *sessionGen) snapcompact() obj {
	var frames []any
	n := g.r.IntN(4)
	if g.p(0.1) {
		n = 16 + g.r.IntN(3)
	}
	for range n {
		f := obj{}
		switch k := g.r.IntN(10); {
		case k < 5:
			f = append(f, kv{"data", g.blobRef()})
		case k < 6:
			f = append(f, kv{"data", g.bigBlobRef()})
		case k < 8:
			f = append(f, kv{"data", base64.StdEncoding.EncodeToString([]byte("inline frame"))})
		case k < 9:
			f = append(f, kv{"data", "QUJD" + persistenceTruncationNotice})
		default:
			f = append(f, kv{"data", ""})
		}
		f = append(f, kv{"mimeType", "image/png"}, kv{"cols", 80}, kv{"rows", 40}, kv{"chars", 3200})
		if g.p(0.5) {
			f = append(f, kv{"font", "mono"}, kv{"variant", "high"})
		}
		if g.p(0.2) {
			f = append(f, kv{"detail", g.pick("high", "")})
		}
		if g.p(0.05) {
			f = obj{{"data", "x"}} // no shape: filtered out
		}
		frames = append(frames, f)
	}
	a := obj{{"frames", frames}}
	texts := []any{"head text\u2588second line", "dim \u000eout\u000f in", "see ![shot](data:image/png;base64,iVBORw0KGgo=) here",
		"bare data:image/jpeg;charset=x;base64,QUJDRA== end", "plain", ""}
	if g.p(0.6) {
		a = append(a, kv{"textHead", g.pick(texts...)})
	}
	if g.p(0.6) {
		a = append(a, kv{"textTail", g.pick(texts...)})
	}
	if g.p(0.3) {
		a = append(a, kv{"text", g.pick(texts...)})
	}
	if g.p(0.3) {
		a = append(a, kv{"truncatedChars", g.pick(0, 120, 2000000)})
	}
	a = append(a, kv{"totalChars", 1000})
	return a
}

// bigBlobRef names a blob of 900 kB: four of them pass omp's 3 MB budget.
func (g *sessionGen) bigBlobRef() string {
	data := bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, 225_000)
	sum := sha256.Sum256(data)
	name := hex.EncodeToString(sum[:])
	g.blobs[name] = data
	return BlobRefPrefix + name
}
