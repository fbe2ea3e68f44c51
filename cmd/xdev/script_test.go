package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	_ "github.com/xdev/xdev/internal/testscale" // GORACE for the processes the scripts start

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/xdev/xdev/internal/pgtest"
	"github.com/xdev/xdev/internal/realfixtures"
)

// TestMain lets the scripts run "xdev" as a real process: testscript
// re-executes this test binary as the command.
func TestMain(m *testing.M) {
	testscript.Main(pgMain{m}, map[string]func(){
		"xdev": func() { os.Exit(xdevMain()) },
	})
}

// pgMain runs the tests, then stops the PostgreSQL server the scripts'
// pgdb command started, if it did.
type pgMain struct{ m *testing.M }

func (p pgMain) Run() int {
	defer func() {
		if built.dir != "" {
			os.RemoveAll(built.dir)
		}
	}()
	return pgtest.Main(p.m)
}

// TestScripts runs testdata/script/*.txtar: every command, its --json
// output and its errors. Each script starts with $XDEV_DATA_DIR holding a
// copy of the sessions real omp wrote (internal/session/testdata/omp).
//
// The scripts may use "exitcode N cmd args..." to check an exact status.
func TestScripts(t *testing.T) {
	corpus, err := filepath.Abs("../../internal/session/testdata/omp")
	if err != nil {
		t.Fatal(err)
	}
	real, _ := realfixtures.Find()
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			agent := filepath.Join(e.WorkDir, "agent")
			if err := os.CopyFS(agent, os.DirFS(corpus)); err != nil {
				return err
			}
			e.Setenv("XDEV_DATA_DIR", agent)
			e.Setenv("HOME", filepath.Join(e.WorkDir, "home"))
			e.Setenv("XDEV_FORCE_TTY", "0")
			e.Setenv("REAL", real)
			e.Setenv("GORACE", os.Getenv("GORACE")) // a quick exit under -race (testscale)
			return nil
		},
		// [real] holds when ../shared/fixtures/real, the real sessions of
		// other harnesses nobody here wrote, is there to read.
		//
		// [pg] holds when a PostgreSQL server can run (internal/pgtest);
		// under CI it must.
		Condition: func(cond string) (bool, error) {
			if cond == "pg" {
				_, err := pgtest.Shared()
				if errors.Is(err, pgtest.ErrNoServer) {
					return false, nil
				}
				return err == nil, err
			}
			if cond != "real" {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			if _, ok := realfixtures.Find(); !ok {
				if os.Getenv("CI") != "" {
					return false, fmt.Errorf("the real fixtures are missing at %s; CI must have them", real)
				}
				return false, nil
			}
			return true, nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// pgdb sets $DB to the URL of a new, empty database on a
			// throwaway PostgreSQL server (internal/pgtest). A script
			// that uses it starts with [!pg] skip.
			"pgdb": func(ts *testscript.TestScript, neg bool, args []string) {
				url, err := pgtest.NewDatabase()
				ts.Check(err)
				ts.Setenv("DB", url)
			},
			"exitcode": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) < 2 {
					ts.Fatalf("usage: exitcode N command [args...]")
				}
				want, err := strconv.Atoi(args[0])
				ts.Check(err)
				code := 0
				if err := ts.Exec(args[1], args[2:]...); err != nil {
					var ee *exec.ExitError
					if !errors.As(err, &ee) {
						ts.Fatalf("%v", err)
					}
					code = ee.ExitCode()
				}
				if code != want {
					ts.Fatalf("%s exited %d, want %d", args[1], code, want)
				}
			},
		},
	})
}
