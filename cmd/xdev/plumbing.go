package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"

	"github.com/xdev/xdev/internal/session"
)

// The plumbing commands let any program make xdev write, through the same
// store code paths as the library. The interop suite drives them.

var newCommand = &command{
	name: "new", args: "[--cwd DIR] [--title T] [--data-dir D]",
	summary: "Create a session for a directory and print its path",
	example: "  xdev new --cwd ~/src/app\n  xdev new --title 'Fix the build' --data-dir /tmp/agent",
	options: func() options { return &newOptions{} },
}

var appendCommand = &command{
	name: "append", args: "FILE < entries.jsonl",
	summary: "Append entries (JSON lines on stdin) to a session",
	example: "  echo '{\"type\":\"label\",\"targetId\":\"1a2b3c4d\",\"label\":\"good\"}' | xdev append s.jsonl",
	options: func() options { return &appendOptions{} },
}

var titleCommand = &command{
	name: "title", args: "FILE TITLE [--auto]", freeText: true,
	summary: "Retitle a session (a manual title unless --auto)",
	example: "  xdev title s.jsonl 'Refactor the loader'",
	options: func() options { return &titleOptions{} },
}

var branchCommand = &command{
	name: "branch", args: "FILE ENTRY_ID",
	summary: "Move a session's leaf to an entry (writes a branch marker)",
	example: "  xdev branch s.jsonl 1a2b3c4d",
	options: func() options { return &branchOptions{} },
}

// newOptions are the flags and arguments of `xdev new`.
type newOptions struct {
	store *storeFlags
	cwd   string
	title string
	args  []string
}

func (o *newOptions) define(fs *flag.FlagSet) {
	o.store = addStoreFlags(fs)
	fs.StringVar(&o.cwd, "cwd", "", "the project directory (default: the current one)")
	fs.StringVar(&o.title, "title", "", "a manual title")
}

func (o *newOptions) setArgs(args []string) { o.args = args }

func (o *newOptions) run(e *env) error {
	if len(o.args) != 0 {
		return usagef("unexpected argument %q", o.args[0])
	}
	dir, err := o.store.dir()
	if err != nil {
		return err
	}
	if o.cwd == "" {
		if o.cwd, err = e.Getwd(); err != nil {
			return err
		}
	}
	path, id, err := session.NewSessionPath(dir, o.cwd)
	if err != nil {
		return err
	}
	opts := session.NewOptions{Cwd: o.cwd, ID: id}
	if o.title != "" {
		opts.Title, opts.TitleSource = o.title, session.TitleManual
	}
	if _, err := session.Create(path, opts); err != nil {
		return err
	}
	fmt.Fprintln(e.Out, path)
	return nil
}

// appendOptions are the flags and arguments of `xdev append`.
type appendOptions struct {
	args []string
}

func (o *appendOptions) define(fs *flag.FlagSet) {
}

func (o *appendOptions) setArgs(args []string) { o.args = args }

func (o *appendOptions) run(e *env) error {
	if len(o.args) != 1 {
		return usagef("want one FILE")
	}
	// Every line is read and checked before anything is written: the
	// entries go in together or not at all.
	var objs [][]byte
	var lineNums []int
	sc := bufio.NewScanner(e.In)
	sc.Buffer(nil, session.DefaultMaxLineBytes)
	for n := 1; sc.Scan(); n++ {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			objs = append(objs, bytes.Clone(line))
			lineNums = append(lineNums, n)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading stdin: %w", err)
	}
	if len(objs) == 0 {
		return nil
	}
	s, err := session.Open(o.args[0], nil)
	if err != nil {
		return err
	}
	defer s.Close()
	entries, err := s.AppendJSONLines(objs)
	var ae *session.AppendError
	if errors.As(err, &ae) {
		return fmt.Errorf("stdin line %d: %w; nothing was appended", lineNums[ae.Index], ae.Err)
	}
	if err != nil {
		return err
	}
	for _, en := range entries {
		fmt.Fprintln(e.Out, en.ID)
	}
	return nil
}

// titleOptions are the flags and arguments of `xdev title`.
type titleOptions struct {
	auto bool
	args []string
}

func (o *titleOptions) define(fs *flag.FlagSet) {
	fs.BoolVar(&o.auto, "auto", false, "record the title as generated, not chosen by a person")
}

func (o *titleOptions) setArgs(args []string) { o.args = args }

func (o *titleOptions) run(e *env) error {
	if len(o.args) != 2 {
		return usagef("want FILE and TITLE")
	}
	s, err := session.Open(o.args[0], nil)
	if err != nil {
		return err
	}
	defer s.Close()
	src := session.TitleManual
	if o.auto {
		src = session.TitleAuto
	}
	changed, err := s.SetTitle(o.args[1], src)
	if err != nil {
		return err
	}
	if !changed {
		fmt.Fprintln(e.ErrOut, "kept the manual title; an automatic title does not replace it")
		return nil
	}
	t, _ := s.Title()
	noteCutTitle(e, o.args[1], t)
	return nil
}

// branchOptions are the flags and arguments of `xdev branch`.
type branchOptions struct {
	args []string
}

func (o *branchOptions) define(fs *flag.FlagSet) {
}

func (o *branchOptions) setArgs(args []string) { o.args = args }

func (o *branchOptions) run(e *env) error {
	if len(o.args) != 2 {
		return usagef("want FILE and ENTRY_ID")
	}
	s, err := session.Open(o.args[0], nil)
	if err != nil {
		return err
	}
	defer s.Close()
	m, err := s.Branch(o.args[1])
	if err != nil {
		return err
	}
	fmt.Fprintln(e.Out, m.ID)
	return nil
}
