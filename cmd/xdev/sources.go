package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/xdev/xdev/internal/catalog"
)

// sourceFlags choose where the other harnesses keep their sessions: a
// --<harness>-dir flag for each harness read in place (catalog.Foreign).
// --project names the directories of projects whose own sessions
// (Crush's, Aider's: they keep them in the project) are read beside
// those xdev finds (see catalog's projects.go).
type sourceFlags struct {
	dirs     map[catalog.Harness]*string
	projects dirList
}

func addSourceFlags(fs *flag.FlagSet) *sourceFlags {
	f := &sourceFlags{dirs: map[catalog.Harness]*string{}}
	for _, h := range catalog.Foreign {
		name, help := h.RootFlag()
		f.dirs[h] = fs.String(name, "", help)
	}
	fs.Var(&f.projects, "project", "also read the sessions a harness keeps in the project at `DIR` (Crush's .crush/, Aider's chat history; repeatable; default $XDEV_PROJECTS, a list of directories)")
	return f
}

// projectDirs are the directories --project names (the catalog reads
// $XDEV_PROJECTS when none is).
func (f *sourceFlags) projectDirs() []string { return f.projects }

// rootFlags are the roots the flags move from their defaults.
func (f *sourceFlags) rootFlags() map[catalog.Harness]string {
	out := map[catalog.Harness]string{}
	for h, dir := range f.dirs {
		if *dir != "" {
			out[h] = *dir
		}
	}
	return out
}

// roots are the other harnesses' dirs the flags choose.
func (f *sourceFlags) roots() []string {
	c, err := catalog.New(catalog.Config{Roots: f.rootFlags()})
	if err != nil {
		return nil
	}
	return c.Roots()
}

// catalog is the catalog of the places these flags and store choose (the
// data dir, and the other harnesses' roots) for a command that runs
// once: it lists each harness once (catalog.Config.ListOnce).
func (f *sourceFlags) catalog(e *env, store *storeFlags) (*catalog.Catalog, error) {
	cfg, err := f.config(e, store)
	if err != nil {
		return nil, err
	}
	cfg.ListOnce = true
	return catalog.New(cfg)
}

// config is the catalog's configuration these flags and store choose.
func (f *sourceFlags) config(e *env, store *storeFlags) (catalog.Config, error) {
	dir, err := store.dir()
	if err != nil {
		return catalog.Config{}, err
	}
	if store.explicit() {
		if _, err := store.existingDir(); err != nil {
			return catalog.Config{}, err
		}
	}
	cwd, _ := e.Getwd()
	h := catalog.Xdev
	if store.omp {
		h = catalog.Omp
	}
	return catalog.Config{DataDir: dir, DataDirHarness: h, Explicit: store.explicit(), Cwd: cwd, Roots: f.rootFlags(),
		Projects: f.projectDirs()}, nil
}

// resolve finds the session SESSION names, by the catalog's one rule
// (see package catalog): a path, else a session of the data dir, else,
// unless a flag chose the data dir, another harness's.
func resolve(e *env, store *storeFlags, sources *sourceFlags, arg string) (*catalog.Catalog, catalog.Ref, error) {
	if arg == "" {
		return nil, catalog.Ref{}, usagef("%v", catalog.ErrEmptyArgument)
	}
	c, err := sources.catalog(e, store)
	if err != nil {
		return nil, catalog.Ref{}, err
	}
	ref, err := c.Resolve(arg)
	return c, ref, err
}

// resolveReadable finds the session SESSION names for show and export,
// as the catalog opens it for a reader (catalog.Catalog.Open).
func resolveReadable(e *env, store *storeFlags, sources *sourceFlags, arg string) (catalog.Readable, error) {
	c, ref, err := resolve(e, store, sources, arg)
	if err != nil {
		return catalog.Readable{}, err
	}
	ctx, cancel := interruptible()
	defer cancel()
	return c.Open(ctx, ref)
}

// withReadable finds the session arg names, in the database --db names
// or else by the catalog's rule, and runs fn with it as a reader opens
// it; a database stays connected until fn returns. The one place a
// command that reads one session chooses between the two.
func withReadable(e *env, store *storeFlags, sources *sourceFlags, db *dbFlags, arg string, fn func(r catalog.Readable) error) error {
	if db.on() {
		return db.with(e, arg, func(ctx context.Context, d *catalog.StoredSession) error {
			r, err := d.Readable(ctx)
			if err != nil {
				return err
			}
			return fn(r)
		})
	}
	r, err := resolveReadable(e, store, sources, arg)
	if err != nil {
		return err
	}
	return fn(r)
}

// needOmpFormat refuses a session not in omp's format: a Claude Code or
// Codex transcript, which is converted to be read and imported to be
// written; the error names the command (what) and says how.
func needOmpFormat(ref catalog.Ref, what string) error {
	if !ref.Harness.Converted() {
		return nil
	}
	return fmt.Errorf("%s is a %s session; %s works on sessions in omp's format: 'xdev import %s' makes it one in the data dir",
		ref.Path, ref.Harness.Name(), what, ref.Path)
}

// writable refuses a session xdev must not write: one that lies in
// another harness's directory (pi's, or omp's when the data dir is
// xdev's), which xdev only reads.
func writable(ref catalog.Ref, what string) error {
	if err := needOmpFormat(ref, what); err != nil {
		return err
	}
	if ref.InDataDir || ref.Harness == catalog.File || ref.Harness == catalog.Xdev {
		return nil
	}
	hint := "'xdev fork' copies it into the data dir"
	if ref.Harness == catalog.Omp {
		hint = "--omp writes omp's data dir; 'xdev fork' copies it into xdev's"
	}
	return fmt.Errorf("%s is %s's session, which xdev only reads (%s)", ref.Path, ref.Harness.Name(), hint)
}
