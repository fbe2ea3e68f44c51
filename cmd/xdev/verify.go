package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/xdev/xdev/internal/catalog"

	"github.com/xdev/xdev/internal/term"

	"github.com/xdev/xdev/internal/session"
)

var verifyCommand = &command{
	name: "verify", namesSessions: true, args: "[--repair] [--from HARNESS] [--json] [SESSION...]",
	summary: "Check sessions for what omp would refuse or mangle (every session when none given)",
	example: `  xdev verify                    every session here (exit 3 if any problem)
  xdev verify --from xdev        the data dir's only
  xdev verify 01a11069 s.jsonl
  xdev verify --repair s.jsonl   also write s.jsonl.repaired beside it, and say what changed
  xdev verify --json | jq '.[] | select(.kind == "torn-tail")'`,
	options: func() options { return &verifyOptions{} },
}

// verifyJSON is one file in `xdev verify --json`.
type verifyJSON struct {
	Path     string            `json:"path"`
	Problems []session.Problem `json:"problems"`
	Repaired string            `json:"repaired,omitempty"`
	Removed  bool              `json:"removed,omitzero"` // a leftover --repair removed
	Error    string            `json:"error,omitempty"`
}

// verifyOptions are the flags and arguments of `xdev verify`.
type verifyOptions struct {
	store   *storeFlags
	sources *sourceFlags
	from    string
	repair  bool
	asJSON  bool
	args    []string
}

func (o *verifyOptions) define(fs *flag.FlagSet) {
	o.store = addStoreFlags(fs)
	o.sources = addSourceFlags(fs)
	fs.BoolVar(&o.repair, "repair", false, "write a repaired copy (FILE.repaired) beside each damaged file; never in place")
	fs.StringVar(&o.from, "from", "", "whose sessions (default: every harness's here): "+catalog.HarnessChoices())
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
}

// verifyScope checks the sessions of the harnesses --from chooses (every
// one here by default). A data dir omp resumes (xdev's, omp's), or an
// omp-format one --from names alone (pi's), is checked whole, file by
// file; another harness's transcripts are checked as its listing reads
// them (each one's head and tail), so that one xdev cannot read is named.
// Only the data dir the flags chose takes repaired copies. nothing says
// where xdev looked when it found no sessions.
func (o *verifyOptions) verifyScope(c *catalog.Catalog, noRepair map[string]error, progress func(done, total int)) (reports []session.FileReport, nothing string, err error) {
	hs, err := c.Scope(o.from)
	if err != nil {
		return nil, "", usagef("--from is %s, not %q", catalog.HarnessChoices(), o.from)
	}
	if len(hs) == 1 {
		if _, here := c.Where(hs[0]); !here {
			return nil, "", notHere(c, hs[0])
		}
	}
	readOnly := errors.New("it lies in another tool's directory, where xdev writes nothing")
	found := false
	for _, h := range hs {
		if _, here := c.Where(h); !here {
			continue
		}
		found = true
		if dir := c.DataDirOf(h); dir != "" && (h.OmpResumes() || len(hs) == 1) {
			r, err := session.VerifyDataDir(dir, nil, progress)
			if err != nil {
				return nil, "", err
			}
			if dir != c.DataDir() {
				for _, f := range r {
					noRepair[f.Path] = readOnly
				}
			}
			reports = append(reports, r...)
			continue
		}
		rows, err := c.ListHarness(h, catalog.ListOptions{Subagents: true})
		if err != nil {
			where, _ := c.Where(h)
			reports = append(reports, session.FileReport{Path: where, Err: err})
			continue
		}
		for _, r := range rows {
			reports = append(reports, session.FileReport{Path: r.Path, Err: r.Err})
			noRepair[r.Path] = readOnly
		}
	}
	if !found {
		nothing = "No sessions here. " + lookedIn(c, hs)
	}
	return reports, nothing, nil
}

func (o *verifyOptions) setArgs(args []string) { o.args = args }

func (o *verifyOptions) run(e *env) error {
	prog := &term.Progress{IO: e.IOStreams, What: "verifying"}
	var reports []session.FileReport
	// noRepair: files that lie where xdev writes nothing (another
	// harness's directory), so no repaired copy goes beside them.
	noRepair := map[string]error{}
	if len(o.args) == 0 {
		c, err := o.sources.catalog(e, o.store)
		if err != nil {
			return err
		}
		var nothing string
		if reports, nothing, err = o.verifyScope(c, noRepair, prog.Update); err != nil {
			return err
		}
		if nothing != "" && !o.asJSON {
			fmt.Fprintln(e.ErrOut, nothing)
		}
	} else {
		for i, a := range o.args {
			_, ref, err := resolve(e, o.store, o.sources, a)
			if session.SessionPath(a) {
				ref.Path = a // problems name the file as it was given
			}
			if err != nil && ref.Path == "" {
				return err
			}
			if err != nil {
				// A file that is there but cannot be checked is reported
				// with the others, and counted.
				reports = append(reports, session.FileReport{Path: ref.Path, Err: err})
				continue
			}
			if err := needOmpFormat(ref, "verify"); err != nil {
				reports = append(reports, session.FileReport{Path: ref.Path, Err: err})
				continue
			}
			probs, err := session.Verify(ref.Path, nil)
			reports = append(reports, session.FileReport{Path: ref.Path, Problems: probs, Err: err})
			if err := writable(ref, "verify --repair"); err != nil {
				noRepair[ref.Path] = err
			}
			prog.Update(i+1, len(o.args))
		}
	}
	prog.Done()
	var out []verifyJSON
	nProblems, nFiles, failed, checked, unreadable := 0, 0, 0, 0, 0
	for _, r := range reports {
		v := verifyJSON{Path: r.Path, Problems: []session.Problem{}}
		if r.Err != nil {
			v.Error = r.Err.Error()
			failed++
			unreadable++
		} else if r.Problems != nil {
			v.Problems = r.Problems
		}
		// A symlink or a leftover is reported, not checked as a session.
		notSession := len(r.Problems) > 0 && (r.Problems[0].Kind == session.ProblemSymlink || r.Problems[0].Kind == session.ProblemLeftover)
		if r.Err == nil && !notSession {
			checked++
		}
		if len(r.Problems) > 0 {
			nProblems += len(r.Problems)
			nFiles++
			if o.repair && r.Problems[0].Kind == session.ProblemLeftover {
				if err := session.RemoveLeftover(r.Path); err != nil {
					v.Error = "repair: " + err.Error()
					failed++
				} else {
					v.Removed = true
				}
			} else if o.repair && noRepair[r.Path] != nil {
				v.Error = "no repaired copy: " + noRepair[r.Path].Error()
				failed++
			} else if o.repair && !notSession {
				changes, err := session.Repair(r.Path, "")
				switch {
				case err != nil:
					v.Error = "repair: " + err.Error()
					failed++
				case len(changes) > 0:
					v.Repaired = session.RepairedPath(r.Path)
				}
			}
		}
		out = append(out, v)
	}
	if o.asJSON {
		if out == nil {
			out = []verifyJSON{}
		}
		if err := writeJSON(e, out); err != nil {
			return err
		}
	} else {
		for _, v := range out {
			for _, p := range v.Problems {
				fmt.Fprintln(e.Out, p)
				if v.Repaired != "" && p.Repair != "" {
					fmt.Fprintf(e.Out, "    repaired: %s\n", p.Repair)
				}
			}
			if v.Repaired != "" {
				fmt.Fprintf(e.Out, "wrote %s; the original is unchanged. Review it, then: mv %s %s\n", v.Repaired, v.Repaired, v.Path)
			}
			if v.Removed {
				fmt.Fprintf(e.Out, "removed %s\n", v.Path)
			}
			if v.Error != "" {
				fmt.Fprintf(e.ErrOut, "%s: %s\n", v.Path, v.Error)
			}
		}
		if e.IsTTY || nProblems > 0 || failed > 0 {
			unread := ""
			if unreadable > 0 {
				unread = fmt.Sprintf("; %s could not be checked", term.Plural(unreadable, "file"))
			}
			fmt.Fprintf(e.ErrOut, "%s checked: %s in %s%s\n", term.Plural(checked, "file"), term.Plural(nProblems, "problem"), term.Plural(nFiles, "file"), unread)
		}
	}
	switch {
	case failed > 0:
		return exitCodeError{code: exitError}
	case nProblems > 0:
		return errProblems
	}
	return nil
}
