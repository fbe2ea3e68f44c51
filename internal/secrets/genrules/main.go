// Command genrules writes internal/secrets' rule set, gitleaks.json.gz,
// from gitleaks' default configuration as gitleaks' own library reads it
// (the version go.mod pins): every rule that looks at content, with its
// regular expression, secret group, entropy floor, keywords and
// allowlists, and the global allowlists. Rules that look only at a file's
// path, and the path and commit conditions of allowlists, are left out: a
// transcript's text has no path. Run it with go generate ./internal/secrets.
package main

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
)

// The file's shape; internal/secrets reads the same fields.
type (
	file struct {
		Gitleaks   string      `json:"gitleaks"`
		Rules      []rule      `json:"rules"`
		Allowlists []allowlist `json:"allowlists"`
	}
	rule struct {
		ID          string      `json:"id"`
		Regex       string      `json:"regex"`
		SecretGroup int         `json:"secretGroup,omitzero"`
		Entropy     float64     `json:"entropy,omitzero"`
		Keywords    []string    `json:"keywords"`
		Allowlists  []allowlist `json:"allowlists,omitempty"`
	}
	allowlist struct {
		And       bool     `json:"and,omitzero"`
		Target    string   `json:"target,omitzero"`
		Regexes   []string `json:"regexes,omitempty"`
		StopWords []string `json:"stopwords,omitempty"`
	}
)

func main() {
	out := flag.String("out", "gitleaks.json.gz", "the rule set to write")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "genrules:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return err
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return err
	}
	cfg, err := vc.Translate()
	if err != nil {
		return err
	}
	f := file{Gitleaks: version()}
	for _, r := range cfg.Rules {
		if r.Regex == nil || r.Path != nil || r.SkipReport || len(r.RequiredRules) > 0 {
			continue // a path's rule, or a composite one: nothing a text alone shows
		}
		kw := slices.Clone(r.Keywords)
		slices.Sort(kw)
		f.Rules = append(f.Rules, rule{ID: r.RuleID, Regex: r.Regex.String(), SecretGroup: r.SecretGroup,
			Entropy: r.Entropy, Keywords: kw, Allowlists: allowlists(r.Allowlists)})
	}
	slices.SortFunc(f.Rules, func(a, b rule) int { return cmp.Compare(a.ID, b.ID) })
	f.Allowlists = allowlists(cfg.Allowlists)
	b, err := json.Marshal(f, jsontext.WithIndent(" "), json.Deterministic(true))
	if err != nil {
		return err
	}
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	w.Write(b)
	if err := w.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "genrules: %d rules of gitleaks %s\n", len(f.Rules), f.Gitleaks)
	return os.WriteFile(out, z.Bytes(), 0o644)
}

// allowlists keeps what of each allowlist a text can meet: its regexes
// and stopwords. An AND list that also names paths or commits can never
// hold for a text, and is dropped.
func allowlists(in []*config.Allowlist) []allowlist {
	var out []allowlist
	for _, a := range in {
		and := a.MatchCondition == config.AllowlistMatchAnd
		if and && (len(a.Paths) > 0 || len(a.Commits) > 0) {
			continue
		}
		l := allowlist{And: and && len(a.Regexes) > 0 && len(a.StopWords) > 0, Target: a.RegexTarget}
		for _, re := range a.Regexes {
			l.Regexes = append(l.Regexes, re.String())
		}
		l.StopWords = slices.Clone(a.StopWords)
		slices.Sort(l.StopWords)
		if len(l.Regexes) == 0 && len(l.StopWords) == 0 {
			continue
		}
		out = append(out, l)
	}
	return out
}

// version is the gitleaks module's version this program was built with.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/zricethezav/gitleaks/v8" {
				return strings.TrimPrefix(d.Version, "v")
			}
		}
	}
	return "unknown"
}
