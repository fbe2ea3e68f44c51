package session

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/xdev/xdev/internal/atomicfile"
)

// A checkpoint is what the windowed load (openBackward) read of a file's
// lines, kept so that the next load of the same file reads only the lines
// appended since: an agent's session grows by appends, and each open of a
// long one otherwise reads every line's envelope again (for parity with
// omp, which reads every line, a line anywhere can matter: a duplicate
// id, a fault, a setting on the path).
//
// It holds the walk's input, not its result: each line of the file's
// entries, last first, as the walk met it (blank, skipped and why, or an
// entry's envelope and place). A load with a checkpoint walks the new
// lines from the file, then the checkpoint's lines, so it takes the same
// steps, in the same order, as a load of the whole file: the result is
// the same by construction, whatever the walk decides (TestCheckpoint
// holds the two to it on generated files that grow, are rewritten and
// are damaged).
//
// It is trusted only for the file it was taken of, unchanged up to where
// it was taken: the same path, inode, entries offset, format version and
// line bound; at least as long as then, its modification time the same if
// no longer; and the same bytes in 18 pieces of 4 KiB spread over the
// region it covers, its first and last among them (a rewrite by rename
// changes the inode; an edit in place changes the time, and one that a
// later append hides from the time is seen if it touches a piece). An
// edit in place between the pieces, then an append, is what it cannot
// see: no harness edits a session so (omp's one write in place is the
// title slot, before the region). The checkpoint file carries a checksum of
// itself: a torn or damaged one is ignored and replaced.
//
// checkpointFormat names what an envelope and a line's verdict say. Any
// change to them (envelope.go, ompfault.go, the bad-line rules) must bump
// it, or loads would walk an older reading of the old lines.
const checkpointFormat = 1

// checkpointMinBytes is the smallest file a load keeps a checkpoint of:
// a smaller one is read whole in a few milliseconds. (A variable for the
// tests, which take checkpoints of small files.)
var checkpointMinBytes int64 = 8 << 20

// checkpointMaxBytes bounds a checkpoint's lines (about 40 bytes an
// entry): past it a load keeps none rather than hold more.
const checkpointMaxBytes = 16 << 20

// checkpointLimit is how many bytes of lines a load of a file of size
// bytes records for its checkpoint before it gives up: checkpointMaxBytes,
// and an eighth of the file. An agent's entries are 300 bytes to several
// KB (real Codex rollouts 300-400, Claude and pi 1-2 KB, the generated
// corpus 6.7 KB), so their lines take 1-13% of it; a file of a great many
// tiny entries (a hostile chain of 300,000) would make the record a third
// of the file, held while it is read, and is left without one.
func checkpointLimit(size int64) int {
	return int(min(checkpointMaxBytes, size/checkpointShare))
}

// checkpointShare is the part of a file its checkpoint may take (a
// variable for the tests, whose files are all tiny entries).
var checkpointShare int64 = 8

// checkpointSampleBytes is how much of the region's start and end is
// compared with the file.
const checkpointSampleBytes = 4096

const checkpointMagic = "xdev checkpoint\n"

// The kinds of a checkpoint's lines.
const (
	ckBlank byte = iota
	ckBad
	ckEntry
)

// walkLine is one line as the backward walk takes it.
type walkLine struct {
	kind byte
	bad  BadLine // ckBad: its kind and reason (the line is numbered by the walk)
	off  int64   // ckEntry: where the entry starts, and its length
	size int
	env  envelope
}

// checkpoint is a checkpoint as read from its file.
type checkpoint struct {
	ino        uint64
	end        int64 // the region's end: the file's length then (its last line whole)
	mtime      int64
	entriesOff int64
	version    int
	maxLine    int
	sum        uint32 // regionSum of the region
	lines      []byte // the region's lines, last first, encoded
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checkpointPath is where the checkpoint of the session file at path
// lives in dir.
func checkpointPath(dir, path string) string {
	sum := sha256.Sum256([]byte(absPath(path)))
	return filepath.Join(dir, hex.EncodeToString(sum[:12])+".ckpt")
}

// checkpointSamples is how many pieces of checkpointSampleBytes, evenly
// spread from the region's first bytes to its last, its checksum covers:
// an edit in place anywhere near one is seen, reading 72 KiB, not the
// region.
const checkpointSamples = 18

// regionSum is the checksum of the samples of [lo, hi) of f.
func regionSum(f io.ReaderAt, lo, hi int64) (uint32, error) {
	buf := make([]byte, min(hi-lo, checkpointSampleBytes))
	span := hi - lo - int64(len(buf))
	var sum uint32
	for i := range int64(checkpointSamples) {
		if _, err := f.ReadAt(buf, lo+span*i/(checkpointSamples-1)); err != nil {
			return 0, err
		}
		sum = crc32.Update(sum, castagnoli, buf)
	}
	return sum, nil
}

// loadCheckpoint returns the checkpoint kept for the file s is loading,
// of size bytes read through f with preamble pre, when there is one it
// may trust; nil otherwise.
func (s *Store) loadCheckpoint(f io.ReaderAt, pre preamble, size int64) *checkpoint {
	if s.opts.Checkpoints == "" || s.file.ino == 0 || size < checkpointMinBytes {
		return nil // none is kept of a file this short: not even a lookup
	}
	b, err := os.ReadFile(checkpointPath(s.opts.Checkpoints, s.path))
	if err != nil {
		return nil
	}
	ck, ok := decodeCheckpoint(b, s.path)
	if !ok || ck.ino != s.file.ino || ck.entriesOff != pre.entriesOff || ck.version != pre.header.FormatVersion() ||
		ck.maxLine != s.maxLine() || ck.end > size || ck.end == size && ck.mtime != s.file.mtime || ck.end <= ck.entriesOff {
		return nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], ck.end-1); err != nil || last[0] != '\n' {
		return nil
	}
	if sum, err := regionSum(f, ck.entriesOff, ck.end); err != nil || sum != ck.sum {
		return nil
	}
	return ck
}

// maxLine is the line bound the load applies.
func (s *Store) maxLine() int {
	if s.opts.MaxLineBytes > 0 {
		return s.opts.MaxLineBytes
	}
	return DefaultMaxLineBytes
}

// saveCheckpoint keeps lines (the file's entries' lines, last first,
// encoded) as the checkpoint of the file s loaded, of size bytes read
// through f with preamble pre, all of whose lines were whole. It is a
// cache: a failure to write it is no failure of the load. The lines are
// written from their chunks, never gathered into one copy.
func (s *Store) saveCheckpoint(f io.ReaderAt, pre preamble, size int64, lines *lineRecord) {
	if size <= pre.entriesOff {
		return
	}
	sum, err := regionSum(f, pre.entriesOff, size)
	if err != nil {
		return
	}
	if os.MkdirAll(s.opts.Checkpoints, 0o700) != nil {
		return
	}
	b := []byte(checkpointMagic)
	b = binary.AppendUvarint(b, checkpointFormat)
	b = appendString(b, absPath(s.path))
	for _, v := range []uint64{s.file.ino, uint64(size), uint64(s.file.mtime), uint64(pre.entriesOff),
		uint64(pre.header.FormatVersion()), uint64(s.maxLine()), uint64(sum)} {
		b = binary.AppendUvarint(b, v)
	}
	b = binary.AppendUvarint(b, uint64(lines.n))
	crc := crc32.Checksum(b, castagnoli)
	for _, c := range lines.chunks {
		crc = crc32.Update(crc, castagnoli, c)
	}
	atomicfile.ReplaceCache(checkpointPath(s.opts.Checkpoints, s.path), func(w io.Writer) error {
		if _, err := w.Write(b); err != nil {
			return err
		}
		for _, c := range lines.chunks {
			if _, err := w.Write(c); err != nil {
				return err
			}
		}
		_, err := w.Write(binary.LittleEndian.AppendUint32(nil, crc))
		return err
	})
	pruneCheckpoints(s.opts.Checkpoints, time.Now())
}

// checkpointMaxAge is how long a checkpoint not rewritten stays: one of a
// session deleted or no longer read goes after it; one still read but
// unchanged costs one whole load to take again.
const checkpointMaxAge = 30 * 24 * time.Hour

// pruneCheckpoints removes the checkpoints in dir not written for
// checkpointMaxAge (as of now), and temp files of writers that are gone.
func pruneCheckpoints(dir string, now time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue
		}
		if filepath.Ext(e.Name()) == ".ckpt" && now.Sub(info.ModTime()) > checkpointMaxAge || atomicfile.Leftover(e.Name(), info) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// decodeCheckpoint reads a checkpoint file's bytes b, which must be whole
// (its checksum) and of this format and this path.
func decodeCheckpoint(b []byte, path string) (*checkpoint, bool) {
	if len(b) < len(checkpointMagic)+4 || !bytes.HasPrefix(b, []byte(checkpointMagic)) {
		return nil, false
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, false
	}
	d := ckDecoder{b: body[len(checkpointMagic):]}
	if d.uvarint() != checkpointFormat || d.string() != absPath(path) {
		return nil, false
	}
	ck := &checkpoint{ino: d.uvarint(), end: int64(d.uvarint()), mtime: int64(d.uvarint()), entriesOff: int64(d.uvarint()),
		version: int(d.uvarint()), maxLine: int(d.uvarint()), sum: uint32(d.uvarint())}
	n := d.uvarint()
	if d.err != nil || n != uint64(len(d.b)) {
		return nil, false
	}
	ck.lines = d.b
	return ck, true
}

// A lineRecord is the lines a load records for its checkpoint, encoded
// (appendLine), in chunks of recordChunkBytes: one slice grown as it goes
// would hold its old and new arrays at each doubling (12 MB at once for
// the 8 MB of a 1.8 GB session's lines), and the lines of the checkpoint
// the load started from are kept as they are, not copied.
type lineRecord struct {
	chunks [][]byte
	n      int // the bytes of all chunks
}

// recordChunkBytes is the size of a lineRecord's chunks.
const recordChunkBytes = 256 << 10

// add encodes l after the lines recorded.
func (r *lineRecord) add(l *walkLine) {
	k := len(r.chunks) - 1
	// A new chunk when the last is nearly full, or is not one of ours (a
	// checkpoint's lines, which an append would copy).
	if k < 0 || len(r.chunks[k]) >= recordChunkBytes-512 || cap(r.chunks[k]) != recordChunkBytes {
		r.chunks = append(r.chunks, make([]byte, 0, recordChunkBytes))
		k++
	}
	before := len(r.chunks[k])
	r.chunks[k] = appendLine(r.chunks[k], l)
	r.n += len(r.chunks[k]) - before
}

// addEncoded takes lines already encoded (a checkpoint's) after the
// lines recorded; the record refers to them, so they must not change.
func (r *lineRecord) addEncoded(lines []byte) {
	if len(lines) > 0 {
		r.chunks = append(r.chunks, lines[:len(lines):len(lines)])
		r.n += len(lines)
	}
}

// appendLine encodes l.
func appendLine(b []byte, l *walkLine) []byte {
	b = append(b, l.kind)
	switch l.kind {
	case ckBad:
		b = appendString(b, string(l.bad.Kind))
		b = appendString(b, l.bad.Reason)
	case ckEntry:
		e := &l.env
		b = binary.AppendUvarint(b, uint64(l.off))
		b = binary.AppendUvarint(b, uint64(l.size))
		b = appendString(b, e.typ)
		b = appendString(b, e.id)
		b = appendString(b, e.parentID)
		b = appendString(b, e.firstKept)
		b = appendString(b, e.modelRole)
		b = binary.AppendVarint(b, int64(e.keptIndex))
		b = append(b, faultCode(e.fault), flagBits(e.assistant, e.notes, e.bogus, e.readsBack))
	}
	return b
}

func flagBits(flags ...bool) byte {
	var b byte
	for i, f := range flags {
		if f {
			b |= 1 << i
		}
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// ckDecoder reads what appendLine and saveCheckpoint wrote; the first
// error sticks.
type ckDecoder struct {
	b   []byte
	err error
}

var errCheckpoint = errors.New("damaged checkpoint")

func (d *ckDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err, d.b = errCheckpoint, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *ckDecoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err, d.b = errCheckpoint, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *ckDecoder) byte() byte {
	if len(d.b) == 0 {
		d.err = errCheckpoint
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *ckDecoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.err, d.b = errCheckpoint, nil
		return nil
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}

func (d *ckDecoder) string() string { return string(d.bytes()) }

// line decodes the next line into l.
func (d *ckDecoder) line(l *walkLine) bool {
	*l = walkLine{kind: d.byte()}
	switch l.kind {
	case ckBlank:
	case ckBad:
		l.bad = BadLine{Kind: BadKind(d.string()), Reason: d.string()}
	case ckEntry:
		e := &l.env
		l.off, l.size = int64(d.uvarint()), int(d.uvarint())
		e.typ = intern(d.bytes())
		e.id, e.parentID, e.firstKept, e.modelRole = d.string(), d.string(), d.string(), d.string()
		e.keptIndex = int(d.varint())
		code, flags := d.byte(), d.byte()
		if int(code) < len(ompFaults) {
			e.fault = ompFaults[code]
		} else {
			d.err = errCheckpoint
		}
		e.assistant, e.notes, e.bogus, e.readsBack = flags&1 != 0, flags&2 != 0, flags&4 != 0, flags&8 != 0
	default:
		d.err = errCheckpoint
	}
	return d.err == nil
}
