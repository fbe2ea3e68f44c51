package main

import (
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/term"
)

var secretsCommand = &command{
	name: "secrets", namesSessions: true, args: "[--cwd DIR | --here] [--from HARNESS] [--since WHEN] [--until WHEN] [--session SESSION] [--kind RULE] [--json]",
	summary: "List the keys, tokens and passwords in every session, masked (exit 3 when any)",
	example: `  xdev secrets                  every session of every harness here
  xdev secrets --here           this directory's sessions
  xdev secrets --since 7d       what the last week's entries hold
  xdev secrets --from claude --json | jq -r '.[].kind' | sort | uniq -c`,
	options: func() options { return &secretsOptions{} },
}

// secretJSON is one secret in `xdev secrets --json`: never its value.
type secretJSON struct {
	Kind        string    `json:"kind"`
	Harness     string    `json:"harness"`
	SessionID   string    `json:"sessionId"`
	Path        string    `json:"path"`
	Entry       string    `json:"entry"`
	Line        int       `json:"line"`
	Timestamp   *jsonTime `json:"timestamp,omitempty"`
	Masked      string    `json:"masked"`
	Fingerprint string    `json:"fingerprint"`
}

// secretsOptions are the flags of `xdev secrets`.
type secretsOptions struct {
	store     *storeFlags
	sources   *sourceFlags
	from      string
	cwd       string
	here      bool
	since     string
	until     string
	session   string
	kind      string
	subagents bool
	noCache   bool
	asJSON    bool
	args      []string
}

func (o *secretsOptions) define(fs *flag.FlagSet) {
	o.store = addStoreFlags(fs)
	o.sources = addSourceFlags(fs)
	fs.StringVar(&o.from, "from", "", "whose sessions (default: every harness's here): "+catalog.HarnessChoices())
	fs.StringVar(&o.cwd, "cwd", "", "only this directory's sessions")
	fs.BoolVar(&o.here, "here", false, "only the current directory's sessions")
	fs.StringVar(&o.since, "since", "", "only entries from this time on: 7d, 12h, 2w, 2026-11-01")
	fs.StringVar(&o.until, "until", "", "only entries before this time (same forms)")
	fs.StringVar(&o.session, "session", "", "only this SESSION")
	fs.StringVar(&o.kind, "kind", "", "only secrets found by this rule (a KIND the list shows)")
	fs.BoolVar(&o.subagents, "subagents", true, "read subagent transcripts too")
	fs.BoolVar(&o.noCache, "no-cache", false, "read every session, not what the cache kept of those unchanged")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
}

func (o *secretsOptions) setArgs(args []string) { o.args = args }

func (o *secretsOptions) run(e *env) error {
	if len(o.args) != 0 {
		return usagef("unexpected argument %q", o.args[0])
	}
	cwd := o.cwd
	if o.here {
		if cwd != "" {
			return usagef("--here and --cwd both choose a directory; give one")
		}
		var err error
		if cwd, err = e.Getwd(); err != nil {
			return err
		}
	}
	var opts catalog.SecretsOptions
	var err error
	now := e.Now()
	if opts.Since, err = parseWhen(o.since, now); err != nil {
		return usagef("--since: %v", err)
	}
	if opts.Until, err = parseWhen(o.until, now); err != nil {
		return usagef("--until: %v", err)
	}
	opts.Kind, opts.Cache = o.kind, !o.noCache
	c, err := o.sources.catalog(e, o.store)
	if err != nil {
		return err
	}
	hs, err := c.Scope(o.from)
	if err != nil {
		return usagef("--from is %s, not %q", catalog.HarnessChoices(), o.from)
	}
	if len(hs) == 1 {
		if _, here := c.Where(hs[0]); !here && o.from != "" {
			return notHere(c, hs[0])
		}
	}
	ctx, cancel := interruptible()
	defer cancel()
	rows, failed := catalog.ListPlaces(ctx, c.Places(hs), catalog.ListOptions{Subagents: o.subagents, Cwd: cwd})
	for h, err := range failed {
		fmt.Fprintf(e.ErrOut, "xdev secrets: %s: %v\n", h, err)
	}
	opts.Whole = cwd == "" && o.from == "" && o.session == "" && o.subagents
	if o.session != "" {
		if rows, err = oneSession(c, rows, o.session); err != nil {
			return err
		}
	}
	var found []catalog.Secret
	unread := 0
	_, err = c.Secrets(ctx, rows, opts, func(s catalog.Secret) { found = append(found, s) }, func(r catalog.Row, err error) {
		unread++
		fmt.Fprintf(e.ErrOut, "xdev secrets: %s: %v\n", term.Escape(term.HomePath(r.Path)), err)
	})
	if err != nil {
		return err
	}
	if o.asJSON {
		out := make([]secretJSON, 0, len(found))
		for _, s := range found {
			j := secretJSON{Kind: s.Kind, Harness: string(s.Harness), SessionID: s.SessionID, Path: s.Path, Entry: s.Entry,
				Line: s.Line, Masked: s.Masked, Fingerprint: s.Fingerprint}
			if !s.Time.IsZero() {
				t := jsonTime(s.Time)
				j.Timestamp = &t
			}
			out = append(out, j)
		}
		if err := writeJSON(e, out); err != nil {
			return err
		}
	} else if len(found) > 0 {
		ids := make([]string, len(found))
		for i, s := range found {
			ids[i] = s.SessionID
		}
		ids = shortIDs(ids)
		w := tabwriter.NewWriter(e.Out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "KIND\tFROM\tSESSION\tENTRY\tLINE\tTIME\tMASKED")
		for i, s := range found {
			when := "-"
			if !s.Time.IsZero() {
				when = s.Time.UTC().Format("2006-01-02 15:04")
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", s.Kind, s.Harness, term.Escape(ids[i]), term.Escape(term.Fit(s.Entry, 12)),
				s.Line, when, s.Masked)
		}
		w.Flush()
		fmt.Fprintf(e.ErrOut, "%s in %s read (%s)\n", term.Plural(len(found), "secret"), term.Plural(len(rows), "session"),
			"every way out of xdev masks them; show --reveal and export --reveal print them")
	} else {
		fmt.Fprintf(e.ErrOut, "No secrets in %s.\n", term.Plural(len(rows), "session"))
	}
	if len(found) > 0 {
		return errProblems
	}
	if unread > 0 || len(failed) > 0 {
		return exitCodeError{code: exitError}
	}
	return nil
}

// oneSession is the row of rows that names the session arg names.
func oneSession(c *catalog.Catalog, rows []catalog.Row, arg string) ([]catalog.Row, error) {
	ref, err := c.Resolve(arg)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.Harness == ref.Harness && r.Path == ref.Path && (ref.ID == "" || r.ID == ref.ID) {
			return []catalog.Row{r}, nil
		}
	}
	return nil, fmt.Errorf("%s is a %s session, not among those listed here (--from, --cwd)", arg, ref.Harness.Name())
}
