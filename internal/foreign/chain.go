package foreign

import (
	"strconv"

	"github.com/xdev/xdev/internal/jsonx"
)

// A chain writes the omp entries of a conversion that has no omp importer
// to follow (Copilot CLI, Gemini CLI): one branch in the source's order,
// each entry the child of the one before, ids "<prefix>-<n>" (n in base
// 36, from 1), as Codex's conversion numbers its entries. For reading,
// each entry names the source's line it came from (SourceLine).
type chain struct {
	prefix  string
	purpose Purpose
	emit    func(id string, entry []byte) error
	n       int
	parent  string
}

// message adds a message entry of msg, at ts (ms), from the source's line.
func (c *chain) message(msg jsonx.Value, ts float64, line int) error {
	return c.add("message", ts, line, member("message", msg))
}

// modelChange adds a model_change entry: omp's "provider/model".
func (c *chain) modelChange(provider, model string, ts float64, line int) error {
	return c.add("model_change", ts, line, member("model", jsonx.Str(provider+"/"+model)))
}

func (c *chain) add(typ string, ts float64, line int, body ...jsonx.Member) error {
	stamp, err := isoTimestamp(ts)
	if err != nil {
		return err
	}
	c.n++
	id := c.prefix + "-" + strconv.FormatInt(int64(c.n), 36)
	ms := append([]jsonx.Member{member("type", jsonx.Str(typ)), member("id", jsonx.Str(id)),
		member("parentId", parentValue(c.parent)), member("timestamp", jsonx.Str(stamp))}, body...)
	e := jsonx.ObjectOf(ms...).JSON()
	if c.purpose == ForReading {
		e = withSourceLine(e, line)
	}
	c.parent = id
	return c.emit(id, e)
}

// tokens are a message's usage as omp records it (usage.input is the
// input not read from the cache).
type tokens struct {
	input, output, cacheRead, cacheWrite, total float64
	cost                                        float64
}

func (t tokens) value() jsonx.Value {
	zero := jsonx.Num(0)
	total := t.total
	if total == 0 {
		total = t.input + t.output + t.cacheRead + t.cacheWrite
	}
	return jsonx.ObjectOf(member("input", jsonx.Num(t.input)), member("output", jsonx.Num(t.output)),
		member("cacheRead", jsonx.Num(t.cacheRead)), member("cacheWrite", jsonx.Num(t.cacheWrite)),
		member("totalTokens", jsonx.Num(total)),
		member("cost", jsonx.ObjectOf(member("input", zero), member("output", zero), member("cacheRead", zero),
			member("cacheWrite", zero), member("total", jsonx.Num(t.cost)))))
}

// userMessage is an omp user message of text parts.
func userMessage(parts []jsonx.Value, ts float64) jsonx.Value {
	return jsonx.ObjectOf(member("role", jsonx.Str("user")), member("content", jsonx.ArrayOf(parts...)),
		member("timestamp", jsonx.Num(ts)))
}

// assistantMessage is an omp assistant message; stop is "toolUse" when it
// calls tools, else "stop".
func assistantMessage(content []jsonx.Value, api, provider, model string, usage tokens, ts float64) jsonx.Value {
	stop := "stop"
	for _, b := range content {
		if b.Get("type").Is("toolCall") {
			stop = "toolUse"
		}
	}
	return jsonx.ObjectOf(member("role", jsonx.Str("assistant")), member("content", jsonx.ArrayOf(content...)),
		member("api", jsonx.Str(api)), member("provider", jsonx.Str(provider)), member("model", jsonx.Str(model)),
		member("usage", usage.value()), member("stopReason", jsonx.Str(stop)), member("timestamp", jsonx.Num(ts)))
}

func textBlock(s string) jsonx.Value {
	return jsonx.ObjectOf(member("type", jsonx.Str("text")), member("text", jsonx.Str(s)))
}

func thinkingBlock(s string) jsonx.Value {
	return jsonx.ObjectOf(member("type", jsonx.Str("thinking")), member("thinking", jsonx.Str(s)))
}

// toolCallBlock is a tool call; arguments that are not an object are
// kept under "input", as omp's tools take an object.
func toolCallBlock(id, name string, args jsonx.Value) jsonx.Value {
	if args.Kind() != jsonx.Object {
		if args.Defined() && args.Kind() != jsonx.Null {
			args = jsonx.ObjectOf(member("input", args))
		} else {
			args = jsonx.ObjectOf()
		}
	}
	return jsonx.ObjectOf(member("type", jsonx.Str("toolCall")), member("id", jsonx.Str(id)), member("name", jsonx.Str(name)),
		member("arguments", args))
}

// functionCall is the tool call block of a call in OpenAI's shape, {id,
// function {name, arguments}} (Continue's, Kimi CLI's): its arguments
// parsed from their JSON string, kept as text when they are not JSON;
// and the call's id and name.
func functionCall(call jsonx.Value) (block jsonx.Value, id, name string) {
	id, _ = stringField(call, "id")
	name, _ = stringField(call.Get("function"), "name")
	var args jsonx.Value
	if a, ok := call.Get("function").Get("arguments").Text(); ok {
		if v, err := jsonx.Parse([]byte(a)); err == nil {
			args = v
		} else {
			args = jsonx.Str(a)
		}
	}
	return toolCallBlock(id, name, args), id, name
}

// compaction adds a compaction entry whose summary stands for every
// entry before it: omp's context is the summary, then what follows (its
// firstKeptEntryId is its own id, as Codex's conversion writes one).
func (c *chain) compaction(summary, short string, ts float64, line int) error {
	id := c.prefix + "-" + strconv.FormatInt(int64(c.n+1), 36)
	body := []jsonx.Member{member("summary", jsonx.Str(summary))}
	if c.purpose != ForReading {
		body = append(body, member("shortSummary", jsonx.Str(short)))
	}
	body = append(body, member("firstKeptEntryId", jsonx.Str(id)), member("tokensBefore", jsonx.Num(0)))
	return c.add("compaction", ts, line, body...)
}
