package main

import (
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
	run: runFork,
}

var retitleCommand = &command{
	name: "retitle", args: "SESSION TITLE",
	summary: "Give a session a title (a manual title, which automatic ones never replace)",
	example: `  xdev retitle 01a11069 'Fix the flaky loader test'`,
	run:     runRetitle,
}

type forkJSON struct {
	ID            string `json:"id"`
	Path          string `json:"path"`
	ParentSession string `json:"parentSession"`
	Title         string `json:"title"`
	LeafID        string `json:"leafId"`
}

func runFork(e *env, c *command, args []string) error {
	fs := c.flags(e)
	store := addStoreFlags(fs)
	at := fs.String("at", "", "copy only the branch from the root to this entry")
	title := fs.String("title", "", "the new session's title (default: the source's)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := c.parse(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one SESSION")
	}
	src, err := store.resolve(pos[0])
	if err != nil {
		return err
	}
	var s *session.Store
	if *at != "" {
		s, err = session.ForkBranch(src, "", *at)
		if err == nil && *title != "" {
			_, err = s.SetTitle(*title, session.TitleManual)
		}
	} else {
		s, err = session.ForkSession(src, "", *title)
	}
	if err != nil {
		return err
	}
	defer s.Close()
	t, _ := s.Title()
	if *title != "" {
		noteCutTitle(e, *title, t)
	}
	h := s.Header()
	if *asJSON {
		return writeJSON(e, forkJSON{ID: h.ID, Path: s.Path(), ParentSession: h.ParentSession, Title: t, LeafID: s.LeafID()})
	}
	if e.tty {
		fmt.Fprintf(e.stdout, "Forked %s into %s\n%s\n", pos[0], h.ID, s.Path())
		return nil
	}
	fmt.Fprintln(e.stdout, s.Path())
	return nil
}

func runRetitle(e *env, c *command, args []string) error {
	fs := c.flags(e)
	store := addStoreFlags(fs)
	pos, err := c.parse(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want SESSION and TITLE")
	}
	path, err := store.resolve(pos[0])
	if err != nil {
		return err
	}
	s, err := session.Open(path, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err := s.SetTitle(pos[1], session.TitleManual); err != nil {
		return err
	}
	t, _ := s.Title()
	noteCutTitle(e, pos[1], t)
	if e.tty {
		fmt.Fprintf(e.stdout, "Retitled %s: %s\n", s.ID(), t)
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
	fmt.Fprintf(e.stderr, "The title is cut to fit the title slot (256 bytes): kept %q, %d of %d characters. The whole title is in the session's title_change entry.\n",
		kept, utf8.RuneCountInString(kept), utf8.RuneCountInString(whole))
}
