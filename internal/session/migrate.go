package session

// Migrations of v1 and v2 files, as omp's session-migrations.ts migrates
// them: in memory when a file is read, and on the lines a fork or repair
// writes.

import (
	"bytes"
	"fmt"
	"io"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/jsonx"
)

// migrateLine returns the line of e from a v1 or v2 file as omp's first
// write migrates it: ids and parentIds appended (v1), firstKeptEntryIndex
// replaced by firstKeptEntryId, the hookMessage role renamed custom.
func migrateLine(version int, e *Entry) ([]byte, error) {
	if t := bytes.TrimLeft(e.raw, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		// An array is an entry in omp too: its migration sets an id
		// property JSON.stringify does not write, so the line stays.
		return e.raw, nil
	}
	ed := jsonx.Edit(e.raw)
	if version < 2 {
		ed.Set("id", e.ID).SetRaw("parentId", IDValue(e.ParentID).JSON())
		if c, ok := e.Body.(*Compaction); ok && c.FirstKeptEntryID != nil {
			ed.Remove("firstKeptEntryIndex").Set("firstKeptEntryId", *c.FirstKeptEntryID)
		}
	}
	// The load renamed the role (however the line spells it, escapes
	// included); a custom message is written as it now reads.
	if m, ok := e.Body.(*Message); ok && m.Message.Role == ai.RoleCustom {
		ed.SetRaw("message", m.Message.Raw())
	}
	return ed.Bytes()
}

// writeMigrated writes the lines of the entries at idx as a v3 file holds
// them: byte for byte from a v3 file; from v1 and v2, migrated as omp's
// first write migrates them (see migrateLine); then through edit, when
// not nil. One entry is read at a time.
func (x *Index) writeMigrated(w io.Writer, idx []int, edit func(i int, line []byte) ([]byte, error)) error {
	var buf []byte
	for _, i := range idx {
		var line []byte
		var err error
		if x.Version() >= CurrentVersion {
			buf, err = x.AppendRaw(buf[:0], i)
			line = buf
		} else {
			e, derr := x.Entry(i)
			if e == nil {
				return derr
			}
			if line, err = migrateLine(x.Version(), e); err != nil {
				err = fmt.Errorf("%s: line %d: %w", x.Path(), e.line, err)
			}
		}
		if err == nil && edit != nil {
			line, err = edit(i, line)
		}
		if err != nil {
			return err
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
		if _, err := w.Write([]byte{'\n'}); err != nil {
			return err
		}
	}
	return nil
}

// migrateV1 gives an entry of a v1 file the id and parent xdev derived for
// it, and resolves a compaction's firstKeptEntryIndex, as omp's migration
// does with the ids it draws. A firstKeptEntryId the file already had
// names an id that no longer exists.
func migrateV1(e *Entry, v jsonx.Value) jsonx.Value {
	v = v.With("id", IDValue(e.ID)).With("parentId", IDValue(e.ParentID))
	if c, ok := e.Body.(*Compaction); ok {
		if _, isNum := v.Get("firstKeptEntryIndex").Float(); isNum {
			kept := jsonx.Value{}
			if c.FirstKeptEntryID != nil {
				kept = IDValue(*c.FirstKeptEntryID)
			}
			v = v.With("firstKeptEntryId", kept).With("firstKeptEntryIndex", jsonx.Value{})
		}
	}
	return v
}

// v1ID is the id given to the n-th entry (1-based) of a v1 file.
func v1ID(n int) string { return fmt.Sprintf("%08x", n) }
