package foreign

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/session"
)

// Source names where a converted session came from: what omp's
// provenance entry records.
type Source struct {
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
func Import(dataDir string, c *Converted, src Source) (path, id string, err error) {
	path, id, err = session.NewSessionPath(dataDir, c.Cwd)
	if err != nil {
		return "", "", err
	}
	if err := write(path, id, c, src); err != nil {
		return "", "", err
	}
	return path, id, nil
}

// write writes c as a new session file at path, with id as its id.
func write(path, id string, c *Converted, src Source) error {
	// omp's setSessionName stores the cleaned title, and none if nothing
	// is left of it.
	title := session.CleanTitle(c.Title)
	opts := session.NewOptions{Cwd: c.Cwd, ID: id, Title: title}
	if title != "" {
		var ok bool
		if opts.TitleSource, ok = session.ParseTitleSource(c.TitleSource); !ok {
			opts.TitleSource = session.TitleAuto
		}
	}
	s, err := session.New(path, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	objs := append([][]byte(nil), c.Entries...)
	if title != "" {
		ms := []jsonx.Member{member("type", jsonx.Str(session.TypeTitleChange)),
			member("title", jsonx.Str(title)), member("source", jsonx.Str(c.TitleSource))}
		if c.TitleTrigger != "" {
			ms = append(ms, member("trigger", jsonx.Str(c.TitleTrigger)))
		}
		objs = append(objs, jsonx.ObjectOf(ms...).JSON())
	}
	objs = append(objs, jsonx.ObjectOf(member("type", jsonx.Str(session.TypeCustom)),
		member("customType", jsonx.Str(ImportType)), member("data", jsonx.ObjectOf(
			member("source", jsonx.Str(src.Harness)), member("sourceId", jsonx.Str(src.ID)),
			member("sourcePath", jsonx.Str(src.Path)), member("sourceCwd", jsonx.Str(src.Cwd))))).JSON())
	if _, err := s.AppendJSONLines(objs); err != nil {
		return err
	}
	return s.EnsureOnDisk()
}

// Imported finds an earlier import of src among dataDir's sessions: the
// file holding a provenance entry naming src's harness and path (or id).
// It reads each file's lines looking for ImportType before decoding any,
// so a data dir costs one read through, in bounded memory.
func Imported(dataDir string, src Source) (string, error) {
	files, err := session.Files(dataDir)
	if err != nil {
		return "", err
	}
	marker := []byte(`"` + ImportType + `"`)
	for _, f := range files {
		found, err := holdsImport(f.Path, marker, src)
		if err != nil {
			continue // unreadable: not an import we can point at
		}
		if found {
			return f.Path, nil
		}
	}
	return "", nil
}

func holdsImport(path string, marker []byte, src Source) (bool, error) {
	fh, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), session.DefaultMaxLineBytes)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, marker) {
			continue
		}
		v, err := jsonx.Parse(line)
		if err != nil || !v.Get("type").Is(session.TypeCustom) || !v.Get("customType").Is(ImportType) {
			continue
		}
		d := v.Get("data")
		if d.Get("source").Is(src.Harness) && (d.Get("sourcePath").Is(src.Path) || src.ID != "" && d.Get("sourceId").Is(src.ID)) {
			return true, nil
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, bufio.ErrTooLong) {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return false, nil
}
