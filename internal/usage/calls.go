package usage

import (
	"math"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/session"
)

// A Call is one model call as a session records it.
type Call struct {
	EntryID                string
	Time                   float64 // Unix ms; 0 when the entry records none
	Provider, Model, API   string
	Tokens                 Tokens
	Total                  float64 // the recorded totalTokens, else the buckets' sum
	Cost                   float64 // the recorded cost's total, when HasCost
	HasCost                bool
	MalformedUsageCounters int // counters that were not finite non-negative numbers, read as 0
}

// SessionCalls reads the calls an omp-format session file records (xdev's,
// omp's, pi's), as omp's own statistics read them (omp-stats' parser.ts,
// extractStats): every assistant message entry with an id, a model, a
// provider, an api and a usage object, and every model_usage entry (an
// auxiliary call: a compaction summary, a title), in file order, each
// line once, whichever branch it is on. A counter that is not a finite
// number (a string, 1e999) counts as 0, as in omp-stats; a negative one
// too, where omp-stats keeps it (MalformedUsageCounters says how many).
// The total is the recorded totalTokens when it is a finite number, else
// the sum of the counters and the provider's orchestration tokens. The
// time is the message's timestamp when positive, else the entry's.
func SessionCalls(path string) ([]Call, error) {
	x, err := session.OpenIndex(path, nil)
	if err != nil {
		return nil, err
	}
	defer x.Close()
	var calls []Call
	for i := range x.Len() {
		raw, err := x.Raw(i)
		if err != nil {
			return calls, err
		}
		v, err := jsonx.Parse(raw)
		if err != nil {
			continue
		}
		if c, ok := callOf(v); ok {
			calls = append(calls, c)
		}
	}
	return calls, nil
}

// callOf is the call an entry records, if it records one.
func callOf(e jsonx.Value) (Call, bool) {
	id, _ := e.Get("id").Text()
	if id == "" {
		return Call{}, false
	}
	msg := e.Get("message")
	switch {
	case e.Get("type").Is("message") && msg.Get("role").Is("assistant"):
	case e.Get("type").Is("model_usage"):
		msg = e
	default:
		return Call{}, false
	}
	model, ok1 := msg.Get("model").Text()
	provider, ok2 := msg.Get("provider").Text()
	api, ok3 := msg.Get("api").Text()
	u := msg.Get("usage")
	if !ok1 || !ok2 || !ok3 || u.Kind() != jsonx.Object {
		return Call{}, false
	}
	c := Call{EntryID: id, Provider: provider, Model: model, API: api}
	count := func(v jsonx.Value) float64 {
		f, ok := v.Float()
		if !ok || math.IsInf(f, 0) || math.IsNaN(f) || f < 0 {
			if v.Defined() {
				c.MalformedUsageCounters++
			}
			return 0
		}
		return f
	}
	c.Tokens = Tokens{Input: count(u.Get("input")), Output: count(u.Get("output")),
		CacheRead: count(u.Get("cacheRead")), CacheWrite: count(u.Get("cacheWrite"))}
	if h, ok := u.Get("cttl").Get("ephemeral1h").Float(); ok && h > 0 && !math.IsInf(h, 0) {
		c.Tokens.CacheWrite1h = min(h, c.Tokens.CacheWrite)
	}
	if t, ok := u.Get("totalTokens").Float(); ok && !math.IsInf(t, 0) && !math.IsNaN(t) {
		c.Total = t
	} else {
		o := u.Get("orchestration")
		c.Total = c.Tokens.Input + c.Tokens.Output + c.Tokens.CacheRead + c.Tokens.CacheWrite +
			count(o.Get("input")) + count(o.Get("output")) + count(o.Get("cacheRead"))
	}
	if t, ok := u.Get("cost").Get("total").Float(); ok && !math.IsInf(t, 0) && !math.IsNaN(t) {
		c.Cost, c.HasCost = t, true
	}
	if t, ok := msg.Get("timestamp").Float(); ok && t > 0 && !math.IsInf(t, 0) && e.Get("type").Is("message") {
		c.Time = t
	} else if s, ok := e.Get("timestamp").Text(); ok {
		if ms := jsonx.ParseDate(s); !math.IsNaN(ms) {
			c.Time = ms
		}
	}
	return c, true
}
