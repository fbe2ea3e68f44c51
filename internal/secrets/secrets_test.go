package secrets

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestKeywordsFindEveryOccurrence holds the keyword search to a plain one
// over random texts of the rules' keywords and their pieces.
func TestKeywordsFindEveryOccurrence(t *testing.T) {
	words := []string{"key", "ey", "api", "token", "s.", "ghp_", "akia", "aa", "keykey", "kk"}
	k := newKeywords(words)
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"k", "K", "e", "Y", "y", "a", "A", "p", "i", "s", ".", "t", "o", "n", "g", "h", "_", " ", "\n", "é"}
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		text := b.String()
		type hit struct{ w, end int }
		var got, want []hit
		k.each(text, func(w, end int) { got = append(got, hit{w, end}) })
		low := strings.ToLower(text)
		for end := 1; end <= len(text); end++ {
			for w, word := range words {
				if end >= len(word) && low[end-len(word):end] == word {
					want = append(want, hit{w, end})
				}
			}
		}
		sort := func(h []hit) {
			slices.SortFunc(h, func(a, b hit) int {
				if a.end != b.end {
					return a.end - b.end
				}
				return a.w - b.w
			})
		}
		sort(got)
		sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%q: got %v, want %v", text, got, want)
		}
	}
}

// TestMask holds the masked form: the kind, the fingerprint, one span for
// overlapping findings, every mention of a found secret, text unchanged
// when there is nothing.
func TestMask(t *testing.T) {
	const pat = "ghp_R4nd0mT0k3nV4lu3Qx9Zk2Lp8Wm5Yt7Hc1Jd"
	for _, c := range []struct{ in, want string }{
		{"nothing here", "nothing here"},
		{"GITHUB_TOKEN=" + pat, "GITHUB_TOKEN=" + Redaction("github-pat", pat)},
		{"token " + pat + " and again " + pat, "token " + Redaction("github-pat", pat) + " and again " + Redaction("github-pat", pat)},
		{"AKIAIOSFODNN7EXAMPLE is aws' own example", "AKIAIOSFODNN7EXAMPLE is aws' own example"},
		{`db = "postgres://app:Tail77@x!q@db.internal:5432/app"`, `db = "postgres://app:` + Redaction("url-password", "Tail77@x!q") + `@db.internal:5432/app"`},
		{"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
			"Authorization: Bearer " + Redaction("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")},
		{`password = "hunter2-Xq9"`, `password = "` + Redaction("password-assignment", "hunter2-Xq9") + `"`},
		{`password = "changeme"`, `password = "changeme"`},
	} {
		got, _ := Default().Mask(c.in)
		if got != c.want {
			t.Errorf("Mask(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	if a, b := Fingerprint("x"), Fingerprint("y"); a == b || len(a) != 4 {
		t.Errorf("fingerprints %q %q", a, b)
	}
}

// FuzzMask: any text is masked without a panic, and what Find reports is
// in order and inside the text.
func FuzzMask(f *testing.F) {
	f.Add("GITHUB_TOKEN=ghp_R4nd0mT0k3nV4lu3Qx9Zk2Lp8Wm5Yt7Hc1Jd6")
	f.Add("password: 'Xy7!kq2@'\nhttps://u:p4ssw0rd@h.io")
	f.Add("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----")
	f.Add(`{"cmd":"export GITHUB_TOKEN=ghp_R4nd0mT0k3nV4lu3Qx9Zk2Lp8Wm5Yt7Hc1Jd\\n"}`)
	f.Add(`{"":"pAssword,0001182AB9CXYZa7"}""`)
	f.Fuzz(func(t *testing.T, text string) {
		fs := Default().Find(text)
		for i, x := range fs {
			if x.Start < 0 || x.End > len(text) || x.Start >= x.End || (i > 0 && fs[i-1].Start > x.Start) {
				t.Fatalf("finding %+v of %d bytes out of place", x, len(text))
			}
		}
		masked, n := Default().Mask(text)
		if n == 0 && masked != text {
			t.Fatalf("nothing masked, text changed")
		}
		// Masking a JSON text's strings keeps it JSON, and text that is
		// not JSON stays text; no line is split.
		mj, _ := Default().MaskJSON([]byte(text))
		if json.Valid([]byte(text)) != json.Valid(mj) {
			t.Fatalf("MaskJSON(%q) = %q: JSON %v, was %v", text, mj, json.Valid(mj), json.Valid([]byte(text)))
		}
		if bytes.Count(mj, []byte("\n")) > strings.Count(text, "\n") {
			t.Fatalf("MaskJSON(%q) = %q: a newline more", text, mj)
		}
	})
}

// TestMaskJSON: the strings of a JSON text are masked and it stays JSON,
// escapes and all; text that is not JSON is masked as text.
func TestMaskJSON(t *testing.T) {
	const pat = "ghp_R4nd0mT0k3nV4lu3Qx9Zk2Lp8Wm5Yt7Hc1Jd"
	for _, c := range []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`},
		{`{"cmd":"export GITHUB_TOKEN=` + pat + `\nnext"}`, `{"cmd":"export GITHUB_TOKEN=` + Redaction("github-pat", pat) + `\nnext"}`},
		{`{"k":"\u0067hp_R4nd0mT0k3nV4lu3Qx9Zk2Lp8Wm5Yt7Hc1Jd"}`, `{"k":"` + Redaction("github-pat", pat) + `"}`},
		{`not json ` + pat, `not json ` + Redaction("github-pat", pat)},
	} {
		got, _ := Default().MaskJSON([]byte(c.in))
		if string(got) != c.want {
			t.Errorf("MaskJSON(%s)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

// TestMaskJSONText: a line holding JSON values one after another, or a
// value and then anything, is not one JSON text; it is masked as text,
// on its one line, and only one value with blanks around it is masked
// string by string. Every pairing of values and what follows is tried.
func TestMaskJSONText(t *testing.T) {
	const pat = "ghp_R4nd0mT0k3nV4lu3Qx9Zk2Lp8Wm5Yt7Hc1Jd"
	values := []string{
		`{"k":"` + pat + `"}`, `["` + pat + `"]`, `"` + pat + `"`, `{"a":{"b":["x","\u0067hp_R4nd0mT0k3nV4lu3Qx9Zk2Lp8Wm5Yt7Hc1Jd"]}}`,
	}
	follow := []string{"", " ", " \t\r", `""`, ` {}`, `[]`, `1`, ` null`, `x`, `}`, "\u00a0", ` "` + pat + `"`, `{"k":"` + pat + `"}`}
	for _, v := range values {
		for _, lead := range []string{"", " ", "\t"} {
			for _, f := range follow {
				text := lead + v + f
				got, n := Default().MaskJSON([]byte(text))
				// A key written with escapes is a key only to a JSON reader.
				hidden := strings.Contains(text, `\u0067`) && !json.Valid([]byte(text))
				if !hidden && (n == 0 || strings.Contains(string(got), pat)) {
					t.Errorf("MaskJSON(%q) = %q, %d masked", text, got, n)
				}
				if json.Valid([]byte(text)) != json.Valid(got) || bytes.IndexByte(got, '\n') >= 0 {
					t.Errorf("MaskJSON(%q) = %q: JSON %v, was %v", text, got, json.Valid(got), json.Valid([]byte(text)))
				}
				if again, k := Default().MaskJSON(got); k != 0 || !bytes.Equal(again, got) {
					t.Errorf("MaskJSON(%q) masked again: %q", got, again)
				}
			}
		}
	}
}
