package usage

import (
	"cmp"
	"math"
	"slices"
)

// Quarter is the length of a bucket's span of time, in ms: a quarter of
// an hour, of which every time zone's offset from UTC is a whole number,
// so that a bucket lies in one day of every zone.
const Quarter = 15 * 60 * 1000

// The modes' places in a Bucket's Cost and Unpriced.
var modes = [...]Mode{Auto, Calculate, Display}

func modeIndex(m Mode) int {
	switch m {
	case Calculate:
		return 1
	case Display:
		return 2
	}
	return 0
}

// A Bucket is the calls of one session to one model in one quarter of an
// hour, summed: what a report needs of them, priced in each mode. A
// session's buckets (its Digest) stand for its calls where no call of
// it is counted elsewhere (see Ledger), so that a report of 250,000
// calls adds a few tens of thousands of buckets.
type Bucket struct {
	Quarter     int64   // the calls' time / Quarter
	First, Last float64 // the first and last call's times (Unix ms)
	Model       ModelRef
	Tokens      Tokens
	Calls       int
	Malformed   int
	Cost        [len(modes)]float64 // the calls' cost in Auto, Calculate and Display modes
	Unpriced    [len(modes)]int     // the calls without a cost in each
}

// Digest sums calls into buckets, each call priced in every mode from
// prices, in the order of their quarters, then models.
func Digest(calls []Call, prices *Table) []Bucket {
	type key struct {
		q int64
		m ModelRef
	}
	var pricers [len(modes)]*Pricer
	for k, m := range modes {
		pricers[k] = NewPricer(m, prices)
	}
	at := map[key]int{}
	var out []Bucket
	for _, c := range calls {
		k := key{int64(math.Floor(c.Time / Quarter)), c.Model}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, Bucket{Quarter: k.q, First: c.Time, Last: c.Time, Model: c.Model})
		}
		b := &out[i]
		b.First, b.Last = min(b.First, c.Time), max(b.Last, c.Time)
		b.Tokens.Add(c.Tokens)
		b.Calls++
		b.Malformed += c.MalformedUsageCounters
		for m, p := range pricers {
			if cost, ok := p.Cost(c); ok {
				b.Cost[m] += cost
			} else {
				b.Unpriced[m]++
			}
		}
	}
	slices.SortFunc(out, func(a, b Bucket) int { return cmp.Or(cmp.Compare(a.Quarter, b.Quarter), cmp.Compare(a.Model, b.Model)) })
	return out
}

// digestRule names DigestSession's rules: a call counted once within its
// session (dedupe), summed into buckets of a Quarter by model, priced in
// every mode. A change of what it computes changes the text, and with it
// RulesVersion.
const digestRule = "digest 1: dedupe within the session; quarters by model; every mode\n"

// DigestSession is the digest of s's calls counted once among
// themselves: the lines of one response it holds twice (an import of
// streamed Claude Code lines) are one call, as a ledger of s alone counts
// them. What stands for s in a ledger where nothing else holds its calls.
func DigestSession(s *Session, prices *Table) []Bucket {
	one := []*Session{s}
	var calls []Call
	for _, c := range dedupe(one, map[*Session][]*Session{s: one}) {
		calls = append(calls, c.Call)
	}
	return Digest(calls, prices)
}

// totals are the bucket's tokens and cost in mode.
func (b *Bucket) totals(mode Mode) Totals {
	m := modeIndex(mode)
	return Totals{Tokens: b.Tokens, Cost: b.Cost[m], Calls: b.Calls, Unpriced: b.Unpriced[m], Malformed: b.Malformed}
}
