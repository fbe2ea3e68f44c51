package main

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/xdev/xdev/internal/session"
)

func init() {
	register(&command{
		name: "verify", args: "[--repair] [--json] [SESSION...]",
		summary: "Check sessions for what omp would refuse or mangle (every session when none given)",
		example: `  xdev verify                    every session in the data dir (exit 3 if any problem)
  xdev verify 01a11069 s.jsonl
  xdev verify --repair s.jsonl   also write s.jsonl.repaired beside it, and say what changed
  xdev verify --json | jq '.[] | select(.kind == "torn-tail")'`,
		run: runVerify,
	})
}

// verifyJSON is one file in `xdev verify --json`.
type verifyJSON struct {
	Path     string            `json:"path"`
	Problems []session.Problem `json:"problems"`
	Repaired string            `json:"repaired,omitempty"`
	Error    string            `json:"error,omitempty"`
}

func runVerify(e *env, args []string) error {
	c := commands["verify"]
	flags := c.flags(e)
	store := addStoreFlags(flags)
	repair := flags.Bool("repair", false, "write a repaired copy (FILE.repaired) beside each damaged file; never in place")
	asJSON := flags.Bool("json", false, "print JSON")
	pos, err := c.parse(e, flags, args)
	if err != nil {
		return err
	}
	var files []string
	var links []session.Problem
	if len(pos) == 0 {
		dir, err := store.existingDir()
		if err != nil {
			return err
		}
		root := session.SessionsDir(dir)
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch {
			case d.Type()&fs.ModeSymlink != 0:
				links = append(links, session.Problem{Path: p, Kind: session.ProblemSymlink,
					Detail: "a symlink in the data dir; not followed (it could lead anywhere)"})
			case !d.IsDir() && strings.HasSuffix(p, ".jsonl"):
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("reading %s: %w", root, err)
		}
	} else {
		for _, a := range pos {
			p, err := store.resolve(a)
			if err != nil {
				return err
			}
			files = append(files, p)
		}
	}
	prog := &progress{e: e, what: "verifying"}
	var out []verifyJSON
	nProblems, nFiles, failed := 0, 0, 0
	for i, f := range files {
		prog.update(i+1, len(files))
		v := verifyJSON{Path: f, Problems: []session.Problem{}}
		probs, err := session.Verify(f, nil)
		if err != nil {
			v.Error = err.Error()
			failed++
		} else {
			v.Problems = probs
		}
		if len(probs) > 0 {
			nProblems += len(probs)
			nFiles++
			if *repair {
				changes, err := session.Repair(f, "")
				switch {
				case err != nil:
					v.Error = "repair: " + err.Error()
					failed++
				case len(changes) > 0:
					v.Repaired = f + ".repaired"
				}
			}
		}
		out = append(out, v)
	}
	prog.done()
	for _, l := range links {
		out = append(out, verifyJSON{Path: l.Path, Problems: []session.Problem{l}})
		nProblems++
		nFiles++
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
			fmt.Fprintf(e.stderr, "%s checked: %s in %s\n", plural(len(files), "file"), plural(nProblems, "problem"), plural(nFiles, "file"))
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
