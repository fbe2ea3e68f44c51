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
//
// parent is the parentId to write for a v1 entry; it differs from
// e.ParentID when the entry before it was an array (see writeMigrated).
func migrateLine(version int, e *Entry, parent string) ([]byte, error) {
	if !isObjectLine(e.raw) {
		// An array of a v2 file is an entry without an id: kept as is.
		return e.raw, nil
	}
	ed := jsonx.Edit(e.raw)
	if version < 2 {
		ed.Set("id", e.ID).SetRaw("parentId", IDValue(parent).JSON())
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
//
// An array in a v1 file is an entry in omp's memory: the migration sets
// an id and parentId on it, the next entry's parent is that id, and the
// context passes through it. JSON.stringify writes neither property, so
// omp's own rewrite of such a file breaks the chain there and loses the
// context before it. A fork or repair is to keep the context: the array
// is left out and the entry after it takes the array's parent.
func (x *Index) writeMigrated(w io.Writer, idx []int, edit func(i int, line []byte) ([]byte, error)) error {
	var buf []byte
	var through map[string]string // a dropped v1 array's id → its parent
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
			parent := e.ParentID
			if p, ok := through[parent]; ok {
				parent = p
			}
			if x.Version() < 2 && !isObjectLine(e.raw) {
				if through == nil {
					through = map[string]string{}
				}
				through[e.ID] = parent
				continue
			}
			if line, err = migrateLine(x.Version(), e, parent); err != nil {
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

// isObjectLine says whether an entry's line holds a JSON object (and not
// an array).
func isObjectLine(raw []byte) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
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
