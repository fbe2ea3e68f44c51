package main

import (
	"fmt"

	"github.com/xdev/xdev/internal/session"
)

var verifyCommand = &command{
	name: "verify", args: "[--repair] [--json] [SESSION...]",
	summary: "Check sessions for what omp would refuse or mangle (every session when none given)",
	example: `  xdev verify                    every session in the data dir (exit 3 if any problem)
  xdev verify 01a11069 s.jsonl
  xdev verify --repair s.jsonl   also write s.jsonl.repaired beside it, and say what changed
  xdev verify --json | jq '.[] | select(.kind == "torn-tail")'`,
	run: runVerify,
}

// verifyJSON is one file in `xdev verify --json`.
type verifyJSON struct {
	Path     string            `json:"path"`
	Problems []session.Problem `json:"problems"`
	Repaired string            `json:"repaired,omitempty"`
	Error    string            `json:"error,omitempty"`
}

func runVerify(e *env, c *command, args []string) error {
	flags := c.flags(e)
	store := addStoreFlags(flags)
	repair := flags.Bool("repair", false, "write a repaired copy (FILE.repaired) beside each damaged file; never in place")
	asJSON := flags.Bool("json", false, "print JSON")
	pos, err := c.parse(e, flags, args)
	if err != nil {
		return err
	}
	prog := &progress{e: e, what: "verifying"}
	var reports []session.FileReport
	if len(pos) == 0 {
		dir, err := store.existingDir()
		if err != nil {
			return err
		}
		if reports, err = session.VerifyDataDir(dir, nil, prog.update); err != nil {
			return err
		}
	} else {
		for i, a := range pos {
			p, err := store.resolve(a)
			if err != nil {
				return err
			}
			probs, err := session.Verify(p, nil)
			reports = append(reports, session.FileReport{Path: p, Problems: probs, Err: err})
			prog.update(i+1, len(pos))
		}
	}
	prog.done()
	var out []verifyJSON
	nProblems, nFiles, failed, checked := 0, 0, 0, 0
	for _, r := range reports {
		v := verifyJSON{Path: r.Path, Problems: []session.Problem{}}
		if r.Err != nil {
			v.Error = r.Err.Error()
			failed++
		} else if r.Problems != nil {
			v.Problems = r.Problems
		}
		if len(r.Problems) == 0 || r.Problems[0].Kind != session.ProblemSymlink {
			checked++
		}
		if len(r.Problems) > 0 {
			nProblems += len(r.Problems)
			nFiles++
			if *repair && r.Problems[0].Kind != session.ProblemSymlink {
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
	if *asJSON {
		if out == nil {
			out = []verifyJSON{}
		}
		if err := writeJSON(e, out); err != nil {
			return err
		}
	} else {
		for _, v := range out {
			for _, p := range v.Problems {
				fmt.Fprintln(e.stdout, p)
				if v.Repaired != "" && p.Repair != "" {
					fmt.Fprintf(e.stdout, "    repaired: %s\n", p.Repair)
				}
			}
			if v.Repaired != "" {
				fmt.Fprintf(e.stdout, "wrote %s; the original is unchanged. Review it, then: mv %s %s\n", v.Repaired, v.Repaired, v.Path)
			}
			if v.Error != "" {
				fmt.Fprintf(e.stderr, "%s: %s\n", v.Path, v.Error)
			}
		}
		if e.tty || nProblems > 0 {
			fmt.Fprintf(e.stderr, "%s checked: %s in %s\n", plural(checked, "file"), plural(nProblems, "problem"), plural(nFiles, "file"))
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
