package main

import (
	"flag"
	"fmt"
	"unicode/utf8"

	"github.com/xdev/xdev/internal/session"
)

var forkCommand = &command{
	name: "fork", args: "[--at ENTRY_ID] [--title T] [--json] SESSION",
	summary: "Copy a session into a new one (whole, or its branch up to an entry)",
	example: `  xdev fork 01a11069                     a new session with the same tree and leaf
  xdev fork --title 'Try the other fix' 01a2
  xdev fork --at 316618af 01a11069       only the branch from the root to that entry`,
	options: func() options { return &forkOptions{} },
}

var retitleCommand = &command{
	name: "retitle", args: "SESSION TITLE", freeText: true,
	summary: "Give a session a title (a manual title, which automatic ones never replace)",
	example: `  xdev retitle 01a11069 'Fix the flaky loader test'`,
	options: func() options { return &retitleOptions{} },
}

type forkJSON struct {
	ID            string `json:"id"`
	Path          string `json:"path"`
	ParentSession string `json:"parentSession"`
	Title         string `json:"title"`
	LeafID        string `json:"leafId"`
}

// forkOptions are the flags and arguments of `xdev fork`.
type forkOptions struct {
	store   *storeFlags
	sources *sourceFlags
	at      string
	title   string
	asJSON  bool
	args    []string
}

func (o *forkOptions) define(fs *flag.FlagSet) {
	o.store = addDestinationFlags(fs)
	o.sources = addSourceFlags(fs)
	fs.StringVar(&o.at, "at", "", "copy only the branch from the root to this entry")
	fs.StringVar(&o.title, "title", "", "the new session's title (default: the source's)")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
}

func (o *forkOptions) setArgs(args []string) { o.args = args }

func (o *forkOptions) run(e *env) error {
	if len(o.args) != 1 {
		return usagef("want one SESSION")
	}
	c, ref, err := resolve(e, o.store, o.sources, o.args[0])
	if err != nil {
		return err
	}
	if err := needOmpFormat(ref, "fork"); err != nil {
		return err
	}
	// A fork lands beside its source when that is in the data dir, else
	// in the data dir: never in another harness's directory.
	into := ""
	if !ref.InDataDir {
		into = c.DataDir()
	}
	var s *session.Store
	if o.at != "" {
		s, err = session.ForkBranchInto(ref.Path, into, o.at)
		if err == nil && o.title != "" {
			_, err = s.SetTitle(o.title, session.TitleManual)
		}
	} else {
		s, err = session.ForkSessionInto(ref.Path, into, o.title)
	}
	if err != nil {
		return err
	}
	defer s.Close()
	t, _ := s.Title()
	if o.title != "" {
		noteCutTitle(e, o.title, t)
	}
	h := s.Header()
	if o.asJSON {
		return writeJSON(e, forkJSON{ID: h.ID, Path: s.Path(), ParentSession: h.ParentSession, Title: t, LeafID: session.DisplayID(s.LeafID())})
	}
	if e.IsTTY {
		fmt.Fprintf(e.Out, "Forked %s into %s\n%s\n", o.args[0], h.ID, s.Path())
		return nil
	}
	fmt.Fprintln(e.Out, s.Path())
	return nil
}

// retitleOptions are the flags and arguments of `xdev retitle`.
type retitleOptions struct {
	store   *storeFlags
	sources *sourceFlags
	args    []string
}

func (o *retitleOptions) define(fs *flag.FlagSet) {
	o.store = addStoreFlags(fs)
	o.sources = addSourceFlags(fs)
}

func (o *retitleOptions) setArgs(args []string) { o.args = args }

func (o *retitleOptions) run(e *env) error {
	if len(o.args) != 2 {
		return usagef("want SESSION and TITLE")
	}
	_, ref, err := resolve(e, o.store, o.sources, o.args[0])
	if err != nil {
		return err
	}
	if err := writable(ref, "retitle"); err != nil {
		return err
	}
	s, err := session.Open(ref.Path, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err := s.SetTitle(o.args[1], session.TitleManual); err != nil {
		return err
	}
	t, _ := s.Title()
	noteCutTitle(e, o.args[1], t)
	if e.IsTTY {
		fmt.Fprintf(e.Out, "Retitled %s: %s\n", s.ID(), t)
	}
	return nil
}

// noteCutTitle says on stderr when a title was cut to fit the 256-byte
// slot: what was kept, and where the whole title is.
func noteCutTitle(e *env, asked, kept string) {
	whole := session.CleanTitle(asked)
	if kept == whole {
		return
	}
	fmt.Fprintf(e.ErrOut, "The title is cut to fit the title slot (256 bytes): kept %q, %d of %d characters. The whole title is in the session's title_change entry.\n",
		kept, utf8.RuneCountInString(kept), utf8.RuneCountInString(whole))
}
