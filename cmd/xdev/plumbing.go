package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/xdev/xdev/internal/session"
)

// The plumbing commands let any program make xdev write, through the same
// store code paths as the library. The interop suite drives them.

var newCommand = &command{
	name: "new", args: "[--cwd DIR] [--title T] [--data-dir D]",
	summary: "Create a session for a directory and print its path",
	example: "  xdev new --cwd ~/src/app\n  xdev new --title 'Fix the build' --data-dir /tmp/agent",
	run:     runNew,
}

var appendCommand = &command{
	name: "append", args: "FILE < entries.jsonl",
	summary: "Append entries (JSON lines on stdin) to a session",
	example: "  echo '{\"type\":\"label\",\"targetId\":\"1a2b3c4d\",\"label\":\"good\"}' | xdev append s.jsonl",
	run:     runAppend,
}

var titleCommand = &command{
	name: "title", args: "FILE TITLE [--auto]",
	summary: "Retitle a session (a manual title unless --auto)",
	example: "  xdev title s.jsonl 'Refactor the loader'",
	run:     runTitle,
}

var branchCommand = &command{
	name: "branch", args: "FILE ENTRY_ID",
	summary: "Move a session's leaf to an entry (writes a branch marker)",
	example: "  xdev branch s.jsonl 1a2b3c4d",
	run:     runBranch,
}

func runNew(e *env, c *command, args []string) error {
	fs := c.flags(e)
	store := addStoreFlags(fs)
	cwd := fs.String("cwd", "", "the project directory (default: the current one)")
	title := fs.String("title", "", "a manual title")
	pos, err := c.parse(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	dir, err := store.dir()
	if err != nil {
		return err
	}
	if *cwd == "" {
		if *cwd, err = os.Getwd(); err != nil {
			return err
		}
	}
	path, id, err := session.NewSessionPath(dir, *cwd)
	if err != nil {
		return err
	}
	opts := session.NewOptions{Cwd: *cwd, ID: id}
	if *title != "" {
		opts.Title, opts.TitleSource = *title, session.TitleManual
	}
	if _, err := session.Create(path, opts); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, path)
	return nil
}

func runAppend(e *env, c *command, args []string) error {
	fs := c.flags(e)
	pos, err := c.parse(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one FILE")
	}
	// Every line is read and checked before anything is written: the
	// entries go in together or not at all.
	var objs [][]byte
	var lineNums []int
	sc := bufio.NewScanner(e.stdin)
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
	s, err := session.Open(pos[0], nil)
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
		fmt.Fprintln(e.stdout, en.ID)
	}
	return nil
}

func runTitle(e *env, c *command, args []string) error {
	fs := c.flags(e)
	auto := fs.Bool("auto", false, "record the title as generated, not chosen by a person")
	pos, err := c.parse(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want FILE and TITLE")
	}
	s, err := session.Open(pos[0], nil)
	if err != nil {
		return err
	}
	defer s.Close()
	src := session.TitleManual
	if *auto {
		src = session.TitleAuto
	}
	changed, err := s.SetTitle(pos[1], src)
	if err != nil {
		return err
	}
	if !changed {
		fmt.Fprintln(e.stderr, "kept the manual title; an automatic title does not replace it")
		return nil
	}
	t, _ := s.Title()
	noteCutTitle(e, pos[1], t)
	return nil
}

func runBranch(e *env, c *command, args []string) error {
	fs := c.flags(e)
	pos, err := c.parse(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want FILE and ENTRY_ID")
	}
	s, err := session.Open(pos[0], nil)
	if err != nil {
		return err
	}
	defer s.Close()
	m, err := s.Branch(pos[1])
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, m.ID)
	return nil
}
