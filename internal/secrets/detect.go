package secrets

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
)

// A Finding is one secret in a text.
type Finding struct {
	Rule       string // the rule's id: "github-pat", "aws-access-token", …
	Start, End int    // the secret's bytes in the text
	// Placeholder: the secret is a key's shape filled with one character
	// (nfp_XXXX…), what stands where a key was redacted. Masking masks it
	// all the same (gitleaks would report it); a report of keys found
	// leaves it out.
	Placeholder bool
}

// Detector finds secrets by a rule set. Its zero value is not usable;
// Default is the detector of gitleaks' default rules and xdev's own. A
// Detector is safe for use by several goroutines.
type Detector struct {
	words  *keywords
	byWord [][]int // keyword → the rules it asks for
	// set is the rule set, asked for when a text first holds a keyword:
	// Default's is read then (a text with none, a status line, reads no
	// rule).
	set func() *ruleSet
}

// Default is the detector every way out of xdev masks with, made on first
// use from the default rule set's keywords (defaultKeywords, well under a
// millisecond): the rules are read when a text first holds one of them
// (0.8 ms), each rule's expression compiled when a text first holds one
// of its own.
var Default = sync.OnceValue(func() *Detector {
	return &Detector{words: newKeywords(defaultKeywords), byWord: defaultByWord, set: sync.OnceValue(loadRules)}
})

// New makes a detector of a rule set.
func New(set *ruleSet) *Detector {
	words, byWord := keywordIndex(set.Rules)
	return &Detector{words: newKeywords(words), byWord: byWord, set: func() *ruleSet { return set }}
}

// keywordIndex are the keywords of rules (lowercase, each once, in the
// order the rules first name them) and the rules each asks for, by their
// places in rules.
func keywordIndex(rules []*Rule) (words []string, byWord [][]int) {
	index := map[string]int{}
	for r, rule := range rules {
		for _, w := range rule.Keywords {
			w = strings.ToLower(w)
			k, ok := index[w]
			if !ok {
				k = len(words)
				index[w] = k
				words = append(words, w)
				byWord = append(byWord, nil)
			}
			byWord[k] = append(byWord[k], r)
		}
	}
	return words, byWord
}

// Bounds of the text a rule's expression is asked to read around one of
// its keywords: the keyword's line, at most this far back and on (a rule
// whose match may span lines reads on across them, as far as a private
// key's block may reach).
const (
	reachBack      = 1 << 10
	reachOn        = 4 << 10
	reachMultiline = 64 << 10
)

// joinGap is how near two parts of a rule must be to be read as one:
// parts that overlap are (a text dense with keywords makes one part of a
// rule's many, and one pass of its expression over them); joining parts
// 256 bytes apart too cost a tenth more on the real fixtures.
const joinGap = 0

// span is a part of the text one rule reads; joined says it holds more
// than one keyword's part.
type span struct {
	lo, hi int
	joined bool
}

// Find returns the secrets in text, ordered by where they start. Two
// rules may find overlapping secrets (a GitHub token is also a generic
// key); Mask joins them.
//
// A rule reads only the text around its keywords (the keyword's line,
// bounded), not the whole text as gitleaks does, so that the cost follows
// how often keywords occur, not the text's size times the rules: its
// findings are gitleaks' and, where a bound cuts a line, maybe more.
func (d *Detector) Find(text string) []Finding {
	if len(text) < 4 {
		return nil
	}
	var spans map[int][]span // rule → the parts it reads, in order, joined
	var set *ruleSet         // asked for at the first keyword
	d.words.each(text, func(w, end int) {
		start := end - len(d.words.words[w])
		if set == nil {
			set = d.set()
		}
		for _, r := range d.byWord[w] {
			rule := set.Rules[r]
			rule.compile()
			if rule.anchored != nil && rule.boundary && start > 0 && isWord(text[start-1]) && isWord(text[start]) {
				// Every match starts at a keyword, with \b: none starts
				// in a word (vault's "s." ends most sentences).
				continue
			}
			var lo, hi int
			switch {
			case rule.semiGeneric && rule.keyLed:
				v := valueAfter(text, end, rule.minSecret)
				if v < 0 {
					continue
				}
				lo, hi = start, min(len(text), v+3)
			case rule.semiGeneric:
				// The keyword may be the value's start (live_, nrak-), its
				// name at most 82 bytes before it, or a name that is not
				// all the names (linked_in): the value is at most 32
				// bytes on.
				lo, hi = max(0, start-256), min(len(text), valueEnd(text, min(len(text), end+32))+3)
			case rule.width >= 0:
				// As far as a match may reach, across lines or not.
				lo, hi = max(0, start-rule.width), min(len(text), end+rule.width)
			case rule.multiline:
				lo, hi = max(0, start-reachBack), min(len(text), end+reachMultiline)
			default:
				// The keyword's line: a rule of no bounded width (jwt,
				// curl-auth-header) reads on until a space or the line's
				// end, as its own shapes do.
				lo, hi = max(0, start-reachBack), min(len(text), end+reachOn)
				if i := strings.LastIndexByte(text[lo:start], '\n'); i >= 0 {
					lo += i + 1
				}
				if i := strings.IndexByte(text[end:hi], '\n'); i >= 0 {
					hi = end + i + 1 // the newline too: rules end a secret at \s
				}
			}
			if spans == nil {
				spans = map[int][]span{}
			}
			if rule.anchored != nil {
				lo = start // every match starts at a keyword
			}
			s := spans[r]
			if n := len(s); n > 0 && lo <= s[n-1].hi+joinGap {
				// Joined: one pass over the text of keywords close
				// together, not one from each, which would read the text
				// between them again and again.
				s[n-1].hi = max(s[n-1].hi, hi)
				s[n-1].joined = true
			} else {
				spans[r] = append(s, span{lo: lo, hi: hi})
			}
		}
	})
	var out []Finding
	memo := map[allowKey]bool{}
	for r, ss := range spans {
		for _, s := range ss {
			out = set.Rules[r].find(set, text, s, out, memo)
		}
	}
	slices.SortFunc(out, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(b.End, a.End), strings.Compare(a.Rule, b.Rule))
	})
	return slices.Compact(out)
}

// allowKey is what the allowlists decide a finding by.
type allowKey struct {
	rule                *Rule
	secret, match, line string
}

// find appends the rule's findings in the span s of text.
func (r *Rule) find(set *ruleSet, text string, s span, out []Finding, memo map[allowKey]bool) []Finding {
	part := text[s.lo:s.hi]
	if r.needs != nil && !holdsAll(part, r.needs) {
		return out
	}
	re := r.re
	switch {
	case r.anchored != nil && !s.joined:
		// One keyword's part: the match starts where it does.
		re = r.anchored
	case r.semiGeneric:
		re = r.core
	}
	for _, m := range re.FindAllStringSubmatchIndex(part, -1) {
		for k := range m {
			if m[k] >= 0 {
				m[k] += s.lo
			}
		}
		lo, hi := m[0], m[1]
		if r.boundary && lo == s.lo && lo > 0 && isWord(text[lo-1]) && isWord(text[lo]) {
			continue // the part's start is no \b in the text
		}
		if r.semiGeneric {
			lo -= nameBefore(text[:lo]) // the prefix core leaves out
		}
		for lo < hi && text[lo] == '\n' {
			lo++
		}
		for hi > lo && text[hi-1] == '\n' {
			hi--
		}
		match := text[lo:hi]
		switch g := r.SecretGroup; {
		case g > 0 && 2*g+1 < len(m) && m[2*g] >= 0:
			lo, hi = m[2*g], m[2*g+1]
		case g == 0:
			for k := 1; 2*k+1 < len(m); k++ {
				if m[2*k] >= 0 && m[2*k+1] > m[2*k] {
					lo, hi = m[2*k], m[2*k+1]
					break
				}
			}
		}
		secret := text[lo:hi]
		if secret == "" || (r.Entropy != 0 && entropy(secret) <= r.Entropy) {
			continue
		}
		line := lineAround(text, m[0], m[1])
		// The allowlists' expressions cost tens of µs a finding: a text
		// that repeats a finding (a key in every line of a log) asks once.
		k := allowKey{r, secret, match, line}
		allow, ok := memo[k]
		if !ok {
			allow = allowed(set.Allowlists, secret, match, line) || allowed(r.Allowlists, secret, match, line)
			memo[k] = allow
		}
		if allow {
			continue
		}
		out = append(out, Finding{Rule: r.ID, Start: lo, End: hi, Placeholder: placeholder(secret)})
	}
	return out
}

// valueAfter is where a value that may be a secret ends, when the keyword
// that ends at end is followed as semiGenericOperator has it (within
// reachName bytes, one of = > : | ? , after the name) and then by at
// least least bytes of a value, or -1 when it is not. It asks only what a
// match must have, so that it never turns one away: the name's own
// characters are not checked (mailchimp's is "MailchimpSDK.initialize",
// any character in the middle).
func valueAfter(text string, end, least int) int {
	for i := end; i < len(text) && i < end+reachName; i++ {
		if strings.IndexByte("=>:|?,", text[i]) < 0 {
			continue
		}
		if v := valueFrom(text, i, least); v >= 0 {
			return v
		}
	}
	return -1
}

// reachName is how far after a keyword a rule's operator may be: 23
// bytes of name ("MailchimpSDK.initialize"), 20 more of name, 3 of quotes.
const reachName = 48

// valueFrom is valueAfter from an operator at i.
func valueFrom(text string, i, least int) int {
	// The operator: =, >, :, :=, ::=, :::=, ||, =>, ?=, ",".
	switch text[i] {
	case ':':
		for k := 0; k < 3 && i < len(text) && text[i] == ':'; k++ {
			i++
		} // an = after them is the skip's below, or the value's
	case '=':
		i++
		if i < len(text) && text[i] == '>' {
			i++
		}
	case '|':
		if i+1 >= len(text) || text[i+1] != '|' {
			return -1
		}
		i += 2
	case '?':
		if i+1 >= len(text) || text[i+1] != '=' {
			return -1
		}
		i += 2
	default: // > ,
		i++
	}
	// Up to five quotes, spaces or = (a value may begin with = too).
	best := -1
	for k := 0; k <= 5 && i <= len(text); k++ {
		if j := valueEnd(text, i); j-i >= least {
			best = max(best, j)
		}
		if i == len(text) || !(isSpace(text[i]) || strings.IndexByte("`'\"=", text[i]) >= 0) {
			break
		}
		i++
	}
	return best
}

// valueEnd is where a value that starts at i ends: at a space, a quote or
// a semicolon.
func valueEnd(text string, i int) int {
	for i < len(text) && !isSpace(text[i]) && strings.IndexByte("`'\";", text[i]) < 0 {
		i++
	}
	return i
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// nameBefore counts the name characters ([\w.-]) just before the end of
// text, at most 50: where semiGenericPrefix would start the match.
func nameBefore(text string) int {
	n := 0
	for n < 50 && n < len(text) {
		c := text[len(text)-1-n]
		if !isName(c) {
			break
		}
		n++
	}
	return n
}

func isWord(c byte) bool { return c != '.' && c != '-' && isName(c) }

func isName(c byte) bool {
	return c == '_' || c == '.' || c == '-' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func allowed(lists []*Allowlist, secret, match, line string) bool {
	for _, a := range lists {
		if a.allows(secret, match, line) {
			return true
		}
	}
	return false
}

// lineAround is the whole lines of text that hold [lo, hi), at most a
// few KiB each way.
func lineAround(text string, lo, hi int) string {
	a := max(0, lo-reachOn)
	if i := strings.LastIndexByte(text[a:lo], '\n'); i >= 0 {
		a += i + 1
	}
	b := min(len(text), hi+reachOn)
	if i := strings.IndexByte(text[hi:b], '\n'); i >= 0 {
		b = hi + i
	}
	return text[a:b]
}

// placeholder reports whether secret is a key's shape filled with one
// character (nfp_XXXX…, sk-****…, 0000…): what a person or a tool that
// redacts writes in a key's place, never a key. A secret of eight bytes
// or more of which one byte makes four fifths is one.
func placeholder(secret string) bool {
	if len(secret) < 8 {
		return false
	}
	var count [256]int
	most := 0
	for i := 0; i < len(secret); i++ {
		count[secret[i]]++
		most = max(most, count[secret[i]])
	}
	return most*5 >= len(secret)*4
}

// entropy is the Shannon entropy of s, as gitleaks measures it: over its
// runes, each one's share taken of its length in bytes.
func entropy(s string) float64 {
	var ascii [128]int
	var others map[rune]int
	for _, c := range s {
		if c < 128 {
			ascii[c]++
			continue
		}
		if others == nil {
			others = map[rune]int{}
		}
		others[c]++
	}
	var e float64
	n := float64(len(s))
	add := func(c int) {
		if c > 0 {
			p := float64(c) / n
			e -= p * math.Log2(p)
		}
	}
	for _, c := range ascii {
		add(c)
	}
	for _, c := range others {
		add(c)
	}
	return e
}
