package session

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/jsonx"
)

// Problem is one thing wrong with a session file: what real omp would
// refuse or mangle, or what a reader would lose.
type Problem struct {
	Path string      `json:"path"`
	Line int         `json:"line,omitempty"` // 0 when the problem is not one line's
	Kind ProblemKind `json:"kind"`

	Detail string `json:"detail"`
	// Repair says what Repair does about it; empty when it cannot.
	Repair string `json:"repair,omitempty"`
}

func (p Problem) String() string {
	loc := p.Path
	if p.Line > 0 {
		loc = fmt.Sprintf("%s:%d", p.Path, p.Line)
	}
	return fmt.Sprintf("%s: %s: %s", loc, p.Kind, p.Detail)
}

// ProblemKind names a kind of Problem; its values are the Problem*
// constants, and they are what verify --json prints.
type ProblemKind string

// The kinds of Problem.
const (
	ProblemNoHeader       ProblemKind = "no-header"       // not a session: omp and xdev refuse it
	ProblemSlotRejected   ProblemKind = "slot-rejected"   // line 1 is a slot omp refuses to resume
	ProblemSlotWidth      ProblemKind = "slot-width"      // the slot is not 256 bytes: omp's in-place retitle corrupts it
	ProblemOldVersion     ProblemKind = "old-version"     // v1/v2: omp re-ids or rewrites it on its next write
	ProblemTornTail       ProblemKind = "torn-tail"       // the last line has no newline: an interrupted write
	ProblemMalformed      ProblemKind = "malformed-line"  // a line that is not an entry; both programs skip it
	ProblemTrailingText   ProblemKind = "trailing-text"   // text after an entry on its line: both read the entry, omp rewrites the whole file on its next write
	ProblemOmpRewrites    ProblemKind = "omp-rewrites"    // an entry omp changes as it loads it, so its next write rewrites the whole file
	ProblemDanglingParent ProblemKind = "dangling-parent" // parentId names no entry: history above it is lost
	ProblemDuplicateID    ProblemKind = "duplicate-id"    // two entries share an id: the later one wins
	ProblemTextBlobRef    ProblemKind = "text-blob-ref"   // a blob ref in text: omp hands it to the model verbatim
	ProblemMissingBlob    ProblemKind = "missing-blob"    // an image blob the store does not have
	ProblemCorruptBlob    ProblemKind = "corrupt-blob"    // a blob whose bytes no longer hash to its name; omp still sends them
	ProblemBadBlob        ProblemKind = "bad-blob-ref"    // an image ref that is not a valid blob ref
	ProblemSymlink        ProblemKind = "symlink"         // a session path that is a symlink; never followed in a data dir walk
	ProblemLeftover       ProblemKind = "leftover"        // a temp file or lockfile a killed writer left; --repair removes it
	ProblemOmpRefuses     ProblemKind = "omp-refuses"     // omp throws on an entry xdev reads, so it cannot resume the file (see ompfault.go)
)

// VerifyOptions tune Verify. The zero value is ready to use.
type VerifyOptions struct {
	// Blobs is where image blobs are looked up; nil means the blob store
	// of the file's data dir, when it is in one.
	Blobs *BlobStore
}

// Verify checks the session file at path and returns its problems, in line
// order. It only reads, one entry at a time (see Index), so memory follows
// the number of entries, not the file's size. An error means the file
// could not be read at all.
func Verify(path string, opts *VerifyOptions) ([]Problem, error) {
	if opts == nil {
		opts = &VerifyOptions{}
	}
	var probs []Problem
	add := func(line int, kind ProblemKind, detail, repair string) {
		probs = append(probs, Problem{Path: path, Line: line, Kind: kind, Detail: detail, Repair: repair})
	}
	first, err := firstLine(path)
	if err != nil {
		return nil, err
	}
	x, err := OpenIndex(path, &OpenOptions{Blobs: opts.Blobs})
	if errors.Is(err, ErrNoHeader) && looksLikeSlot(first) {
		// Line 1 is a slot neither program accepts; check the rest.
		add(1, ProblemSlotRejected, "line 1 is a title slot omp refuses (its source is not \"auto\" or \"user\", or it lacks a field), so omp will not resume the file", "rewrite line 1 as a slot omp accepts")
		x, err = OpenIndex(path, &OpenOptions{Blobs: opts.Blobs, skipLine1: true})
	}
	if errors.Is(err, ErrNoHeader) {
		add(1, ProblemNoHeader, err.Error(), "")
		return probs, nil
	}
	if err != nil {
		return nil, err
	}
	defer x.Close()
	if slot, ok := x.Slot(); ok {
		if !slot.OmpAccepts {
			add(1, ProblemSlotRejected, "omp refuses a slot whose source is not \"auto\" or \"user\", or that lacks v, updatedAt or pad", "rewrite line 1 as a slot omp accepts")
		}
		if len(first) != TitleSlotWidth {
			add(1, ProblemSlotWidth, fmt.Sprintf("line 1 is %d bytes with its newline, not %d: retitling in place would overwrite line 2", len(first), TitleSlotWidth), "rewrite line 1 at 256 bytes")
		}
	}
	if v := x.Version(); v < CurrentVersion {
		add(x.HeaderLine(), ProblemOldVersion, fmt.Sprintf("format v%d: omp rewrites the whole file (new ids for v1) on its next write", v), "migrate to v3 as omp would")
	} else if math.IsNaN(x.Header().version) {
		// `version >= 3` is false for NaN, so omp's migration runs, changes
		// nothing, and still reports the file migrated.
		add(x.HeaderLine(), ProblemOmpRewrites, "the header's version is not a number: omp reads the file as v3 but takes it for migrated, and rewrites the whole file on its next write", "")
	}
	listed := 0
	for _, b := range x.BadLines() {
		add(b.Line, ProblemMalformed, b.Reason, "drop the line (the original keeps it)")
		listed++
	}
	trailing := x.s.rewrites[rewriteTrailing]
	for _, line := range trailing.lines {
		add(line, ProblemTrailingText, "text after the entry's JSON on its line: both programs read the entry, but omp counts the line as malformed and rewrites the whole file on its next write", "drop the text after the entry")
	}
	if more := trailing.count - len(trailing.lines); more > 0 {
		add(0, ProblemTrailingText, fmt.Sprintf("%d more lines with text after their entry not listed", more), "drop the text")
	}
	if r := x.s.rewrites[rewriteCopilotReplay]; r.count > 0 {
		more := ""
		if r.count > 1 {
			more = fmt.Sprintf(" (and %d more such turns)", r.count-1)
		}
		add(r.lines[0], ProblemOmpRewrites, "a GitHub Copilot turn with replay history"+more+": omp strips it as it loads the file, and rewrites the whole file on its next write", "")
	}
	if x.TornTail() {
		add(0, ProblemTornTail, "the file does not end in a newline: the last write was interrupted", "drop the partial line")
	}
	// Ids and parents: from the index alone.
	firstLineOf := make(map[string]int, x.Len())
	for i := range x.Len() {
		id := x.ID(i)
		if prev, ok := firstLineOf[id]; ok {
			add(x.Line(i), ProblemDuplicateID, fmt.Sprintf("id %q is also line %d's; the later entry wins", id, prev), "")
			continue
		}
		firstLineOf[id] = x.Line(i)
	}
	for i := range x.Len() {
		if p := x.ParentID(i); p != "" {
			if _, ok := firstLineOf[p]; !ok {
				repair := "make it a root"
				if i > 0 {
					repair = fmt.Sprintf("re-parent it to the entry before it (line %d)", x.Line(i-1))
				}
				add(x.Line(i), ProblemDanglingParent, fmt.Sprintf("parent %q is not in the file: a context built through it loses everything above", p), repair)
			}
		}
	}
	// Blob references: in a message's text (handed to the model as text),
	// and wherever omp resolves them (any entry type). A line that cannot
	// name one is not parsed: a long session costs its reads, not its
	// decoding.
	blobs := opts.Blobs
	if blobs == nil {
		blobs = x.s.blobStore()
	}
	var buf []byte
	for i := range x.Len() {
		raw, err := x.AppendRaw(buf[:0], i)
		if err != nil {
			return nil, err
		}
		buf = raw
		if !mayNameBlob(raw) {
			continue
		}
		if x.Type(i) == TypeMessage {
			e, err := x.Entry(i)
			if err != nil {
				return nil, err
			}
			if m := e.Message(); m != nil {
				verifyTextRefs(m, e.line, add)
			}
		}
		verifyBlobs(raw, x.Line(i), blobs, add)
	}
	verifyOmpOpens(x, add)
	if more := x.Malformed() - listed; more > 0 {
		add(0, ProblemMalformed, fmt.Sprintf("%d more bad lines not listed", more), "drop them")
	}
	sortProblems(probs)
	return probs, nil
}

// verifyOmpOpens reports what omp throws on as it opens the file and
// rebuilds the context at its leaf: one problem for the first entry of
// each kind of fault, with how many more there are.
func verifyOmpOpens(x *Index, add func(line int, kind ProblemKind, detail, repair string)) {
	const cannot = ": omp throws on it, so it cannot resume the file"
	more := func(n int) string {
		if n > 1 {
			return fmt.Sprintf(" (and %d more such lines)", n-1)
		}
		return ""
	}
	if n := x.s.nullLines; n > 0 {
		add(x.s.firstNull, ProblemOmpRefuses, string(faultNullLine)+cannot+more(n), "drop the line (the original keeps it)")
	}
	first, count := map[string]int{}, map[string]int{}
	var order []string
	for i := range x.Len() {
		f := x.LoadFault(i)
		if f == "" {
			continue
		}
		if count[f] == 0 {
			first[f] = x.Line(i)
			order = append(order, f)
		}
		count[f]++
	}
	for _, f := range order {
		add(first[f], ProblemOmpRefuses, f+cannot+more(count[f]), "")
	}
	if c, err := x.readContext(); err == nil && c.OmpRefuses != "" {
		add(c.OmpRefusesLine, ProblemOmpRefuses, c.OmpRefuses+", on the path to the leaf"+cannot, "")
	}
}

// mayNameBlob reports whether a line can hold a blob reference once
// parsed: it spells one, or has an escape that could spell one.
func mayNameBlob(raw []byte) bool {
	return bytes.Contains(raw, []byte(BlobRefPrefix)) || bytes.Contains(raw, []byte(`\u`))
}

// verifyTextRefs reports blob references in a message's text, which omp
// hands the model verbatim.
func verifyTextRefs(m *ai.Message, line int, add func(line int, kind ProblemKind, detail, repair string)) {
	for _, b := range m.Content.Blocks {
		if b.Type == ai.BlockText && strings.Contains(b.Text, BlobRefPrefix) {
			add(line, ProblemTextBlobRef, "a text block holds a blob reference, which omp gives the model as text", "")
		}
	}
	if m.Content.IsString && strings.Contains(m.Content.String, BlobRefPrefix) {
		add(line, ProblemTextBlobRef, "the message text holds a blob reference, which omp gives the model as text", "")
	}
}

// verifyBlobs checks every blob reference of an entry that omp resolves on
// load (the positions blobResolver follows): malformed, missing, or whose
// bytes no longer hash to its name (omp sends those bytes all the same).
func verifyBlobs(raw []byte, line int, blobs *BlobStore, add func(line int, kind ProblemKind, detail, repair string)) {
	v, err := jsonx.Parse(raw)
	if err != nil {
		return
	}
	r := &blobResolver{get: func(ref string) ([]byte, error) {
		if _, err := parseBlobRef(ref); err != nil {
			add(line, ProblemBadBlob, err.Error(), "")
			return nil, err
		}
		if blobs == nil {
			add(line, ProblemMissingBlob, "an image blob, but the file is not in a data dir with a blob store", "")
			return nil, ErrBadBlobRef
		}
		data, err := blobs.Get(ref)
		switch {
		case errors.Is(err, ErrBlobCorrupt):
			add(line, ProblemCorruptBlob, err.Error()+"; omp sends these bytes to the model all the same", "")
		case err != nil:
			add(line, ProblemMissingBlob, err.Error(), "")
		}
		return data, err
	}}
	r.resolve(v, "")
}

// sortProblems orders problems by line, file-level ones (line 0) last.
func sortProblems(p []Problem) {
	key := func(x Problem) int {
		if x.Line == 0 {
			return math.MaxInt
		}
		return x.Line
	}
	slices.SortStableFunc(p, func(a, b Problem) int { return cmp.Compare(key(a), key(b)) })
}

// firstLine returns line 1 of path with its newline, at most 64 KiB.
func firstLine(path string) ([]byte, error) {
	f, _, err := openRegular(path, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, err := f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return nil, err
	}
	buf = buf[:n]
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		buf = buf[:i+1]
	}
	return buf, nil
}

// looksLikeSlot reports a line 1 meant as a title slot ("type":"title")
// that ParseTitleSlot may still refuse (its title is not a string).
func looksLikeSlot(line []byte) bool {
	v, err := jsonx.Parse(bytes.TrimSpace(line))
	return err == nil && v.Get("type").Is("title")
}

// Repair writes a repaired copy of the session at path to dst (path +
// ".repaired" when dst is ""; not a .jsonl name, so no listing shows the
// copy beside the original) and returns the changes it made, which are
// the repairable problems Verify reports. The original is never touched:
// review the copy, then move it over the original yourself.
//
// The copy has omp's slot (the title kept), version 3 (v1 and v2 migrated
// as omp's first write would migrate them), every entry that was readable,
// byte for byte unless migrated or re-parented, and no malformed or torn
// lines. An entry whose parent is missing is re-parented to the entry
// before it in the file (a root if it is first), which is where the chain
// most likely ran: omp's createBranchedSession, for one, drops label
// entries that others point at.
func Repair(path, dst string) ([]Problem, error) {
	probs, err := Verify(path, nil)
	if err != nil {
		return nil, err
	}
	var changes []Problem
	for _, p := range probs {
		if p.Kind == ProblemNoHeader {
			return nil, fmt.Errorf("repair %s: no session header; nothing to repair from", path)
		}
		if p.Repair != "" {
			changes = append(changes, p)
		}
	}
	if len(changes) == 0 {
		return nil, nil
	}
	if dst == "" {
		dst = RepairedPath(path)
	}
	first, err := firstLine(path)
	if err != nil {
		return nil, err
	}
	// A rejected slot makes the index refuse the file: read it without.
	x, err := OpenIndex(path, &OpenOptions{skipLine1: looksLikeSlot(first)})
	if err != nil {
		return nil, err
	}
	defer x.Close()
	title, source := x.Title()
	if slot, ok := parseTitleSlotLenient(first); ok {
		title, source = slot.Title, slot.Source
	}
	if source == TitleSubagent {
		source = TitleNone
	}
	slot, err := MarshalTitleSlot(title, source, Now())
	if err != nil {
		return nil, err
	}
	header := x.Header().raw
	if x.Version() < CurrentVersion {
		if header, err = jsonx.ReplaceMember(header, "version", []byte("3")); err != nil {
			return nil, err
		}
	}
	known := make(map[string]bool, x.Len())
	for i := range x.Len() {
		known[x.ID(i)] = true
	}
	err = createFile(dst, func(w io.Writer) error {
		if _, err := w.Write(slot); err != nil {
			return err
		}
		if _, err := w.Write(append(bytes.Clone(header), '\n')); err != nil {
			return err
		}
		// Migrated, and re-parented when the parent is missing.
		return x.writeMigrated(w, allIndexes(x.Len()), func(i int, line []byte) ([]byte, error) {
			p := x.ParentID(i)
			if p == "" || known[p] {
				return line, nil
			}
			parent := []byte("null")
			if i > 0 {
				parent, _ = jsonx.Marshal(x.ID(i - 1))
			}
			return jsonx.ReplaceMember(line, "parentId", parent)
		})
	})
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("repair %s: %w: %s is left from an earlier repair; review it and move it over the original, or remove it, then run again", path, fs.ErrExist, dst)
	}
	if err != nil {
		return nil, fmt.Errorf("repair %s: %w", path, err)
	}
	// Re-parenting moves entries onto the leaf's path; one omp throws on
	// would make a file omp resumed one it cannot. The copy goes then.
	if !slices.ContainsFunc(probs, func(p Problem) bool { return p.Kind == ProblemOmpRefuses }) {
		if err := ompResumes(dst); err != nil {
			if rerr := os.Remove(dst); rerr != nil {
				err = errors.Join(err, rerr)
			}
			return nil, fmt.Errorf("repair %s: re-parenting the entries whose parent is missing: %w; nothing was written", path, err)
		}
	}
	return changes, nil
}

// ompResumes returns nil when omp can rebuild the context at the leaf of
// the session file at path (see ErrOmpWouldRefuse).
func ompResumes(path string) error {
	x, err := OpenIndex(path, nil)
	if err != nil {
		return err
	}
	defer x.Close()
	if x.Len() == 0 {
		return nil
	}
	return x.ompResumesAt(x.Leaf())
}

// parseTitleSlotLenient reads line 1 as a slot if it is meant as one: a
// slot ParseTitleSlot reads, or one whose title is unreadable (no title).
func parseTitleSlotLenient(line []byte) (TitleSlot, bool) {
	if slot, ok := ParseTitleSlot(line); ok {
		slot.Title = CleanTitle(slot.Title)
		return slot, true
	}
	return TitleSlot{}, looksLikeSlot(line)
}

func sizeOf(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

// RepairedPath is where Repair writes the repaired copy of path by default:
// beside it, under a name no listing takes for a session.
func RepairedPath(path string) string { return path + ".repaired" }

// FileReport is what VerifyDataDir found in one file.
type FileReport struct {
	Path     string
	Problems []Problem
	Err      error // the file could not be verified at all
}

// VerifyDataDir verifies every session file (*.jsonl) under
// <dataDir>/sessions, at any depth, in path order. A symlink there is
// reported as ProblemSymlink and never followed: it could lead anywhere.
// progress, when not nil, is called after each file with the count done
// and the total. The error is for a sessions directory that cannot be
// read; a file that cannot be is reported in its FileReport.
func VerifyDataDir(dataDir string, opts *VerifyOptions, progress func(done, total int)) ([]FileReport, error) {
	root := SessionsDir(dataDir)
	var files []string
	var reports []FileReport
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.Type()&fs.ModeSymlink != 0:
			reports = append(reports, FileReport{Path: p, Problems: []Problem{{Path: p, Kind: ProblemSymlink,
				Detail: "a symlink in the data dir; not followed (it could lead anywhere)"}}})
		case d.IsDir() && p != root && strings.HasPrefix(d.Name(), "."):
			if fi, err := d.Info(); err == nil && isLeftover(p, fi) {
				reports = append(reports, FileReport{Path: p, Problems: []Problem{{Path: p, Kind: ProblemLeftover,
					Detail: "a temp directory a killed writer left (a new project directory, not yet renamed into place)",
					Repair: "remove it"}}})
				return fs.SkipDir
			}
			if atomicfile.IsTemp(d.Name()) {
				return fs.SkipDir // being made: its file is not a session's yet
			}
		case !d.IsDir() && strings.HasSuffix(p, ".jsonl"):
			files = append(files, p)
		case d.Type().IsRegular() && strings.HasPrefix(d.Name(), "."):
			if fi, err := d.Info(); err == nil && isLeftover(p, fi) {
				reports = append(reports, FileReport{Path: p, Problems: []Problem{{Path: p, Kind: ProblemLeftover,
					Detail: fmt.Sprintf("a temp file or lockfile a killed writer left (%s)", sizeOf(fi.Size())),
					Repair: "remove it"}}})
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", root, err)
	}
	out := make([]FileReport, 0, len(files)+len(reports))
	for i, f := range files {
		probs, err := Verify(f, opts)
		out = append(out, FileReport{Path: f, Problems: probs, Err: err})
		if progress != nil {
			progress(i+1, len(files))
		}
	}
	return append(out, reports...), nil
}
