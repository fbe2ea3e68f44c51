package main

import (
	"bufio"
	"fmt"
	"slices"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/term"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/session"
)

// showAtJSON is `xdev show --at --json`: the entries around the one asked
// for, in the order of the conversation.
type showAtJSON struct {
	ID             string        `json:"id"`
	Path           string        `json:"path"`
	Harness        string        `json:"harness"`
	At             string        `json:"at"`
	OnActiveBranch bool          `json:"onActiveBranch"`
	Entries        []showAtEntry `json:"entries"`
}

type showAtEntry struct {
	ID        string      `json:"id"`
	Type      string      `json:"type"`
	Line      int         `json:"line"`
	Timestamp string      `json:"timestamp,omitempty"`
	Message   *ai.Message `json:"message,omitempty"`
	Summary   string      `json:"summary,omitempty"`
	Target    bool        `json:"target,omitzero"`
}

// showAt prints the conversation around entry id: the around entries
// before it on its branch, and the around after it, following the
// continuation that leads to the leaf (else the latest one). Only
// entries a person reads count: messages and summaries.
func showAt(e *env, r catalog.Readable, id string, around int, full, asJSON, reveal bool) error {
	if around < 0 {
		return usagef("--around wants 0 or more")
	}
	path := r.Shown
	x, err := r.OpenIndex()
	if err != nil {
		return err
	}
	defer x.Close()
	at, ok := x.Lookup(id)
	if !ok {
		// The id as show and search print it: a number is spelt as in the file.
		for i := range x.Len() {
			if session.DisplayID(x.ID(i)) == id {
				at, ok = i, true
			}
		}
	}
	if !ok {
		return fmt.Errorf("%s: no entry with id %q (xdev show --tree lists them)", path, id)
	}
	readable := func(i int) (*session.Entry, bool) {
		switch x.Type(i) {
		case session.TypeMessage, session.TypeCompaction, session.TypeBranchSummary, session.TypeCustomMessage:
		default:
			return nil, false
		}
		en, err := x.Entry(i)
		return en, err == nil
	}
	// Before: up the path from the entry.
	path2 := x.PathTo(at)
	var before []int
	for k := len(path2) - 2; k >= 0 && len(before) < around; k-- {
		if _, ok := readable(path2[k]); ok {
			before = append(before, path2[k])
		}
	}
	slices.Reverse(before)
	// After: down the continuation toward the leaf.
	onLeafPath := make([]bool, x.Len())
	if leaf := x.Leaf(); leaf >= 0 {
		for _, i := range x.PathTo(leaf) {
			onLeafPath[i] = true
		}
	}
	tree := x.Tree()
	var after []int
	for i := at; len(after) < around; {
		kids := tree.Children(i)
		if len(kids) == 0 {
			break
		}
		next := kids[len(kids)-1]
		for _, k := range kids {
			if onLeafPath[k] {
				next = k
			}
		}
		if _, ok := readable(next); ok {
			after = append(after, next)
		}
		i = next
	}
	order := append(append(before, at), after...)
	if asJSON {
		out := showAtJSON{ID: x.Header().ID, Path: path, Harness: string(r.Harness), At: session.DisplayID(x.ID(at)), OnActiveBranch: onLeafPath[at],
			Entries: []showAtEntry{}}
		for _, i := range order {
			en, err := x.Entry(i)
			if err != nil {
				return err
			}
			j := showAtEntry{ID: session.DisplayID(en.ID), Type: en.Type, Line: r.Line(x, i), Timestamp: en.Timestamp,
				Message: en.Message(), Target: i == at}
			switch b := en.Body.(type) {
			case *session.Compaction:
				j.Summary = b.Summary
			case *session.BranchSummary:
				j.Summary = b.Summary
			}
			out.Entries = append(out.Entries, j)
		}
		return writeShownJSON(e, out, reveal)
	}
	w := bufio.NewWriter(e.Out)
	title, _ := x.Title()
	fmt.Fprintf(w, "%s\n%s · %s · entry %s, line %d", shown(orUntitled(title), reveal), x.Header().ID, shown(term.HomePath(path), reveal),
		session.DisplayID(x.ID(at)), r.Line(x, at))
	if !onLeafPath[at] {
		fmt.Fprint(w, " · on an abandoned branch")
	}
	fmt.Fprintln(w)
	cut := 0
	if e.IsTTY && !full {
		cut = 12
	}
	for _, i := range order {
		en, err := x.Entry(i)
		if err != nil {
			return err
		}
		if i == at {
			fmt.Fprintf(w, "\n▶ entry %s (line %d)", session.DisplayID(en.ID), r.Line(x, i))
		}
		switch b := en.Body.(type) {
		case *session.Message:
			printMessage(w, &b.Message, cut, reveal)
		case *session.CustomMessage:
			m := ai.Message{Role: ai.RoleCustom, Content: b.Content}
			printMessage(w, &m, cut, reveal)
		default:
			fmt.Fprintf(w, "\n── %s\n", entrySummary(en, reveal))
		}
	}
	return w.Flush()
}
