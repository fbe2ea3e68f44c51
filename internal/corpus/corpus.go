// Package corpus writes deterministic session files that look like real
// ones, for benchmarks and for the side-by-side comparison with omp.
//
// A session is omp-format v3 with the title slot: turns of a user message,
// a few tool rounds (an assistant message with thinking, text and tool
// calls, with usage, then one toolResult per call) and a closing answer.
// Tool outputs are mostly 1-20 KB, one in a hundred about 200 KB, of
// code-like text full of quotes, backslashes, tabs and non-ASCII. Every
// 150-300 entries a compaction keeps the last few turns; now and then the
// conversation branches back (a branch_summary), the model or thinking
// level changes, or an entry gets a label. The same seed gives the same
// bytes, except that WriteDir sets modification times.
package corpus

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/session"
)

// Options describe one session.
type Options struct {
	Size int64  // stop once the file is at least this large
	Seed uint64 // the same seed, the same file
	Cwd  string // the header's cwd; "/work/project" when empty
	// SmallOutputs caps tool outputs at 3 KB, for many small sessions.
	SmallOutputs bool
	// Created is the session's creation time; a fixed date when zero.
	Created time.Time
	// Uncompacted writes no compaction and no branch: one conversation
	// whose context is the whole file, as a long session of a harness
	// that never compacts is (a Claude Code transcript imported whole).
	Uncompacted bool
	// TailSeed, when not zero, ends the session with a compaction and four
	// turns drawn from this seed alone, so sessions of different sizes end
	// in the same window: what a context build reads is then alike, and
	// their loads differ only by what the file's size costs.
	TailSeed uint64
}

// Stats describe what Write wrote.
type Stats struct {
	Bytes       int64
	Entries     int
	Compactions int
	Branches    int
	ID          string // the session id
}

// base is the creation time of every generated session.
var base = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// gen holds the state of one session being written.
type gen struct {
	r     *rand.Rand
	w     *bufio.Writer
	opts  Options
	stats Stats
	err   error

	now    time.Time
	seq    int
	leaf   string
	path   []string // ids from the root to the leaf
	users  []int    // indexes into path of user messages
	call   int
	model  string
	lastCp int // entry count at the last compaction
	nextCp int
}

// Write writes one session to w.
func Write(w io.Writer, opts Options) (Stats, error) {
	if opts.Cwd == "" {
		opts.Cwd = "/work/project"
	}
	if opts.Created.IsZero() {
		opts.Created = base
	}
	g := &gen{
		r:     rand.New(rand.NewPCG(opts.Seed, 0x5eed)),
		w:     bufio.NewWriterSize(w, 1<<20),
		opts:  opts,
		now:   opts.Created,
		model: "claude-sonnet-4-5",
	}
	g.nextCp = 150 + g.r.IntN(151)
	g.stats.ID = g.uuid()
	created := session.FormatTime(opts.Created)
	slot, err := session.MarshalTitleSlot(g.title(), session.TitleAuto, created)
	if err != nil {
		return g.stats, err
	}
	header, err := session.MarshalHeader(session.Header{ID: g.stats.ID, Timestamp: created, Cwd: opts.Cwd})
	if err != nil {
		return g.stats, err
	}
	g.raw(slot)
	g.raw(append(header, '\n'))
	g.emit(&session.ModelChange{Model: "anthropic/" + g.model})
	lvl := "medium"
	g.emit(&session.ThinkingLevelChange{ThinkingLevel: &lvl, Configured: &lvl})
	for g.stats.Bytes < opts.Size && g.err == nil {
		g.turn()
		g.events()
	}
	if opts.TailSeed != 0 {
		g.tail(opts.TailSeed)
	}
	if err := g.w.Flush(); err != nil && g.err == nil {
		g.err = err
	}
	return g.stats, g.err
}

// WriteFile writes one session to a new file at path (0600).
func WriteFile(path string, opts Options) (Stats, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return Stats{}, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Stats{}, err
	}
	st, err := Write(f, opts)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return st, err
}

// turn writes a user message, one to four tool rounds and an answer.
func (g *gen) turn() {
	g.users = append(g.users, len(g.path))
	g.message(ai.Message{Role: ai.RoleUser, Content: ai.TextContent(g.prose(40 + g.r.IntN(400))), Timestamp: g.ms()})
	for range 1 + g.r.IntN(4) {
		calls := 1 + g.r.IntN(2)
		blocks := []ai.Block{{Type: ai.BlockThinking, Thinking: g.prose(100 + g.r.IntN(600)), ThinkingSignature: g.hex(48)}}
		if g.r.IntN(2) == 0 {
			blocks = append(blocks, ai.Text(g.prose(30+g.r.IntN(200))))
		}
		ids := make([]string, calls)
		tools := make([]string, calls)
		for i := range calls {
			g.call++
			ids[i] = fmt.Sprintf("toolu_%s%04d", g.hex(12), g.call)
			tools[i] = toolNames[g.r.IntN(len(toolNames))]
			args, _ := jsontext.AppendQuote(nil, filePaths[g.r.IntN(len(filePaths))])
			blocks = append(blocks, ai.ToolCall(ids[i], tools[i], jsontext.Value(`{"path":`+string(args)+`}`)))
		}
		g.message(g.assistant(blocks, ai.StopToolUse))
		for i := range calls {
			isErr := g.r.IntN(20) == 0
			g.message(ai.Message{Role: ai.RoleToolResult, ToolCallID: ids[i], ToolName: tools[i],
				Content: ai.BlockContent(ai.Text(g.output())), IsError: &isErr, Timestamp: g.ms()})
		}
	}
	g.message(g.assistant([]ai.Block{ai.Text(g.prose(80 + g.r.IntN(800)))}, ai.StopEnd))
}

// tail writes the fixed ending: a turn, a compaction that keeps it, and
// three more turns, all drawn from seed.
func (g *gen) tail(seed uint64) {
	g.r = rand.New(rand.NewPCG(seed, 0x7a11))
	g.turn()
	kept := g.path[g.users[len(g.users)-1]]
	after := int64(30000)
	g.emit(&session.Compaction{Summary: "## Goal\n" + g.prose(2000), ShortSummary: "the fixed tail",
		FirstKeptEntryID: &kept, TokensBefore: 160000, TokensAfter: &after})
	g.stats.Compactions++
	for range 3 {
		g.turn()
	}
}

// events writes what happens between turns: compactions, branches, model
// and thinking changes, labels.
func (g *gen) events() {
	switch {
	case g.opts.Uncompacted:
	case g.stats.Entries-g.lastCp >= g.nextCp && len(g.users) > 3:
		// Keep the last two or three turns, as omp's compaction does.
		kept := g.path[g.users[len(g.users)-2-g.r.IntN(2)]]
		after := int64(20000 + g.r.IntN(20000))
		g.emit(&session.Compaction{Summary: "## Goal\n" + g.prose(1500+g.r.IntN(1500)), ShortSummary: g.prose(30),
			FirstKeptEntryID: &kept, TokensBefore: int64(150000 + g.r.IntN(30000)), TokensAfter: &after})
		g.stats.Compactions++
		g.lastCp, g.nextCp = g.stats.Entries, 150+g.r.IntN(151)
	case g.r.IntN(25) == 0 && len(g.users) > 2:
		// Go back to an earlier user message's answer and try again.
		at := g.users[len(g.users)-1] - 1
		if at < 0 {
			return
		}
		target := g.path[at]
		g.truncatePath(at)
		g.emit(&session.BranchSummary{FromID: target, Summary: "Tried another approach: " + g.prose(200)})
		g.stats.Branches++
	case g.r.IntN(30) == 0:
		g.model = models[g.r.IntN(len(models))]
		g.emit(&session.ModelChange{Model: "anthropic/" + g.model})
	case g.r.IntN(30) == 0:
		lvl := levels[g.r.IntN(len(levels))]
		g.emit(&session.ThinkingLevelChange{ThinkingLevel: &lvl, Configured: &lvl})
	case g.r.IntN(40) == 0:
		g.emit(&session.Label{TargetID: g.path[g.users[len(g.users)-1]], Label: g.plain(12)})
	}
}

// truncatePath makes path[at] the leaf, so the next entry branches there.
func (g *gen) truncatePath(at int) {
	g.path = g.path[:at+1]
	g.leaf = g.path[at]
	for len(g.users) > 0 && g.users[len(g.users)-1] > at {
		g.users = g.users[:len(g.users)-1]
	}
}

func (g *gen) assistant(blocks []ai.Block, stop string) ai.Message {
	in, out := int64(2000+g.r.IntN(60000)), int64(50+g.r.IntN(2000))
	read := int64(g.r.IntN(100000))
	cost := ai.Cost{Input: float64(in) * 3e-6, Output: float64(out) * 15e-6, CacheRead: float64(read) * 3e-7}
	cost.Total = cost.Input + cost.Output + cost.CacheRead
	return ai.Message{Role: ai.RoleAssistant, Content: ai.BlockContent(blocks...),
		API: "anthropic-messages", Provider: "anthropic", Model: g.model,
		Usage:      &ai.Usage{Input: in, Output: out, CacheRead: read, TotalTokens: in + out + read, Cost: cost},
		StopReason: stop, Timestamp: g.ms()}
}

func (g *gen) message(m ai.Message) { g.emit(&session.Message{Message: m}) }

// emit writes one entry as a child of the leaf.
func (g *gen) emit(body session.Body) {
	if g.err != nil {
		return
	}
	g.seq++
	g.now = g.now.Add(time.Duration(200+g.r.IntN(5000)) * time.Millisecond)
	e := &session.Entry{Type: body.EntryType(), ID: fmt.Sprintf("%08x", uint32(g.seq)*2654435761), ParentID: g.leaf,
		Timestamp: session.FormatTime(g.now), Body: body}
	line, err := session.MarshalEntry(e)
	if err != nil {
		g.err = err
		return
	}
	g.raw(append(line, '\n'))
	g.stats.Entries++
	g.leaf = e.ID
	g.path = append(g.path, e.ID)
}

func (g *gen) raw(b []byte) {
	if g.err != nil {
		return
	}
	n, err := g.w.Write(b)
	g.stats.Bytes += int64(n)
	g.err = err
}

func (g *gen) ms() int64 { return g.now.UnixMilli() }

// output is a tool output: mostly 1-20 KB, one in a hundred about 200 KB.
func (g *gen) output() string {
	n := 1000 + g.r.IntN(19000)
	switch {
	case g.opts.SmallOutputs:
		n = 200 + g.r.IntN(2800)
	case g.r.IntN(100) == 0:
		n = 190000 + g.r.IntN(20000)
	}
	return g.code(n)
}

// code returns about n bytes of source-like text.
func (g *gen) code(n int) string {
	var b strings.Builder
	b.Grow(n + 200)
	line := 1 + g.r.IntN(400)
	for b.Len() < n {
		fmt.Fprintf(&b, "%5d\t%s", line, codeLines[g.r.IntN(len(codeLines))])
		if g.r.IntN(4) == 0 {
			fmt.Fprintf(&b, " // %s %s", g.vocab(), g.vocab())
		}
		b.WriteByte('\n')
		line++
	}
	return b.String()
}

// prose returns about n bytes of text: common words, and one word in six
// from the Vocabulary.
func (g *gen) prose(n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if g.r.IntN(6) == 0 {
			b.WriteString(g.vocab())
		} else {
			b.WriteString(words[g.r.IntN(len(words))])
		}
	}
	return b.String()
}

// plain returns about n bytes of common words only.
func (g *gen) plain(n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[g.r.IntN(len(words))])
	}
	return b.String()
}

// title is a word, capitalized by its first character (not byte: the
// words are not all ASCII), and some prose.
func (g *gen) title() string {
	w := words[g.r.IntN(len(words))]
	r, n := utf8.DecodeRuneInString(w)
	return string(unicode.ToUpper(r)) + w[n:] + " " + g.prose(20)
}

func (g *gen) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[g.r.IntN(16)]
	}
	return string(b)
}

// uuid returns a UUIDv7-shaped id drawn from the generator.
func (g *gen) uuid() string {
	h := g.hex(32)
	return h[:8] + "-" + h[8:12] + "-7" + h[13:16] + "-a" + h[17:20] + "-" + h[20:]
}

var (
	toolNames = []string{"read", "bash", "grep", "edit", "find", "write"}
	models    = []string{"claude-sonnet-4-5", "claude-opus-4-5", "claude-haiku-4-5"}
	levels    = []string{"off", "low", "medium", "high"}
	filePaths = []string{"internal/session/open.go", `C:\Users\dev\proj\main.go`, "src/ünïcödé/файл.ts", "docs/README.md", "a b/c \"quoted\".txt"}
	words     = strings.Fields(`the session store keeps every line of a transcript and the context window
		decides what the model sees next; fix the failing test, read the file, grep for "Open(" and check
		the lock — überprüfen größe naïve café 日本語 テスト ✓ → λ ok so we should refactor parse() then
		run go test ./... again because the 'windowed' load must match`)
	codeLines = []string{
		`func (s *Store) Open(path string) error { return fmt.Errorf("open %q: %w", path, err) }`,
		`	if strings.HasPrefix(line, "\"type\":") && !bytes.Contains(buf, []byte{'\\', 'n'}) {`,
		`const re = /^(?:[a-z]+:\/\/)?[\w.-]+(?:\.[\w.-]+)+[\w\-._~:/?#[\]@!$&'()*+,;=]+$/;`,
		`	path := "C:\\Users\\dev\\AppData\\Local\\omp\\sessions\\--C--proj--"`,
		`// Größe der Datei prüfen — naïve approach, 日本語のコメント, emoji 🚀 ✓`,
		`	log.Printf("read %d bytes from %s: %v\t(took %s)", n, name, err, time.Since(start))`,
		`{"type":"message","id":"1a2b3c4d","parentId":null,"message":{"role":"user","content":"hi"}}`,
		`SELECT id, "title" FROM sessions WHERE cwd LIKE '%\_proj%' ESCAPE '\' ORDER BY mtime DESC;`,
		`	return nil`,
		`}`,
		``,
		`<div class="msg" data-role='assistant'>&lt;tool&gt; output &amp; more</div>`,
		`    def parse(self, s: str) -> dict: return json.loads(s.replace("\\'", "'"))`,
		"\texpected := `raw string with \"quotes\" and \\backslashes\\`",
	}
)
