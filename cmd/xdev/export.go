package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/xdev/xdev/internal/export"
	"github.com/xdev/xdev/internal/session"
)

func init() {
	register(&command{
		name: "export", args: "[--format md|html] [-o FILE] SESSION | --all -o DIR",
		summary: "Export a session's branch as Markdown or as a self-contained HTML page",
		example: `  xdev export 01a22920 > session.md
  xdev export -o session.html 01a22920     the format follows the extension
  xdev export --all --format html -o out/  every session (progress on a terminal)`,
		run: runExport,
	})
}

func runExport(e *env, args []string) error {
	c := commands["export"]
	fs := c.flags(e)
	store := addStoreFlags(fs)
	format := fs.String("format", "", "md or html (default: from -o's extension, else md)")
	out := fs.String("o", "", "write to this file (with --all, this directory) instead of stdout")
	all := fs.Bool("all", false, "export every session of the data dir into the directory -o")
	pos, err := c.parse(e, fs, args)
	if err != nil {
		return err
	}
	if *format == "" {
		*format = "md"
		if strings.HasSuffix(*out, ".html") || strings.HasSuffix(*out, ".htm") {
			*format = "html"
		}
	}
	if *format != "md" && *format != "html" {
		return usagef("--format is md or html, not %q", *format)
	}
	if *all {
		if *out == "" || len(pos) != 0 {
			return usagef("--all writes one file per session into the directory -o")
		}
		return exportAll(e, store, *format, *out)
	}
	if len(pos) != 1 {
		return usagef("want one SESSION")
	}
	path, err := store.resolve(pos[0])
	if err != nil {
		return err
	}
	if *out == "" {
		return exportOne(e.stdout, path, *format)
	}
	return writeFileWith(*out, func(w io.Writer) error { return exportOne(w, path, *format) })
}

func exportOne(w io.Writer, path, format string) error {
	s, err := session.Open(path, &session.OpenOptions{Full: true})
	if err != nil {
		return err
	}
	d := export.Build(s)
	if format == "html" {
		return export.HTML(w, d)
	}
	return export.Markdown(w, d)
}

func exportAll(e *env, store *storeFlags, format, dir string) error {
	data, err := store.dir()
	if err != nil {
		return err
	}
	infos, err := session.List(data, nil)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	prog := &progress{e: e, what: "exporting"}
	n := 0
	for i, info := range infos {
		prog.update(i+1, len(infos))
		if info.Err != nil {
			continue
		}
		dst := filepath.Join(dir, strings.TrimSuffix(filepath.Base(info.Path), ".jsonl")+"."+format)
		if err := writeFileWith(dst, func(w io.Writer) error { return exportOne(w, info.Path, format) }); err != nil {
			prog.done()
			return err
		}
		n++
	}
	prog.done()
	if e.tty {
		fmt.Fprintf(e.stdout, "Exported %s to %s\n", plural(n, "session"), dir)
	}
	return nil
}

// writeFileWith writes a new file (0600: transcripts hold secrets)
// through fill, removing it again if fill fails.
func writeFileWith(path string, fill func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	err = fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}
