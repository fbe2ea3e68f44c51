package secrets

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
)

// Mask returns text with each secret the detector finds replaced by
// [REDACTED kind …fp]: the rule that found it and the first four hex
// digits of the secret's SHA-256, so that two mentions of one key are
// seen to be one key while nothing of the key itself is shown. A secret
// found once is masked wherever else it is in text too, though no rule
// would know it there (a token quoted alone after it was set). n is how
// many were replaced; text is returned as it is when n is 0.
//
// Overlapping findings (a GitHub token is also a generic key) are one
// span, named by the most specific rule that found a part of it.
func (d *Detector) Mask(text string) (masked string, n int) {
	fs := d.Find(text)
	if len(fs) == 0 {
		return text, 0
	}
	// Each secret's rule, and how many times it was found.
	type seenAs struct {
		rule  string
		found int
	}
	seen := map[string]*seenAs{}
	for _, f := range fs {
		if s := text[f.Start:f.End]; len(s) >= minRepeat {
			if a := seen[s]; a != nil {
				a.found++
			} else {
				seen[s] = &seenAs{f.Rule, 1}
			}
		}
	}
	for s, a := range seen {
		if strings.Count(text, s) == a.found {
			continue // found wherever it is
		}
		for at := 0; ; {
			i := strings.Index(text[at:], s)
			if i < 0 {
				break
			}
			fs = append(fs, Finding{Rule: a.rule, Start: at + i, End: at + i + len(s)})
			at += i + len(s)
		}
	}
	slices.SortFunc(fs, func(a, b Finding) int { return cmp.Compare(a.Start, b.Start) })
	var b strings.Builder
	b.Grow(len(text))
	redactions := map[string]string{} // a secret repeated is hashed once
	last := 0
	for i := 0; i < len(fs); {
		lo, hi, rule := fs[i].Start, fs[i].End, fs[i].Rule
		for i++; i < len(fs) && fs[i].Start < hi; i++ {
			hi = max(hi, fs[i].End)
			if generic[rule] && !generic[fs[i].Rule] {
				rule = fs[i].Rule
			}
		}
		b.WriteString(text[last:lo])
		r := rule + "\x00" + text[lo:hi]
		red, ok := redactions[r]
		if !ok {
			red = Redaction(rule, text[lo:hi])
			redactions[r] = red
		}
		b.WriteString(red)
		last = hi
		n++
	}
	b.WriteString(text[last:])
	return b.String(), n
}

// minRepeat is the shortest secret looked for again elsewhere in a text:
// a shorter one (a six-character password) would mask words.
const minRepeat = 8

// generic are the rules that know a secret by its name or place alone
// (gitleaks' rule for any long value named like a key, and xdev's own but
// the URL's); a span a rule of a kind also found is named by that rule.
var generic = map[string]bool{"generic-api-key": true, "password-assignment": true,
	"authorization-header": true, "bearer-token": true}

// Redaction is what Mask writes in place of secret, found by rule.
func Redaction(rule, secret string) string {
	return "[REDACTED " + rule + " …" + Fingerprint(secret) + "]"
}

// Fingerprint is four hex digits of secret's SHA-256: enough to tell a
// few keys apart in one transcript, too few to confirm a guessed one.
func Fingerprint(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:2])
}

// Mask is Default().Mask(text) without the count.
func Mask(text string) string {
	m, _ := Default().Mask(text)
	return m
}
