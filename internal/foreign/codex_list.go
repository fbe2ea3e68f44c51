package foreign

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/session"
)

// CodexDir is Codex's data dir: $CODEX_HOME, else ~/.codex.
func CodexDir() (string, error) { return envOrHome("CODEX_HOME", ".codex") }

// codexRoots are the directories under a Codex data dir that hold
// rollouts, as omp's list walks them.
var codexRoots = []string{"sessions", ".sessions", "archived_sessions"}

// isRolloutName reports whether a file under a rollout directory is
// named as a rollout is (compressed or not), which a listing reads.
func isRolloutName(path string) bool {
	return strings.HasSuffix(path, ".jsonl") || strings.HasSuffix(path, ".jsonl.zst")
}

// CodexSession is a Codex rollout as a listing knows it.
type CodexSession struct {
	CodexInfo
	Path     string
	Modified float64 // ms; session_index.jsonl's updated_at, else the file's mtime
	Size     int64
	Archived bool  // under archived_sessions/
	mtimeNs  int64 // the file's mtime as listed (Session.mtimeNs)
	// FirstMessage is the first prompt typed (a user_message event) in the
	// first 64 KiB.
	FirstMessage string
	// Err says why a file that lies where Codex keeps rollouts could not
	// be read (a corrupt .zst, say); the other fields are then partial.
	Err error
	// Subagent: the rollout is a subagent's thread, its session_meta's
	// source a "subagent" (Codex's SessionSource::SubAgent: review,
	// compact, or thread_spawn with the parent_thread_id it was spawned
	// from, in Parent). omp lists such rollouts as any other; xdev nests
	// them under their parent, as it does Claude Code's.
	Subagent bool
	Parent   string
}

// ListCodex lists the rollouts under root as omp's CodexSessionStore.list
// does without Codex's state database: every rollout whose first record is
// a session_meta naming a cwd, titled from session_index.jsonl, newest
// first. Unlike omp it also lists zstd-compressed rollouts (.jsonl.zst).
// It reads the first line of each file and the index, nothing else. (omp
// reads Codex's state_N.sqlite first when there is one; xdev does not
// open it, since a SQLite reader of a WAL database can write beside it.)
func ListCodex(root string) ([]CodexSession, error) { return listCodex(root, "") }

// listCodex is ListCodex with the list cache kept in cacheDir ("": none).
func listCodex(root, cacheDir string) ([]CodexSession, error) {
	index := codexIndex(root)
	cache := openListCache(cacheDir, HarnessCodex, root)
	defer cache.save(root, func(string) bool { return false })
	// The rollouts are named first, then read in parallel: a listing with
	// no cache (a first one) reads every rollout's head.
	type rollout struct {
		path     string
		d        fs.DirEntry
		archived bool
	}
	var files []rollout
	for _, r := range codexRoots {
		dir := filepath.Join(root, r)
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if path == dir && errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return nil // an unreadable directory lists nothing, as in omp
			}
			if d.Type().IsRegular() && isRolloutName(path) {
				files = append(files, rollout{path, d, r == "archived_sessions"})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	listed := make([]CodexSession, len(files))
	ok := make([]bool, len(files))
	forEach(len(files), func(k int) {
		f := files[k]
		s, listedOK, err := codexListed(f.path, index, cache)
		if err != nil {
			// A rollout that cannot be read (a corrupt .zst, an I/O
			// error) is listed with the reason, not left out as though
			// it were not there.
			s = CodexSession{CodexInfo: CodexInfo{ID: CodexRolloutID(f.path)}, Path: f.path, Err: err}
			if fi, serr := f.d.Info(); serr == nil {
				s.Size, s.Modified = fi.Size(), float64(fi.ModTime().UnixMilli())
			}
			listedOK = true
		}
		s.Archived = f.archived
		listed[k], ok[k] = s, listedOK
	})
	out := make([]CodexSession, 0, len(files))
	for k, s := range listed {
		if ok[k] {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b CodexSession) int {
		return cmp.Or(cmp.Compare(b.Modified, a.Modified), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Files are the rollouts under the root, named by their files (the id
// a rollout's name ends in, CodexRolloutID): no file is opened.
func (c codexSource) Files() []Session {
	// Named first, then made at their number (as ClaudeFiles).
	var paths []string
	c.walkTranscripts(func(path string) { paths = append(paths, path) })
	out := make([]Session, len(paths))
	for k, path := range paths {
		out[k] = Session{Harness: HarnessCodex, ID: CodexRolloutID(path), Path: path}
	}
	return out
}

// walkTranscripts names every rollout a listing looks at, opening none.
func (c codexSource) walkTranscripts(fn func(path string)) {
	for _, r := range codexRoots {
		filepath.WalkDir(filepath.Join(c.root, r), func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && isRolloutName(path) {
				fn(path)
			}
			return nil // an unreadable directory names nothing, as it lists nothing
		})
	}
}

// listingInputs is what a listing reads besides the rollouts:
// session_index.jsonl's thread names and times.
func (c codexSource) listingInputs() []string {
	return []string{filepath.Join(c.root, "session_index.jsonl")}
}

// CodexSessionAt is the listing of the rollout at path, whether or not it
// lies under a Codex data dir; a rollout omp would not list (no
// session_meta, or no cwd) is still described, from its name and times.
func CodexSessionAt(root, path string) (CodexSession, error) {
	s, ok, err := codexListed(path, codexIndex(root), nil)
	if err != nil {
		return CodexSession{}, err
	}
	if ok {
		return s, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return CodexSession{}, err
	}
	ms := float64(fi.ModTime().UnixMilli())
	return CodexSession{CodexInfo: CodexInfo{ID: CodexRolloutID(path), Created: birthMillis(path, fi)},
		Path: path, Modified: ms, Size: fi.Size()}, nil
}

// codexIndexRow is a line of Codex's session_index.jsonl.
type codexIndexRow struct{ name, updated string }

// codexIndex reads session_index.jsonl: the thread names Codex gave its
// sessions, by id (a later line wins, as in omp's Map).
func codexIndex(root string) map[string]codexIndexRow {
	index := map[string]codexIndexRow{}
	eachRecord(filepath.Join(root, "session_index.jsonl"), func(r record) error {
		id, ok1 := stringField(r.v, "id")
		name, ok2 := stringField(r.v, "thread_name")
		updated, ok3 := stringField(r.v, "updated_at")
		if ok1 && ok2 && ok3 {
			index[id] = codexIndexRow{name, updated}
		}
		return nil
	})
	return index
}

// codexListed reads a rollout's first record: omp lists it only if that
// is a session_meta with a cwd.
func codexListed(path string, index map[string]codexIndexRow, cache *listCache) (CodexSession, bool, error) {
	fi, err := regularfile.Stat(path)
	if err != nil {
		return CodexSession{}, false, err
	}
	facts, ok := cache.get(path, fi)
	if !ok {
		if facts, err = codexFileFacts(path, fi); err != nil {
			return CodexSession{}, false, err
		}
		cache.put(path, fi, facts)
	}
	if !facts.Listed {
		return CodexSession{}, false, nil
	}
	s := CodexSession{CodexInfo: CodexInfo{ID: facts.ID, Cwd: facts.Cwd, Created: facts.Created}, Path: path, Size: fi.Size(),
		FirstMessage: facts.First, Subagent: facts.Subagent, Parent: facts.Parent}
	s.Modified, s.mtimeNs = float64(fi.ModTime().UnixMilli()), fi.ModTime().UnixNano()
	if row, ok := index[s.ID]; ok {
		s.Title = row.name
		s.Modified = truncMillis(codexMillis(jsonx.Str(row.updated), s.Modified))
	}
	return s, true, nil
}

// codexFileFacts reads what a listing wants of a rollout's own bytes: its
// first record, which omp lists only if it is a session_meta naming a cwd
// (Listed), and the first prompt typed.
func codexFileFacts(path string, fi fs.FileInfo) (fileFacts, error) {
	first, _, err := firstRecord(path)
	if errors.Is(err, io.EOF) {
		return fileFacts{}, nil // no object line: not a rollout omp lists
	}
	if err != nil {
		return fileFacts{}, err
	}
	if !first.Get("type").Is("session_meta") || !isRecordValue(first.Get("payload")) {
		return fileFacts{}, nil
	}
	p := first.Get("payload")
	cwd, ok := stringField(p, "cwd")
	if !ok {
		return fileFacts{}, nil
	}
	id, ok := textField(p, "id")
	if !ok {
		id = CodexRolloutID(path)
	}
	facts := fileFacts{Listed: true, ID: id, Cwd: cwd, First: codexFirstPrompt(path)}
	facts.Subagent, facts.Parent = codexSubagent(p.Get("source"))
	// new Date(ms) keeps whole milliseconds.
	// omp reads session_meta's timestamp only as a string.
	created := jsonx.Value{}
	if p.Get("timestamp").Kind() == jsonx.String {
		created = p.Get("timestamp")
	}
	facts.Created = truncMillis(codexMillis(created, birthMillis(path, fi)))
	return facts, nil
}

// codexSubagent reads a session_meta's source: Codex writes its
// SessionSource as serde's externally tagged enum, "cli", "exec", … for a
// session a person started, {"subagent": "review"} or {"subagent":
// {"thread_spawn": {"parent_thread_id": …, "depth": …}}} for a subagent's.
func codexSubagent(src jsonx.Value) (subagent bool, parent string) {
	sub := src.Get("subagent")
	if !sub.Defined() || sub.Nullish() {
		return false, ""
	}
	parent, _ = stringField(sub.Get("thread_spawn"), "parent_thread_id")
	return true, parent
}

func truncMillis(ms float64) float64 {
	if ms < 0 {
		return -float64(int64(-ms))
	}
	return float64(int64(ms))
}

// firstRecordReaders are firstRecord's readers: a listing of thousands
// of rollouts reuses a few rather than allocating 64 KiB for each (300 MB
// of garbage at 5,000 rollouts).
var firstRecordReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

// firstRecord is the first line of the file that parses as an object,
// read a line at a time (a session_meta line carries Codex's instructions
// and can run to tens of KiB).
func firstRecord(path string) (jsonx.Value, fs.FileInfo, error) {
	fi, err := regularfile.Stat(path)
	if err != nil {
		return jsonx.Value{}, nil, err
	}
	r, err := openTranscript(path)
	if err != nil {
		return jsonx.Value{}, nil, err
	}
	defer r.Close()
	br := firstRecordReaders.Get().(*bufio.Reader)
	br.Reset(r)
	defer firstRecordReaders.Put(br)
	for {
		line, _, err := readLineBounded(br, session.DefaultMaxLineBytes)
		if len(line) > 0 {
			if v, perr := jsonx.Parse(line); perr == nil && v.Kind() == jsonx.Object {
				return v, fi, nil
			}
		}
		if errors.Is(err, io.EOF) {
			return jsonx.Value{}, fi, err
		}
		if err != nil {
			return jsonx.Value{}, fi, fmt.Errorf("%s: %w", path, err)
		}
	}
}

// readLineBounded reads a line, its own copy; a line longer than max is
// skipped whole and read as empty, with over set.
func readLineBounded(br *bufio.Reader, max int) (line []byte, over bool, err error) {
	lr := lineReader{br: br}
	line, over, err = lr.next(max)
	return bytes.Clone(line), over, err
}

// lineReader reads lines without copying them where it can: a line that
// fits in br's buffer is read as a slice of it, a longer one into long,
// which is kept for the next. Reading a transcript's every line (a usage
// scan of ten thousand Claude Code sessions reads 800 MB) then allocates
// nothing per line; a copy of each was most of such a scan's time, in
// the copy and in collecting it.
type lineReader struct {
	br   *bufio.Reader
	long []byte
}

// next reads the next line, with its newline, valid until the next call;
// a line longer than max is skipped whole and read as empty, with over
// set. A last line without a newline is read with a nil error; io.EOF
// comes after it.
func (r *lineReader) next(max int) (line []byte, over bool, err error) {
	chunk, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		line = append(r.long[:0], chunk...)
		for errors.Is(err, bufio.ErrBufferFull) {
			chunk, err = r.br.ReadSlice('\n')
			if !over && len(line)+len(chunk) <= max {
				line = append(line, chunk...)
			} else if !over {
				r.long, line, over = line[:0], nil, true
			}
		}
		if !over {
			r.long = line[:0]
		}
	} else {
		line = chunk
	}
	if len(line) > max {
		line, over = nil, true
	}
	if errors.Is(err, io.EOF) && (len(line) > 0 || over) {
		err = nil
	}
	return line, over, err
}

// birthMillis is the file's birth time in ms, as Bun's stat gives it
// (statx), else its modification time.
func birthMillis(path string, fi fs.FileInfo) float64 {
	var stx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, 0, unix.STATX_BTIME, &stx); err == nil && stx.Mask&unix.STATX_BTIME != 0 {
		return jsMillis(stx.Btime.Sec, int64(stx.Btime.Nsec))
	}
	return mtimeMillis(fi)
}

// Time is ms as a time.Time.
func Time(ms float64) time.Time { return time.UnixMilli(int64(ms)) }

// codexFirstPrompt is the first user_message event's text in the
// rollout's first 64 KiB: what the user typed, without the environment
// context Codex sends as user messages too.
func codexFirstPrompt(path string) string {
	r, err := openTranscript(path)
	if err != nil {
		return ""
	}
	defer r.Close()
	head, done := readPooled(r)
	defer done()
	for line := range bytes.Lines(head) {
		if !bytes.Contains(line, []byte(`"user_message"`)) {
			continue
		}
		if v, err := jsonx.Parse(line); err == nil && v.Get("type").Is("event_msg") && v.Get("payload").Get("type").Is("user_message") {
			if t, ok := stringField(v.Get("payload"), "message"); ok {
				return strings.Join(strings.Fields(t), " ")
			}
		}
	}
	return ""
}

// mtimeMillis is the file's modification time in ms as Bun's mtimeMs
// gives it.
func mtimeMillis(fi fs.FileInfo) float64 {
	t := fi.ModTime()
	return jsMillis(t.Unix(), int64(t.Nanosecond()))
}

// jsMillis is a file time in ms as Bun computes it, seconds times 1000
// plus nanoseconds over a million, in float64: the same double to the
// last bit (a fraction of a millisecond can reach an entry's timestamp).
// float64(UnixNano)/1e6 rounds differently about one time in four.
func jsMillis(sec, nsec int64) float64 {
	return float64(sec)*1000 + float64(nsec)/1e6
}
