package secrets

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"fmt"
	"io"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
)

// gitleaksRules is gitleaks' default configuration as genrules wrote it.
//
//go:embed gitleaks.json.gz
var gitleaksRules []byte

// ruleSet is the file genrules writes.
type ruleSet struct {
	Gitleaks   string       `json:"gitleaks"`
	Rules      []*Rule      `json:"rules"`
	Allowlists []*Allowlist `json:"allowlists"`
}

// A Rule finds one kind of secret, as a gitleaks rule does: where one of
// its Keywords is (ignoring case), its Regex matches; the secret is the
// SecretGroup'th group (or the first group that matched, or the whole
// match); it counts when its Shannon entropy is above Entropy and no
// allowlist (the set's, then the rule's) lets it go.
type Rule struct {
	ID          string       `json:"id"`
	Regex       string       `json:"regex"`
	SecretGroup int          `json:"secretGroup"`
	Entropy     float64      `json:"entropy"`
	Keywords    []string     `json:"keywords"`
	Allowlists  []*Allowlist `json:"allowlists"`

	once      sync.Once
	re        *regexp.Regexp
	multiline bool // its match may span lines
	width     int  // the most bytes a match may hold, or -1 when unbounded
	// semiGeneric: the regex is gitleaks' "name = value" shape (see
	// semiGenericPrefix), and core is it without the prefix.
	semiGeneric bool
	core        *regexp.Regexp
	keyLed      bool // core begins with one of the keywords: the name, not the value
	minSecret   int  // the fewest bytes its secret group may hold
	// anchored, when every match must begin with one of the keywords, is
	// the expression held to start where a keyword does: it then reads
	// only as far as a match may reach from there. boundary says the
	// expression begins with \b.
	anchored *regexp.Regexp
	boundary bool
	// needs are sets of texts, one of each of which (ignoring ASCII case)
	// every match holds, other than the keywords: a part of the text
	// without them is not searched (curl-auth-header asks for -H or
	// --header and for Authorization:, Key: or Token:, not only curl).
	needs [][]string
}

// semiGenericPrefix and semiGenericOperator are the parts of the shape
// gitleaks' generator gives the rules of a value named by a keyword
// (generic-api-key and 94 others): up to 50 name characters, the keyword,
// up to 20 more name characters and 3 quotes or spaces, an operator, the
// value. The lazy prefix makes Go's regexp carry 50 threads through every
// byte, and only says where the match starts; the rule runs without it
// (core) and the prefix is measured afterwards, where a match was found.
const (
	semiGenericPrefix   = `(?i)[\w.-]{0,50}?`
	semiGenericOperator = `(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`
)

// An Allowlist lets a finding go when one of its Regexes matches its
// Target (the secret, the whole "match", or the "line"), or when the
// secret holds one of its StopWords; with And, only when both do.
type Allowlist struct {
	And       bool     `json:"and"`
	Target    string   `json:"target"`
	Regexes   []string `json:"regexes"`
	StopWords []string `json:"stopwords"`

	once       sync.Once
	re         *regexp.Regexp // Regexes as one
	stops      *keywords      // StopWords of two bytes or more
	shortStops []string
}

// gitleaksEnd is how 151 of gitleaks' rules say a secret has ended: a
// quote, a space, a semicolon, an escaped line break or the end. A
// transcript wraps text in tags and prose (<task>KEY</task>, "use KEY,
// then", (KEY)), where such a key would go unmasked; endsInText adds the
// characters that end a token there and are in no token these rules
// take, so that xdev finds every secret gitleaks finds, and those.
const (
	gitleaksEnd = `(?:[\x60'"\s;]|\\[nr]|$)`
	endsInText  = `(?:[\x60'"\s;<>,)\]}&|]|\\[nr]|$)`
)

// widenEnd is expr with gitleaksEnd as endsInText.
func widenEnd(expr string) string { return strings.ReplaceAll(expr, gitleaksEnd, endsInText) }

// compile makes the rule's expression on its first use: most rules are
// never asked for in a given text, and compiling all of them costs tens
// of milliseconds.
func (r *Rule) compile() *regexp.Regexp {
	r.once.Do(func() {
		expr := widenEnd(r.Regex)
		r.re = regexp.MustCompile(expr)
		r.multiline = strings.Contains(expr, `[\s\S`) || strings.Contains(expr, `(?s`) || strings.Contains(expr, `\n`)
		r.width = -1
		if re, err := syntax.Parse(expr, syntax.Perl); err == nil {
			r.width = maxWidth(re)
			g := r.SecretGroup
			if g == 0 {
				g = 1
			}
			if sub := capture(re, g); sub != nil {
				r.minSecret = minWidth(sub)
			}
			r.needs = necessary(re.Simplify(), r.Keywords)
			if lits, boundary, ok := leading(re.Simplify()); ok && allStartWith(lits, r.Keywords) {
				r.anchored = regexp.MustCompile(`^(?:` + expr + `)`)
				r.boundary = boundary
			}
		}
		if rest, ok := strings.CutPrefix(expr, semiGenericPrefix); ok && strings.Contains(rest, semiGenericOperator) {
			r.semiGeneric = true
			r.core = regexp.MustCompile("(?i)" + rest)
			if re, err := syntax.Parse("(?i)"+rest, syntax.Perl); err == nil {
				lits, _, ok := leading(re.Simplify())
				r.keyLed = ok && allStartWith(lits, r.Keywords)
			}
		}
	})
	return r.re
}

// allows reports whether the list lets go a secret found in match, on line.
func (a *Allowlist) allows(secret, match, line string) bool {
	a.once.Do(func() {
		// One expression of them all: one pass over the target, not one
		// each (gitleaks' global list has dozens).
		if len(a.Regexes) > 0 {
			a.re = regexp.MustCompile("(?:" + strings.Join(a.Regexes, ")|(?:") + ")")
		}
		var words []string
		for _, w := range a.StopWords {
			if len(w) >= 2 {
				words = append(words, strings.ToLower(w))
			} else {
				a.shortStops = append(a.shortStops, strings.ToLower(w))
			}
		}
		if len(words) > 0 {
			a.stops = newKeywords(words)
		}
	})
	target := secret
	switch a.Target {
	case "match":
		target = match
	case "line":
		target = line
	}
	re := a.re != nil && a.re.MatchString(target)
	stop := false
	if len(a.StopWords) > 0 && (!a.And || re) {
		stop = a.stopped(secret)
	}
	if a.And {
		return re && stop
	}
	return re || stop
}

// stopped reports whether secret holds one of the stop words, ignoring
// case.
func (a *Allowlist) stopped(secret string) bool {
	low := secret
	ascii := true
	for i := range len(secret) {
		if secret[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii {
		// strings.ToLower folds more than ASCII; the matcher folds ASCII.
		low = strings.ToLower(secret)
	}
	if a.stops != nil {
		found := false
		a.stops.each(low, func(int, int) { found = true })
		if found {
			return true
		}
	}
	for _, w := range a.shortStops {
		if strings.Contains(strings.ToLower(secret), w) {
			return true
		}
	}
	return false
}

// loadRules reads the embedded rule set and appends xdev's own rules.
func loadRules() *ruleSet {
	z, err := gzip.NewReader(bytes.NewReader(gitleaksRules))
	if err != nil {
		panic("secrets: the embedded rule set: " + err.Error())
	}
	b, err := io.ReadAll(z)
	if err != nil {
		panic("secrets: the embedded rule set: " + err.Error())
	}
	var set ruleSet
	if err := json.Unmarshal(b, &set); err != nil {
		panic("secrets: the embedded rule set: " + err.Error())
	}
	set.Rules = append(set.Rules, extraRules()...)
	return &set
}

// maxWidth is the most bytes a match of re may hold, or -1 when that is
// unbounded.
func maxWidth(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			n += utf8.RuneLen(r)
		}
		return n
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return 0
		}
		return max(1, utf8.RuneLen(min(re.Rune[len(re.Rune)-1], utf8.MaxRune)))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax
	case syntax.OpCapture:
		return maxWidth(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		return -1
	case syntax.OpQuest:
		return maxWidth(re.Sub[0])
	case syntax.OpRepeat:
		w := maxWidth(re.Sub[0])
		if re.Max < 0 || w < 0 {
			return -1
		}
		return w * re.Max
	case syntax.OpConcat:
		n := 0
		for _, s := range re.Sub {
			w := maxWidth(s)
			if w < 0 {
				return -1
			}
			n += w
		}
		return n
	case syntax.OpAlternate:
		n := 0
		for _, s := range re.Sub {
			w := maxWidth(s)
			if w < 0 {
				return -1
			}
			n = max(n, w)
		}
		return n
	}
	return -1
}

// minWidth is the fewest bytes a match of re may hold.
func minWidth(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(string(re.Rune))
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minWidth(re.Sub[0])
	case syntax.OpRepeat:
		return minWidth(re.Sub[0]) * re.Min
	case syntax.OpConcat:
		n := 0
		for _, s := range re.Sub {
			n += minWidth(s)
		}
		return n
	case syntax.OpAlternate:
		n := -1
		for _, s := range re.Sub {
			if w := minWidth(s); n < 0 || w < n {
				n = w
			}
		}
		return max(n, 0)
	}
	return 0
}

// capture is the n'th capturing group of re, or nil.
func capture(re *syntax.Regexp, n int) *syntax.Regexp {
	if re.Op == syntax.OpCapture && re.Cap == n {
		return re
	}
	for _, s := range re.Sub {
		if c := capture(s, n); c != nil {
			return c
		}
	}
	return nil
}

// leading is the strings every match of re begins with (one of them), and
// whether re asks for a word boundary before them; ok is false when a
// match may begin otherwise.
func leading(re *syntax.Regexp) (lits []string, boundary, ok bool) {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	subs := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		subs = re.Sub
	}
	for len(subs) > 0 && (subs[0].Op == syntax.OpWordBoundary || subs[0].Op == syntax.OpEmptyMatch) {
		boundary = boundary || subs[0].Op == syntax.OpWordBoundary
		subs = subs[1:]
	}
	lits, _ = prefixes(subs)
	for _, l := range lits {
		if l == "" {
			return nil, false, false
		}
	}
	return lits, boundary, len(lits) > 0
}

// prefixes is the strings a match of the concatenation subs may begin
// with, as far as its literal parts reach (at most 64 strings), and
// whether they are whole matches.
func prefixes(subs []*syntax.Regexp) (out []string, whole bool) {
	out = []string{""}
	for _, s := range subs {
		var next []string
		var w bool
		switch s.Op {
		case syntax.OpLiteral:
			next, w = []string{strings.ToLower(string(s.Rune))}, true
		case syntax.OpCapture:
			next, w = prefixes(s.Sub)
		case syntax.OpConcat:
			next, w = prefixes(s.Sub)
		case syntax.OpQuest:
			next, w = prefixes(s.Sub)
			next = append(next, "")
		case syntax.OpAlternate:
			w = true
			for _, a := range s.Sub {
				p, aw := prefixes([]*syntax.Regexp{a})
				next = append(next, p...)
				w = w && aw
			}
		default:
			return out, false
		}
		if len(out)*len(next) > 64 {
			return out, false
		}
		var joined []string
		for _, a := range out {
			for _, b := range next {
				joined = append(joined, a+b)
			}
		}
		out = joined
		if !w {
			return out, false
		}
	}
	return out, true
}

// allStartWith reports whether each literal begins with one of the words.
func allStartWith(lits, words []string) bool {
	for _, l := range lits {
		found := false
		for _, w := range words {
			if strings.HasPrefix(l, strings.ToLower(w)) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return len(lits) > 0
}

// engineVersion is bumped with every change to how the rules are applied
// (detect.go, keywords.go, mask.go, extra.go): with the embedded rule
// set's digest it makes Version.
const engineVersion = 1

// Version names what the detector finds: the embedded rule set and the
// engine that applies it. A cache of findings (`xdev secrets`) is kept
// under it, so that new rules read every session again.
func Version() string {
	sum := sha256.Sum256(gitleaksRules)
	return fmt.Sprintf("%d-%x", engineVersion, sum[:8])
}

// necessary is sets of texts, lowercase, one of each of which every
// match of re holds, other than ones that hold one of the keywords
// (which the text around a keyword holds anyway): at most maxNeeds, those
// whose shortest text is longest first; nil when none is known.
func necessary(re *syntax.Regexp, keywords []string) [][]string {
	shortest := func(set []string) int {
		n := -1
		for _, s := range set {
			if n < 0 || len(s) < n {
				n = len(s)
			}
		}
		return n
	}
	useful := func(set []string) bool {
		for _, s := range set {
			held := false
			for _, k := range keywords {
				held = held || strings.Contains(s, strings.ToLower(k))
			}
			if !held {
				return true
			}
		}
		return false
	}
	// parts are the sets of a concatenation: each part's, and each run of
	// parts that match exactly one of a few texts, joined (-(?:u|-user)
	// is -u or --user).
	var walk func(re *syntax.Regexp) ([]string, bool)
	parts := func(subs []*syntax.Regexp) [][]string {
		var out [][]string
		var run []string
		for _, sub := range subs {
			if set, ok := walk(sub); ok && useful(set) {
				out = append(out, set)
			}
			set, ok := exactly(sub)
			if !ok {
				run = nil
				continue
			}
			if run == nil {
				run = set
			} else if run = joined(run, set); run == nil {
				run = set
			}
			if useful(run) {
				out = append(out, run)
			}
		}
		slices.SortStableFunc(out, func(a, b []string) int { return shortest(b) - shortest(a) })
		return out
	}
	walk = func(re *syntax.Regexp) ([]string, bool) {
		switch re.Op {
		case syntax.OpLiteral, syntax.OpAlternate:
			if set, ok := exactly(re); ok {
				return set, true
			}
			if re.Op == syntax.OpLiteral {
				return nil, false
			}
			var all []string
			for _, sub := range re.Sub {
				set, ok := walk(sub)
				if !ok {
					return nil, false
				}
				all = append(all, set...)
			}
			return all, true
		case syntax.OpCapture, syntax.OpPlus:
			return walk(re.Sub[0])
		case syntax.OpRepeat:
			if re.Min >= 1 {
				return walk(re.Sub[0])
			}
		case syntax.OpConcat:
			if p := parts(re.Sub); len(p) > 0 {
				return p[0], true
			}
		}
		return nil, false
	}
	if re.Op == syntax.OpConcat {
		p := parts(re.Sub)
		return p[:min(len(p), maxNeeds)]
	}
	if set, ok := walk(re); ok && useful(set) {
		return [][]string{set}
	}
	return nil
}

// maxNeeds is how many sets of needed texts a rule checks.
const maxNeeds = 3

// exactly is the few texts, lowercase, one of which re matches and
// nothing else, if it is so.
func exactly(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		b := make([]byte, 0, len(re.Rune))
		for _, c := range re.Rune {
			if c >= utf8.RuneSelf {
				return nil, false
			}
			b = append(b, fold[byte(c)])
		}
		return []string{string(b)}, true
	case syntax.OpCapture:
		return exactly(re.Sub[0])
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			set, ok := exactly(sub)
			if !ok {
				return nil, false
			}
			all = append(all, set...)
		}
		return all, len(all) <= maxExact
	case syntax.OpConcat:
		run := []string{""}
		for _, sub := range re.Sub {
			set, ok := exactly(sub)
			if !ok {
				return nil, false
			}
			if run = joined(run, set); run == nil {
				return nil, false
			}
		}
		return run, true
	}
	return nil, false
}

// maxExact bounds the texts exactly and joined keep.
const maxExact = 16

// joined is every a followed by every b, nil when they are too many.
func joined(a, b []string) []string {
	if len(a)*len(b) > maxExact {
		return nil
	}
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, x+y)
		}
	}
	return out
}

// holdsAll reports whether text holds, ignoring ASCII case, one of the
// lowercase texts of each set of needs.
func holdsAll(text string, needs [][]string) bool {
	for _, set := range needs {
		held := false
		for _, n := range set {
			if held = indexFold(text, n) >= 0; held {
				break
			}
		}
		if !held {
			return false
		}
	}
	return true
}

// indexFold is where text first holds the lowercase word, ignoring ASCII
// case, or -1: by IndexByte for its first byte in either case, each
// looked for again only once passed.
func indexFold(text, word string) int {
	last := len(text) - len(word) // the last start that fits
	if last < 0 {
		return -1
	}
	lo, up := word[0], word[0]
	if 'a' <= lo && lo <= 'z' {
		up = lo - 'a' + 'A'
	}
	nextLo, nextUp := -1, -1 // the next start at or after i, or past last
	for i := 0; i <= last; i++ {
		if nextLo < i {
			if k := strings.IndexByte(text[i:last+1], lo); k >= 0 {
				nextLo = i + k
			} else {
				nextLo = last + 1
			}
		}
		if up != lo && nextUp < i {
			if k := strings.IndexByte(text[i:last+1], up); k >= 0 {
				nextUp = i + k
			} else {
				nextUp = last + 1
			}
		}
		i = nextLo
		if up != lo {
			i = min(nextLo, nextUp)
		}
		if i > last {
			return -1
		}
		if equalFoldAt(text[i:i+len(word)], word) {
			return i
		}
	}
	return -1
}

// equalFoldAt reports whether s is word (lowercase) but for ASCII case.
func equalFoldAt(s, word string) bool {
	for i := range len(word) {
		if fold[s[i]] != word[i] {
			return false
		}
	}
	return true
}
