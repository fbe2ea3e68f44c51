package main

import (
	"flag"
	"fmt"

	"github.com/xdev/xdev/internal/term"

	"github.com/xdev/xdev/internal/session"
)

var blobsCommand = &command{
	name: "blobs", args: "[--delete] [--json]",
	summary: "Find (and with --delete remove) image blobs no session references",
	example: `  xdev blobs                 what would be removed, and referenced blobs that are missing
  xdev blobs --delete        remove them (every file under sessions/ is scanned first)
  xdev blobs --omp --json    omp's blob store`,
	options: func() options { return &blobsOptions{} },
}

type blobsJSON struct {
	Files        int                `json:"filesScanned"`
	Blobs        int                `json:"blobs"`
	Referenced   int                `json:"referenced"`
	Unreferenced []session.BlobInfo `json:"unreferenced"`
	Missing      []string           `json:"missing"`
	Deleted      bool               `json:"deleted"`
	FreedBytes   int64              `json:"freedBytes"`
}

// blobsOptions are the flags and arguments of `xdev blobs`.
type blobsOptions struct {
	store  *storeFlags
	del    bool
	asJSON bool
	args   []string
}

func (o *blobsOptions) define(fs *flag.FlagSet) {
	o.store = addStoreFlags(fs)
	fs.BoolVar(&o.del, "delete", false, "remove the unreferenced blobs (default: only report them)")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
}

func (o *blobsOptions) setArgs(args []string) { o.args = args }

func (o *blobsOptions) run(e *env) error {
	if len(o.args) != 0 {
		return usagef("unexpected argument %q", o.args[0])
	}
	dir, err := o.store.existingDir()
	if err != nil {
		return err
	}
	prog := &term.Progress{IO: e.IOStreams, What: "scanning sessions for blob references"}
	u, err := session.ScanBlobs(dir, prog.Update)
	prog.Done()
	if err != nil {
		return err
	}
	var unrefBytes int64
	for _, b := range u.Unreferenced {
		unrefBytes += b.Size
	}
	out := blobsJSON{Files: u.Files, Blobs: u.Blobs, Referenced: u.Referenced, Unreferenced: u.Unreferenced, Missing: u.Missing}
	if out.Unreferenced == nil {
		out.Unreferenced = []session.BlobInfo{}
	}
	if out.Missing == nil {
		out.Missing = []string{}
	}
	if o.del && len(u.Unreferenced) > 0 {
		freed, err := session.RemoveBlobs(dir, u.Unreferenced)
		out.Deleted, out.FreedBytes = true, freed
		if err != nil {
			return err
		}
	}
	if o.asJSON {
		return writeJSON(e, out)
	}
	fmt.Fprintf(e.Out, "%s in %s; %d referenced by the %s under %s\n",
		term.Plural(u.Blobs, "blob"), session.BlobsDir(dir), u.Referenced, term.Plural(u.Files, "file"), session.SessionsDir(dir))
	for _, b := range u.Unreferenced {
		fmt.Fprintf(e.Out, "unreferenced  %s  %s\n", b.Ref, term.Size(b.Size))
	}
	for _, m := range u.Missing {
		fmt.Fprintf(e.Out, "missing       %s\n", m)
	}
	switch {
	case len(u.Unreferenced) == 0:
		fmt.Fprintln(e.Out, "Nothing to remove.")
	case out.Deleted:
		fmt.Fprintf(e.Out, "Removed %s, %s.\n", term.Plural(len(u.Unreferenced), "blob"), term.Size(out.FreedBytes))
	default:
		fmt.Fprintf(e.Out, "%s (%s) would be removed; run with --delete to remove them.\n", term.Plural(len(u.Unreferenced), "blob"), term.Size(unrefBytes))
	}
	return nil
}
