package foreign

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/session"
)

// Provenance names where a converted session came from: what omp's
// provenance entry records.
type Provenance struct {
	Harness string // "claude", "codex"
	ID      string // the session's id in its harness
	Path    string // its file
	Cwd     string // the cwd the listing gave it
}

// ImportType is the customType of the provenance entry omp appends to an
// imported session (persistForeignSession).
const ImportType = "foreign_session_import"

// Import writes c as a new omp-format session in dataDir, as omp's
// persistForeignSession does: the title slot and header (with the title),
// the converted entries, omp's title_change when the session has a
// title, and the provenance entry (custom, ImportType, with src). The file
// appears whole or not at all. It returns the new file's path and id.
func Import(dataDir string, c *Converted, src Provenance) (path, id string, err error) {
	return ImportStream(dataDir, src, func(begin func(*Converted) error, emit func(string, []byte) error) error {
		if err := begin(c); err != nil {
			return err
		}
		parent := ""
		for _, e := range c.Entries {
			v, err := jsonx.Parse(e)
			if err != nil {
				return err
			}
			parent = v.Get("id").String()
			if err := emit(parent, e); err != nil {
				return err
			}
		}
		return nil
	})
}

// ErrNoCwd is ImportStream's error for a session whose working directory
// is not known as an absolute path.
var ErrNoCwd = errors.New("the session names no working directory")

// A Stream converts one session: it passes the session's cwd and title to
// begin, then each entry, with its id, to emit (StreamClaude, StreamCodex).
type Stream func(begin func(*Converted) error, emit func(id string, entry []byte) error) error

// ImportStream is Import of a session converted as it is written, in
// bounded memory, however large the source.
func ImportStream(dataDir string, src Provenance, conv Stream) (path, id string, err error) {
	var cwd string
	// The file's name needs the cwd, which the conversion's first read
	// learns; the new file is written beside it and linked into place.
	err = writeSession(func(c *Converted) (string, string, error) {
		cwd = c.Cwd
		if !filepath.IsAbs(cwd) {
			// The project comes from the cwd: one made up of a
			// directory's name would put the session anywhere.
			return "", "", fmt.Errorf("%w (%q)", ErrNoCwd, cwd)
		}
		path, id, err = session.NewSessionPath(dataDir, cwd)
		return path, id, err
	}, false, session.NewBlobStore(session.BlobsDir(dataDir)), src, conv)
	if err != nil {
		return "", "", err
	}
	return path, id, nil
}

// writeSession writes a converted session to a new file, whole or not at
// all: target names the file and its id once the cwd and title are known;
// replace allows an existing file there to be replaced (a mirror's).
// Large images go to blobs, as omp's writer puts them, unless it is nil
// (a mirror, a cache, keeps them inline).
func writeSession(target func(*Converted) (path, id string, err error), replace bool, blobs *session.BlobStore,
	src Provenance, conv Stream) error {
	return writeSessionAs(target, replace, blobs, src, conv, false)
}

// writeSessionAs is writeSession; with sourceStart, the header's time is
// the source's first (Converted.Started), as a mirror shows it, not now,
// as an import (a new session, in omp's rules) has it.
func writeSessionAs(target func(*Converted) (path, id string, err error), replace bool, blobs *session.BlobStore,
	src Provenance, conv Stream, sourceStart bool) error {
	var (
		w     *session.NewFile
		title string
		meta  *Converted
		last  string
	)
	begin := func(c *Converted) error {
		meta = c
		path, id, err := target(c)
		if err != nil {
			return err
		}
		// omp's setSessionName stores the cleaned title, and none if
		// nothing is left of it.
		title = session.CleanTitle(c.Title)
		opts := session.NewOptions{Cwd: c.Cwd, ID: id, Title: title}
		if title != "" {
			var ok bool
			if opts.TitleSource, ok = session.ParseTitleSource(c.TitleSource); !ok {
				opts.TitleSource = session.TitleAuto
			}
		}
		if sourceStart {
			opts.Started = c.Started
		}
		w, err = session.StartFile(path, opts, replace)
		return err
	}
	emit := func(id string, e []byte) error {
		last = id
		if blobs != nil && (bytes.Contains(e, []byte(`"data"`)) || bytes.Contains(e, []byte(`"image_url"`)) ||
			bytes.Contains(e, []byte(`"result"`))) {
			var err error
			if e, err = session.ExternalizeImages(e, blobs); err != nil {
				return err
			}
		}
		return w.WriteEntry(e)
	}
	err := conv(begin, emit)
	if err == nil && meta == nil {
		err = errors.New("conversion gave no session")
	}
	if err == nil {
		writeTrailer(w, title, meta, src, last)
		return w.Commit()
	}
	if w != nil {
		w.Abort()
	}
	return err
}

// writeTrailer writes omp's trailing entries of an import, each with a
// fresh id, chained to the last entry (last): the title_change, when
// there is a title, and the provenance entry.
func writeTrailer(w *session.NewFile, title string, meta *Converted, src Provenance, last string) {
	trailer := func(ms ...jsonx.Member) {
		id := session.NewID()
		ms = append(ms, member("id", jsonx.Str(id)), member("parentId", parentValue(last)), member("timestamp", jsonx.Str(session.Now())))
		w.WriteEntry(jsonx.ObjectOf(ms...).JSON()) // an error sticks: Commit returns it
		last = id
	}
	if title != "" {
		ms := []jsonx.Member{member("type", jsonx.Str(session.TypeTitleChange)),
			member("title", jsonx.Str(title)), member("source", jsonx.Str(meta.TitleSource))}
		if meta.TitleTrigger != "" {
			ms = append(ms, member("trigger", jsonx.Str(meta.TitleTrigger)))
		}
		trailer(ms...)
	}
	trailer(member("type", jsonx.Str(session.TypeCustom)),
		member("customType", jsonx.Str(ImportType)), member("data", jsonx.ObjectOf(
			member("source", jsonx.Str(src.Harness)), member("sourceId", jsonx.Str(src.ID)),
			member("sourcePath", jsonx.Str(src.Path)), member("sourceCwd", jsonx.Str(src.Cwd)))))
}

// An EarlierImport is an import found in a data dir: the session file
// it wrote and the source its provenance entry names.
type EarlierImport struct {
	Path   string
	Source Provenance
}

// SamePath reports whether the earlier import was of the file at path,
// not another file with the same session id (a truncated copy, or the
// rollout before Codex compressed it).
func (im EarlierImport) SamePath(path string) bool { return im.Source.Path == path }

// Imported finds an earlier import of src among dataDir's sessions: the
// file holding a provenance entry naming src's harness and path, else
// one naming its harness and id (ok is false when there is neither). A
// file is first searched for ImportType's bytes, a read through in
// bounded memory; one that holds them is read as every session is read
// (session.OpenIndex: lines too long to hold skipped and counted, not the
// end of the file), and its custom entries decoded.
//
// With cacheDir (xdev's cache; "" for none), what each file held is kept
// there with its stat (importsCache), and the next check reads only the
// files that changed since: a stat of each file rather than a read of
// every session's bytes. It is written when no earlier import is found,
// the import going on.
func Imported(dataDir string, src Provenance, cacheDir string) (im EarlierImport, ok bool, err error) {
	files, err := session.Files(dataDir)
	if err != nil {
		return EarlierImport{}, false, err
	}
	cache := readImportsCache(cacheDir, dataDir)
	marker := []byte(`"` + ImportType + `"`)
	var byPath, byID EarlierImport
	for _, f := range files {
		imports, ok := cache.lookup(f)
		if !ok {
			if imports, err = provenances(f.Path, marker); err != nil {
				continue // unreadable: not an import we can point at, nor kept
			}
			cache.add(f, imports)
		}
		for _, from := range imports {
			switch {
			case from.Harness != src.Harness:
			case from.Path == src.Path && byPath.Path == "":
				byPath = EarlierImport{f.Path, from}
			case src.ID != "" && from.ID == src.ID && byID.Path == "":
				byID = EarlierImport{f.Path, from}
			}
		}
	}
	if byPath.Path != "" {
		return byPath, true, nil
	}
	if byID.Path != "" {
		return byID, true, nil
	}
	// Kept only when the import goes on: a refused one leaves xdev's
	// cache as it was, as every failed command does.
	cache.write()
	return EarlierImport{}, false, nil
}

// provenances are the provenance entries in the session file at path, of
// every harness, in file order.
func provenances(path string, marker []byte) ([]Provenance, error) {
	if ok, err := fileContains(path, marker); err != nil || !ok {
		return nil, err
	}
	x, err := session.OpenIndex(path, nil)
	if err != nil {
		return nil, err
	}
	defer x.Close()
	var buf []byte
	var out []Provenance
	for i := range x.Len() {
		if x.Type(i) != session.TypeCustom {
			continue
		}
		line, err := x.AppendRaw(buf[:0], i)
		if err != nil {
			return nil, err
		}
		buf = line
		if !bytes.Contains(line, marker) {
			continue
		}
		v, err := jsonx.Parse(line)
		if err != nil || !v.Get("customType").Is(ImportType) {
			continue
		}
		d := v.Get("data")
		var p Provenance
		p.Harness, _ = d.Get("source").Text()
		p.ID, _ = d.Get("sourceId").Text()
		p.Path, _ = d.Get("sourcePath").Text()
		p.Cwd, _ = d.Get("sourceCwd").Text()
		out = append(out, p)
	}
	return out, nil
}

// scanBuffers are the read buffers of fileContains.
var scanBuffers = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

// fileContains reports whether the file at path holds b, reading it a
// block at a time.
func fileContains(path string, b []byte) (bool, error) {
	f, fi, err := regularfile.Open(path, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	// A buffer of the file's size, up to 1 MiB, from a pool: a check of
	// every file of a data dir of 10,000 sessions of tens of KB must not
	// allocate and clear a MiB for each.
	bp := scanBuffers.Get().(*[]byte)
	defer scanBuffers.Put(bp)
	buf := (*bp)[:max(min(fi.Size()+1, 1<<20), int64(2*len(b)))]
	keep := 0 // the end of the last block, which may begin b
	for {
		n, err := io.ReadFull(f, buf[keep:])
		if bytes.Contains(buf[:keep+n], b) {
			return true, nil
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("%s: %w", path, err)
		}
		keep = min(len(b)-1, keep+n)
		copy(buf, buf[len(buf)-keep:])
	}
}
