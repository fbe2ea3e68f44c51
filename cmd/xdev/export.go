package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/term"

	"github.com/xdev/xdev/internal/export"
	"github.com/xdev/xdev/internal/session"
)

var exportCommand = &command{
	name: "export", args: "[--format md|html] [--full] [-o FILE] [--db URL] SESSION | --all -o DIR",
	summary: "Export a session's branch as Markdown or as a self-contained HTML page",
	example: `  xdev export 01a11069 > session.md
  xdev export -o session.html 01a11069     the format follows the extension
  xdev export --full -o all.html 01a11069  every entry, every output whole
  xdev export --all --format html -o out/  every session, as out/<project>/<name>.html`,
	options: func() options { return &exportOptions{} },
}

// exportOptions are the flags and arguments of `xdev export`.
type exportOptions struct {
	store   *storeFlags
	db      *dbFlags
	sources *sourceFlags
	format  string
	out     string
	all     bool
	full    bool
	reveal  bool
	args    []string
}

func (o *exportOptions) define(fs *flag.FlagSet) {
	o.store = addStoreFlags(fs)
	o.sources = addSourceFlags(fs)
	o.db = addDBFlags(fs)
	fs.StringVar(&o.format, "format", "", "md or html (default: from -o's extension, else md)")
	fs.StringVar(&o.out, "o", "", "write to this file (with --all, this directory) instead of stdout")
	fs.BoolVar(&o.all, "all", false, "export every session of the data dir into the directory -o")
	fs.BoolVar(&o.reveal, "reveal", false, "write keys, tokens and passwords as they are (by default each is masked as [REDACTED kind …fp])")
	fs.BoolVar(&o.full, "full", false, "HTML: the whole branch, every output whole (by default a page keeps the newest 8 MiB of the branch and cuts outputs at 64 KiB, so any browser opens it)")
}

func (o *exportOptions) setArgs(args []string) { o.args = args }

func (o *exportOptions) run(e *env) error {
	if o.format == "" {
		o.format = "md"
		if strings.HasSuffix(o.out, ".html") || strings.HasSuffix(o.out, ".htm") {
			o.format = "html"
		}
	}
	if o.format != "md" && o.format != "html" {
		return usagef("--format is md or html, not %q", o.format)
	}
	if o.all {
		if o.out == "" || len(o.args) != 0 {
			return usagef("--all writes one file per session into the directory -o")
		}
		if o.db.on() {
			return usagef("--all exports a data dir; with --db, export one SESSION at a time")
		}
		return exportAll(e, o.store, o.sources, o.format, o.full, o.reveal, o.out)
	}
	if len(o.args) != 1 {
		return usagef("want one SESSION")
	}
	return withReadable(e, o.store, o.sources, o.db, o.args[0], func(r catalog.Readable) error { return o.write(e, r) })
}

// write exports the session r to -o, or to stdout.
func (o *exportOptions) write(e *env, r catalog.Readable) error {
	if o.out == "" {
		return exportOne(e.dataOut(), r.OpenIndex, o.format, o.full, o.reveal)
	}
	return o.store.outputPolicy(o.sources, r.Shown).writeFile(o.out, func(w io.Writer) error {
		return exportOne(w, r.OpenIndex, o.format, o.full, o.reveal)
	})
}

// exportOne writes one session. A Markdown export is the whole branch; an
// HTML page is bounded (export.PageDefaults) unless full. Secrets are
// masked unless reveal.
func exportOne(w io.Writer, open func() (*session.Index, error), format string, full, reveal bool) error {
	x, err := open()
	if err != nil {
		return err
	}
	defer x.Close()
	var opts export.Options
	if format == "html" && !full {
		opts = export.PageDefaults
	}
	opts.Reveal = reveal
	if format == "html" {
		return export.HTML(w, x, &opts)
	}
	return export.Markdown(w, x, &opts)
}

// exportAll writes every session of the data dir into dir, one file per
// session at <project>/<name>.<format>, mirroring the sessions directory,
// so sessions of different projects never share an output name. A session
// that fails is reported and the others are still exported; so is a file
// that is not a session. Either makes the exit code 1.
func exportAll(e *env, store *storeFlags, sources *sourceFlags, format string, full, reveal bool, dir string) error {
	data, err := store.existingDir()
	if err != nil {
		return err
	}
	infos, err := session.List(data, nil)
	if err != nil {
		return err
	}
	policy := store.outputPolicy(sources)
	if err := policy.checkDir(dir); err != nil {
		return err
	}
	root := session.SessionsDir(data)
	prog := &term.Progress{IO: e.IOStreams, What: "exporting"}
	var failed []string
	n := 0
	for i, info := range infos {
		prog.Update(i+1, len(infos))
		if info.Err != nil {
			failed = append(failed, fmt.Sprintf("%s: skipped: %v", info.Path, info.Err))
			continue
		}
		rel, err := filepath.Rel(root, info.Path)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = filepath.Base(info.Path)
		}
		dst := filepath.Join(dir, strings.TrimSuffix(rel, ".jsonl")+"."+format)
		err = os.MkdirAll(filepath.Dir(dst), 0o700)
		if err == nil {
			policy.inputs = []string{info.Path}
			open := func() (*session.Index, error) { return session.OpenIndex(info.Path, nil) }
			err = policy.writeFile(dst, func(w io.Writer) error { return exportOne(w, open, format, full, reveal) })
		}
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: not exported: %v", info.Path, err))
			continue
		}
		n++
	}
	prog.Done()
	for _, f := range failed {
		fmt.Fprintln(e.ErrOut, f)
	}
	if e.IsTTY || len(failed) > 0 {
		fmt.Fprintf(e.ErrOut, "Exported %s of %d to %s", term.Plural(n, "session"), len(infos), dir)
		if len(failed) > 0 {
			fmt.Fprintf(e.ErrOut, "; %d skipped (above)", len(failed))
		}
		fmt.Fprintln(e.ErrOut)
	}
	if len(failed) > 0 {
		return exitCodeError{code: exitError}
	}
	return nil
}
