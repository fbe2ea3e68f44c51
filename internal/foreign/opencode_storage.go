package foreign

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/regularfile"
)

// opencode's older layout, before its SQLite database: one JSON file a
// session, a message and a part, under storage/ in its data dir:
//
//	storage/session/<projectID>/<sessionID>.json   the session (id, directory, parentID, title, time)
//	storage/message/<sessionID>/<messageID>.json   a message (what the database's message.data holds, with ids)
//	storage/part/<messageID>/<partID>.json         a part (what part.data holds, with ids)
//
// This rests on reading opencode's source and the readers built on it,
// not on a real directory: TestOpencodeStorage's is hand-made.

// opencodeFileMax bounds one storage file read whole.
const opencodeFileMax = 64 << 20

// readOpencodeJSON reads one storage file as a JSON object.
func readOpencodeJSON(path string) (jsonx.Value, error) {
	f, fi, err := regularfile.Open(path, 0)
	if err != nil {
		return jsonx.Value{}, err
	}
	defer f.Close()
	if fi.Size() > opencodeFileMax {
		return jsonx.Value{}, fmt.Errorf("%s: %d MiB, over the %d MiB read whole", path, fi.Size()>>20, opencodeFileMax>>20)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return jsonx.Value{}, fmt.Errorf("%s: %w", path, err)
	}
	v, err := jsonx.Parse(b)
	if err != nil || !isRecordValue(v) {
		return jsonx.Value{}, fmt.Errorf("%s: not a JSON object (cut short?)", path)
	}
	return v, nil
}

// listOpencodeStorage lists the sessions under storage, each from its
// session file and its first user message's first text part.
func listOpencodeStorage(storage string) []Session {
	projects, err := os.ReadDir(filepath.Join(storage, "session"))
	if err != nil {
		return nil
	}
	var out []Session
	for _, p := range projects {
		if !p.IsDir() {
			continue
		}
		files, _ := os.ReadDir(filepath.Join(storage, "session", p.Name()))
		for _, f := range files {
			if f.Type().IsRegular() && strings.HasSuffix(f.Name(), ".json") {
				out = append(out, opencodeStorageSession(storage, filepath.Join(storage, "session", p.Name(), f.Name())))
			}
		}
	}
	return out
}

// opencodeStorageOf is the storage directory a session file lies in.
func opencodeStorageOf(path string) (string, bool) {
	dir := filepath.Dir(filepath.Dir(path)) // storage/session
	return filepath.Dir(dir), filepath.Base(dir) == "session" && strings.HasSuffix(path, ".json") &&
		filepath.Base(filepath.Dir(dir)) == "storage"
}

// opencodeStorageSession describes the session file at path.
func opencodeStorageSession(storage, path string) Session {
	s := Session{Harness: HarnessOpencode, Path: path, ID: strings.TrimSuffix(filepath.Base(path), ".json")}
	v, err := readOpencodeJSON(path)
	if fi, serr := os.Stat(path); serr == nil {
		s.Size, s.Modified = fi.Size(), fi.ModTime()
	}
	if err != nil {
		s.Err = err
		return s
	}
	if id, ok := stringField(v, "id"); ok {
		s.ID = id
	}
	s.Title, _ = stringField(v, "title")
	s.Cwd, _ = stringField(v, "directory")
	s.ParentSession, _ = stringField(v, "parentID")
	s.Subagent = s.ParentSession != ""
	if ms, ok := v.Get("time").Get("created").Float(); ok {
		s.Created = Time(ms)
	}
	if ms, ok := v.Get("time").Get("updated").Float(); ok && Time(ms).After(s.Modified) {
		s.Modified = Time(ms)
	}
	for _, m := range opencodeStorageMessages(storage, s.ID) {
		if m.v.Get("role").Is("user") {
			for _, p := range opencodeStorageParts(storage, m.id) {
				if t, ok := stringField(p, "text"); ok && p.Get("type").Is("text") {
					s.FirstMessage = t
					break
				}
			}
			break
		}
	}
	return s
}

type opencodeStored struct {
	id string
	v  jsonx.Value
}

// opencodeStorageMessages are a session's messages, in order (their time,
// then id); a file that does not read is left out.
func opencodeStorageMessages(storage, session string) []opencodeStored {
	dir := filepath.Join(storage, "message", session)
	files, _ := os.ReadDir(dir)
	var out []opencodeStored
	for _, f := range files {
		if !f.Type().IsRegular() || !strings.HasSuffix(f.Name(), ".json") {
			continue
		}
		v, err := readOpencodeJSON(filepath.Join(dir, f.Name()))
		if err != nil {
			continue
		}
		id, ok := stringField(v, "id")
		if !ok {
			id = strings.TrimSuffix(f.Name(), ".json")
		}
		out = append(out, opencodeStored{id, v})
	}
	slices.SortFunc(out, func(a, b opencodeStored) int {
		x, _ := a.v.Get("time").Get("created").Float()
		y, _ := b.v.Get("time").Get("created").Float()
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return strings.Compare(a.id, b.id)
	})
	return out
}

// opencodeStorageParts are a message's parts in id order.
func opencodeStorageParts(storage, message string) []jsonx.Value {
	dir := filepath.Join(storage, "part", message)
	files, _ := os.ReadDir(dir)
	var names []string
	for _, f := range files {
		if f.Type().IsRegular() && strings.HasSuffix(f.Name(), ".json") {
			names = append(names, f.Name())
		}
	}
	slices.Sort(names)
	var out []jsonx.Value
	for _, n := range names {
		if v, err := readOpencodeJSON(filepath.Join(dir, n)); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// streamOpencodeStorage is StreamOpencode of a session in storage/: the
// same mapping, each entry naming its message's place in the session as
// its source line.
func streamOpencodeStorage(storage, path string, purpose Purpose, begin func(*Converted) error, emit func(id string, entry []byte) error) error {
	s := opencodeStorageSession(storage, path)
	if s.Err != nil {
		return s.Err
	}
	meta := &Converted{Title: s.Title, Cwd: s.Cwd, Started: s.Created}
	if meta.Title != "" {
		meta.TitleSource = "auto"
	}
	if err := begin(meta); err != nil {
		return err
	}
	ch := &chain{prefix: "opencode", purpose: purpose, emit: emit}
	model := ""
	for k, m := range opencodeStorageMessages(storage, s.ID) {
		created := float64(s.Created.UnixMilli())
		if err := opencodeMessage(ch, m.v, opencodeStorageParts(storage, m.id), created, k+1, &model); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}

// opencodeRecord reports whether v is an opencode storage/ session file's
// object: a ses_ id and a projectID.
func opencodeRecord(v jsonx.Value) bool {
	id, _ := v.Get("id").Text()
	return strings.HasPrefix(id, "ses_") && v.Get("projectID").Kind() == jsonx.String
}
