// The price table: omp's model catalog built in, and a call's cost as
// pi-catalog computes it.

package usage

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"io"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
)

//go:generate go run ./genprices -date 2026-12-01

//go:embed prices.json.gz
var pricesGz []byte

// Rates are dollars per million tokens.
type Rates struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// LongContext is a tier of rates for long prompts.
type LongContext struct {
	Rates                   `json:",inline"`
	InputThreshold          float64 `json:"inputThreshold"`
	InputThresholdInclusive bool    `json:"inputThresholdInclusive"`
}

// PeakWindow is a span of UTC minutes on some weekdays (0 is Sunday).
type PeakWindow struct {
	Weekdays    []int `json:"weekdays"`
	StartMinute int   `json:"startMinute"`
	EndMinute   int   `json:"endMinute"`
}

// EffectiveRates are rates that apply from a time (Unix ms) on.
type EffectiveRates struct {
	Rates         `json:",inline"`
	EffectiveFrom float64      `json:"effectiveFrom"`
	LongContext   *LongContext `json:"longContext"`
}

// TimeBased is a schedule of prices: calls outside the peak windows cost
// OffPeakMultiplier times the rates, and EffectiveRates replace the rates
// from their dates on.
type TimeBased struct {
	OffPeakMultiplier float64          `json:"offPeakMultiplier"`
	PeakWindows       []PeakWindow     `json:"peakWindows"`
	EffectiveRates    []EffectiveRates `json:"effectiveRates"`
}

// Price is one model's price.
type Price struct {
	Rates       `json:",inline"`
	LongContext *LongContext `json:"longContext"`
	TimeBased   *TimeBased   `json:"timeBased"`
}

// Tokens are one call's tokens as omp's usage records them: Input is the
// input not read from the cache.
type Tokens struct {
	Input, Output, CacheRead, CacheWrite float64
	// CacheWrite1h are the cache writes of a one-hour lifetime, of
	// CacheWrite (Anthropic's cttl.ephemeral1h); they cost twice the
	// input rate, the rest the cache-write rate.
	CacheWrite1h float64
	// Reasoning are the output tokens spent reasoning, of Output, where
	// the harness records them apart (Codex, Copilot, Gemini, opencode).
	Reasoning float64
}

// Sum is the tokens of the four buckets (input, output, cache reads and
// writes): the total as ccusage counts it.
func (t Tokens) Sum() float64 { return t.Input + t.Output + t.CacheRead + t.CacheWrite }

// Add adds u's tokens to t's.
func (t *Tokens) Add(u Tokens) {
	t.Input += u.Input
	t.Output += u.Output
	t.CacheRead += u.CacheRead
	t.CacheWrite += u.CacheWrite
	t.CacheWrite1h += u.CacheWrite1h
	t.Reasoning += u.Reasoning
}

// costRule names Cost's formula. A change of what Cost computes changes
// its text, and with it RulesVersion, which keys every cache of costs
// (TestRulesVersionFollowsTheRules fails when the costs of fixed calls
// change and it does not).
const costRule = "cost 1: pi-catalog's calculateUsageCost; an hour's cache write at twice the input rate; off-peak multiplier\n"

// Cost is what a call of tokens cost, at time at (Unix ms; it matters
// only to a time-based price), in dollars, as pi-catalog's
// calculateUsageCost computes it.
func (p Price) Cost(t Tokens, at float64) float64 {
	prompt := t.Input + t.CacheRead + t.CacheWrite
	r := p.rates(prompt, at)
	m := 1.0
	if p.TimeBased != nil && !p.TimeBased.peak(at) {
		m = p.TimeBased.OffPeakMultiplier
	}
	write := r.CacheWrite / 1e6 * t.CacheWrite
	if t.CacheWrite1h > 0 {
		fiveMinute := max(0, t.CacheWrite-t.CacheWrite1h)
		write = r.CacheWrite/1e6*fiveMinute + r.Input*2/1e6*t.CacheWrite1h
	}
	return r.Input/1e6*t.Input*m + r.Output/1e6*t.Output*m + r.CacheRead/1e6*t.CacheRead*m + write*m
}

// rates are the rates of a call with a prompt of that many tokens at at:
// the latest effective rates by then, and their long-context tier when
// the prompt reaches it.
func (p Price) rates(prompt, at float64) Rates {
	rates, long := p.Rates, p.LongContext
	if p.TimeBased != nil {
		from := math.Inf(-1)
		for _, e := range p.TimeBased.EffectiveRates {
			if e.EffectiveFrom <= at && e.EffectiveFrom > from {
				rates, long, from = e.Rates, e.LongContext, e.EffectiveFrom
			}
		}
	}
	if long != nil && (prompt > long.InputThreshold || long.InputThresholdInclusive && prompt == long.InputThreshold) {
		return long.Rates
	}
	return rates
}

// peak reports whether at (Unix ms) falls in a peak window.
func (s *TimeBased) peak(at float64) bool {
	day := math.Floor(at / 86_400_000)
	weekday := int(math.Mod(math.Mod(day+4, 7)+7, 7))
	minute := int(math.Floor((at - day*86_400_000) / 60_000))
	for _, w := range s.PeakWindows {
		if minute >= w.StartMinute && minute < w.EndMinute && slices.Contains(w.Weekdays, weekday) {
			return true
		}
	}
	return false
}

// A Model is one model of the table.
type Model struct {
	Provider string `json:"provider"`
	ID       string `json:"id"`
	Price    Price  `json:"cost"`
}

// Table is the price table.
type Table struct {
	Source string  `json:"source"` // the catalog it was built from
	Date   string  `json:"date"`   // when
	Models []Model `json:"models"` // by provider, then id

	byID map[string][]int // a model id's models, by their place in Models
}

// RulesVersion names the rules that turn calls into costs and digests:
// Lookup's (lookupRule), Cost's (costRule) and DigestSession's
// (digestRule), a hash of their names.
func RulesVersion() string {
	sum := sha256.Sum256([]byte(lookupRule + costRule + digestRule))
	return hex.EncodeToString(sum[:8])
}

// CacheVersion names what a cache of costs or digests computed by this
// package depends on, without reading the table: the rules
// (RulesVersion) and the built-in price table. A cache keyed by it is
// never read by a build that would compute otherwise.
var CacheVersion = sync.OnceValue(func() string {
	sum := sha256.Sum256(append([]byte(RulesVersion()), pricesGz...))
	return hex.EncodeToString(sum[:8])
})

// lookupRule names Lookup's rule; a change of the rule changes it.
const lookupRule = "lookup 2: all-zero and resellers' disagreeing prices are no price\n"

// Prices is the built-in table, read on first use.
var Prices = sync.OnceValue(func() *Table {
	t, err := readTable(pricesGz)
	if err != nil {
		panic("usage: the built-in price table does not read: " + err.Error()) // a build's mistake, not input's
	}
	return t
})

func readTable(gz []byte) (*Table, error) {
	z, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(z)
	if err != nil {
		return nil, err
	}
	t := &Table{}
	if err := json.Unmarshal(b, t); err != nil {
		return nil, err
	}
	t.byID = map[string][]int{}
	for k, m := range t.Models {
		t.byID[strings.ToLower(m.ID)] = append(t.byID[strings.ToLower(m.ID)], k)
	}
	return t, nil
}

// Lookup is the price of model as provider serves it: that provider's
// entry; else, for a model a session names without the catalog's
// provider (Claude Code's "claude-…", Codex's "gpt-…", or a provider the
// catalog calls otherwise), the entry of the model's first-party provider
// (anthropic, openai, google) among those that have its id, or the one
// price every other provider agrees on. A model given as "provider/model"
// is looked up as such.
//
// ok is false where the table says no price: a model it does not have;
// an entry whose rates are all zero (the catalog's way of saying a
// subscription, a free tier or that it does not know, never what a call
// cost); and a model named without its provider that several resellers
// price differently, none its maker: which one served the call is not
// known, so neither is its cost. Such calls are unpriced, never $0.
func (t *Table) Lookup(provider, model string) (Price, bool) {
	if provider == "" {
		if p, m, cut := strings.Cut(model, "/"); cut {
			if price, ok := t.Lookup(p, m); ok {
				return price, true
			}
		}
	}
	ks := t.byID[strings.ToLower(model)]
	for _, k := range ks {
		if provider != "" && t.Models[k].Provider == provider {
			return t.Models[k].Price, !t.Models[k].Price.zero()
		}
	}
	ks = slices.DeleteFunc(slices.Clone(ks), func(k int) bool { return t.Models[k].Price.zero() })
	if len(ks) == 0 {
		return Price{}, false
	}
	best := slices.MinFunc(ks, func(a, b int) int {
		return cmp.Or(rank(t.Models[a].Provider, provider)-rank(t.Models[b].Provider, provider),
			strings.Compare(t.Models[a].Provider, t.Models[b].Provider))
	})
	if rank(t.Models[best].Provider, provider) < 4 {
		return t.Models[best].Price, true
	}
	for _, k := range ks {
		if !t.Models[k].Price.same(t.Models[best].Price) {
			return Price{}, false // resellers' prices that disagree
		}
	}
	return t.Models[best].Price, true
}

// zero reports whether every rate of p is zero.
func (p Price) zero() bool {
	if p.Rates != (Rates{}) || p.LongContext != nil && p.LongContext.Rates != (Rates{}) {
		return false
	}
	if p.TimeBased != nil {
		for _, e := range p.TimeBased.EffectiveRates {
			if e.Rates != (Rates{}) || e.LongContext != nil && e.LongContext.Rates != (Rates{}) {
				return false
			}
		}
	}
	return true
}

// same reports whether p and q charge alike.
func (p Price) same(q Price) bool {
	a, _ := json.Marshal(p)
	b, _ := json.Marshal(q)
	return bytes.Equal(a, b)
}

// rank orders the providers of a model id: the one asked for, then the
// first-party ones, then the rest.
func rank(provider, asked string) int {
	switch provider {
	case asked:
		return 0
	case "anthropic":
		return 1
	case "openai":
		return 2
	case "google":
		return 3
	}
	return 4
}
