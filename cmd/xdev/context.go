package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/session"
)

var contextCommand = &command{
	name: "context", args: "[--json] FILE | --db URL [--omp-table] SESSION",
	summary: "Print the context a model sees when the session resumes",
	example: `  xdev context --json s.jsonl | jq '.messages | length'
  xdev context --omp-table --db "$URL" --json 01a2   a session omp stored in its SQL table`,
	options: func() options { return &contextOptions{} },
}

// contextJSON is the --json shape of `xdev context`; each message is the
// object omp's buildSessionContext would hand the model.
type contextJSON struct {
	LeafID        string       `json:"leafId"`
	Title         string       `json:"title"`
	TitleSource   string       `json:"titleSource"`
	Model         string       `json:"model"`
	ThinkingLevel string       `json:"thinkingLevel"`
	Tokens        int64        `json:"tokens"`
	Malformed     int          `json:"malformedLines"`
	Messages      []ai.Message `json:"messages"`

	// The title, model and thinking level as omp holds them (a number
	// stays a number, an object an object), which the JSON prints.
	titleValue, modelValue, thinkingValue jsonx.Value
}

// contextHead is the head of a context's JSON: everything but the
// messages, and the tokens (which read the messages).
func contextHead(c *session.ContextReader, tokens int64) contextJSON {
	title, src := c.Title()
	return contextJSON{
		LeafID: session.DisplayID(c.LeafID), Title: title, TitleSource: src.String(), Model: c.Model(),
		ThinkingLevel: c.ThinkingLevel, Tokens: tokens, Malformed: c.Malformed(),
		titleValue: c.TitleValue(), modelValue: c.ModelValue, thinkingValue: c.ThinkingValue,
	}
}

// valueOr is v, or the string s when v says nothing (undefined or null,
// which omp's context.ts prints as "").
func valueOr(v jsonx.Value, s string) jsonx.Value {
	if v.Nullish() {
		return jsonx.Str(s)
	}
	return v
}

// contextOptions are the flags and arguments of `xdev context`.
type contextOptions struct {
	db     *dbFlags
	asJSON bool
	args   []string
}

func (o *contextOptions) define(fs *flag.FlagSet) {
	o.db = addDBFlags(fs)
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
}

func (o *contextOptions) setArgs(args []string) { o.args = args }

func (o *contextOptions) run(e *env) error {
	if len(o.args) != 1 {
		return usagef("want one FILE (with --db, one SESSION)")
	}
	if o.db.on() {
		return o.db.with(e, o.args[0], func(ctx context.Context, d *catalog.StoredSession) error {
			s, err := d.OpenStore(ctx)
			if err != nil {
				return err
			}
			return o.print(e, s)
		})
	}
	c, err := catalog.ReadContext(o.args[0])
	if err != nil {
		return err
	}
	defer c.Close()
	return o.printReader(e, c)
}

// print prints the context of s (a session opened from a database).
func (o *contextOptions) print(e *env, s *session.Store) error {
	return o.printReader(e, session.ContextOf(s))
}

// printReader prints a context, a message at a time: a session whose
// context is the whole of a long file is never held whole.
func (o *contextOptions) printReader(e *env, c *session.ContextReader) error {
	tokens, err := c.Tokens()
	if err != nil {
		return err
	}
	head := contextHead(c, tokens)
	if o.asJSON {
		return writeContextJSON(e, nil, head, leafValue(c.LeafID), c.Each, false)
	}
	fmt.Fprintf(e.Out, "%s (%s)  model %s  thinking %s  ~%d tokens\n\n", orNone(head.Title), head.TitleSource, orNone(head.Model), head.ThinkingLevel, head.Tokens)
	return c.Each(func(m *ai.Message) error {
		_, err := fmt.Fprintf(e.Out, "[%s] %s\n\n", m.Role, summarize(m))
		return err
	})
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// summarize renders a message in one paragraph for a terminal.
func summarize(m *ai.Message) string {
	const max = 400 // runes
	var parts []string
	if m.Content.IsString {
		parts = append(parts, m.Content.String)
	}
	for _, b := range m.Content.Blocks {
		if b.Type == ai.BlockText {
			parts = append(parts, b.Text)
		}
	}
	if !slices.ContainsFunc(parts, func(p string) bool { return p != "" }) {
		parts = []string{m.Summary, m.Output}
	}
	for _, b := range m.ToolCalls() {
		parts = append(parts, " → ", b.Name, "(", string(b.Arguments), ")")
	}
	// The first runes only: a message's text can be tens of MB.
	var sb strings.Builder
	n := 0
	for _, p := range parts {
		for _, r := range p {
			if n == max {
				sb.WriteString("…")
				return sb.String()
			}
			sb.WriteRune(r)
			n++
		}
	}
	return sb.String()
}

// writeContextJSON prints the context as JSON.stringify(…, null, 2) would:
// each message exactly as omp hands it to the model, lone surrogate
// escapes included (a Go JSON encoder would replace them), and the leaf id
// as the file has it (a number stays a number). The messages come from
// each, one at a time, and go out as they come.
//
// With mask (show --json), the secrets of every string are masked;
// context --json is plumbing and prints the messages as they are.
func writeContextJSON(e *env, lead []jsonx.Member, c contextJSON, leaf jsonx.Value, each func(func(*ai.Message) error) error, mask bool) error {
	str := func(name, s string) jsonx.Member { return jsonx.Member{Name: name, Value: jsonx.Str(s)} }
	num := func(name string, n float64) jsonx.Member { return jsonx.Member{Name: name, Value: jsonx.Num(n)} }
	head := jsonx.ObjectOf(append(lead,
		jsonx.Member{Name: "leafId", Value: leaf},
		jsonx.Member{Name: "title", Value: valueOr(c.titleValue, c.Title)}, str("titleSource", c.TitleSource),
		jsonx.Member{Name: "model", Value: valueOr(c.modelValue, c.Model)},
		jsonx.Member{Name: "thinkingLevel", Value: valueOr(c.thinkingValue, c.ThinkingLevel)},
		num("tokens", float64(c.Tokens)), num("malformedLines", float64(c.Malformed)),
	)...).AppendIndent(nil, "  ")
	w := bufio.NewWriterSize(e.RawOut, 1<<16)
	w.Write(head[:len(head)-2]) // the object without its closing "\n}"
	w.WriteString(`,` + "\n" + `  "messages": [`)
	n := 0
	var buf []byte
	err := each(func(m *ai.Message) error {
		// A message as read is its text; only one built here encodes.
		raw := m.Raw()
		if raw == nil {
			var err error
			if raw, err = m.MarshalJSON(); err != nil {
				return err
			}
		}
		if mask {
			raw = shownJSON(raw, false)
		}
		v, err := jsonx.ParseOwned(raw) // the message's own text: never changed
		if err != nil {
			return err
		}
		if n > 0 {
			w.WriteByte(',')
		}
		n++
		w.WriteString("\n    ")
		buf = v.AppendIndentIn(buf[:0], "  ", "    ")
		_, err = w.Write(buf)
		return err
	})
	if err != nil {
		return err
	}
	if n > 0 {
		w.WriteString("\n  ")
	}
	w.WriteString("]\n}\n")
	return w.Flush()
}

// leafValue spells a leaf id as the file does: a number stays a number.
// No leaf (an empty session, an id-less last line) is "".
func leafValue(key string) jsonx.Value {
	if key == "" {
		return jsonx.Str("")
	}
	return session.IDValue(key)
}
