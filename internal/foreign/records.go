package foreign

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/session"
)

// record is one readable object line of a foreign transcript.
type record struct {
	v    jsonx.Value
	line int
}

// openTranscript opens a foreign transcript for reading, through zstd
// when its name ends in .zst (Codex compresses old rollouts).
func openTranscript(path string) (io.ReadCloser, error) {
	f, _, err := regularfile.Open(path, 0)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(path, ".zst") {
		return f, nil
	}
	// One decoding goroutine and a bounded window: a transcript is read
	// once, front to back.
	d, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(1<<27))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return zstdFile{d, f}, nil
}

type zstdFile struct {
	*zstd.Decoder
	f *os.File
}

// Read says that an error is the decompression's: "unexpected EOF" alone
// does not tell a truncated .zst from a torn line.
func (z zstdFile) Read(p []byte) (int, error) {
	n, err := z.Decoder.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("decompressing zstd: %w", err)
	}
	return n, err
}

func (z zstdFile) Close() error {
	z.Decoder.Close()
	return z.f.Close()
}

// eachRecord calls fn with every line of the file at path that JSON.parse
// reads as an object, as omp's readForeignJsonRecords yields them, one at
// a time: memory follows the longest line, not the file. It returns how
// many lines with something on them it skipped: a torn last line, junk, a
// JSON value that is not an object, a line longer than
// session.DefaultMaxLineBytes (omp would hold that one; xdev's bound is
// the store's). fn's error stops the read.
func eachRecord(path string, fn func(record) error) (skipped int, err error) {
	return eachLine(path, func(b []byte, line int) (bool, error) {
		v, perr := jsonx.Parse(b)
		if perr != nil || v.Kind() != jsonx.Object {
			return false, nil
		}
		return true, fn(record{v, line})
	})
}

// jsonSpaceOnly reports whether b is only what JSON calls white space
// (space, tab, newline, carriage return): what may follow a line's object
// for JSON.parse to read it. Go's unicode spaces are not (a no-break
// space after the object makes the line unreadable).
func jsonSpaceOnly(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// lineReaders are eachLine's buffered readers, each of 256 KiB: reading
// thousands of transcripts allocates one per reader at work, not one per
// file. A longer line is read in pieces (lineReader); more buffer
// buys no speed, and is held while a first index converts transcripts.
var lineReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 256<<10) }}

// headBuffers hold what a listing reads of a transcript's head or tail
// (claudeHeadBytes): a listing of ten thousand transcripts reuses a few
// rather than allocating, and collecting, two a file.
var headBuffers = sync.Pool{New: func() any { b := make([]byte, claudeHeadBytes); return &b }}

// readPooled reads up to claudeHeadBytes of r into a buffer from
// headBuffers, which done gives back.
func readPooled(r io.Reader) (head []byte, done func()) {
	bp := headBuffers.Get().(*[]byte)
	n, _ := io.ReadFull(r, *bp)
	return (*bp)[:n], func() { headBuffers.Put(bp) }
}

// eachLine calls fn with every line of the file at path (one over
// session.DefaultMaxLineBytes is skipped unread), each its own copy: what
// fn parses of it (jsonx.Parse keeps the text a value was read from, to
// write it again) may be kept. It returns how many of the lines with
// something on them fn did not take (ok false: not a record) or were too
// long. fn's error stops the read.
func eachLine(path string, fn func(b []byte, line int) (ok bool, err error)) (skipped int, err error) {
	return eachLineInPlace(path, 0, func(b []byte, line int) (bool, error) {
		return fn(bytes.Clone(b), line)
	})
}

// eachLineInPlace is eachLine from byte offset from of a file that is
// not compressed (the end of a line read before: its lines are numbered
// from 1 again), each line read in place: b, and any value parsed from
// it, is valid only until fn returns. A scan that keeps nothing of a
// line (a usage scan: numbers and copied strings) reads 800 MB of
// transcripts without allocating a line.
func eachLineInPlace(path string, from int64, fn func(b []byte, line int) (ok bool, err error)) (skipped int, err error) {
	r, err := openTranscript(path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	if from > 0 {
		f, ok := r.(*os.File)
		if !ok {
			return 0, fmt.Errorf("%s: a compressed transcript is read from its start", path)
		}
		if _, err := f.Seek(from, io.SeekStart); err != nil {
			return 0, err
		}
	}
	br := lineReaders.Get().(*bufio.Reader)
	br.Reset(r)
	defer func() {
		br.Reset(nil)
		lineReaders.Put(br)
	}()
	lr := lineReader{br: br}
	for line := 1; ; line++ {
		b, over, err := lr.next(session.DefaultMaxLineBytes)
		switch {
		case over:
			skipped++
		case len(bytes.TrimSpace(b)) > 0:
			ok, ferr := fn(b, line)
			if ferr != nil {
				return skipped, ferr
			}
			if !ok {
				skipped++
			}
		}
		if errors.Is(err, io.EOF) {
			return skipped, nil
		}
		if err != nil {
			return skipped, fmt.Errorf("%s: line %d: %w", path, line, err)
		}
	}
}

// documentMaxBytes bounds a transcript that is one JSON document (a
// Gemini CLI chat, a Continue session, a Cline task's file), read whole.
const documentMaxBytes = 512 << 20

// readDocument reads the file at path, one JSON document of what's
// ("a Gemini chat"), whole: its bytes (capacity their length, for
// jsonx.Elements' offsets) and its value. Over documentMaxBytes it is
// refused rather than read; a document cut short is an error naming
// the file.
func readDocument(path, what string) ([]byte, jsonx.Value, error) {
	f, fi, err := regularfile.Open(path, 0)
	if err != nil {
		return nil, jsonx.Value{}, err
	}
	defer f.Close()
	if fi.Size() > documentMaxBytes {
		return nil, jsonx.Value{}, fmt.Errorf("%s: %s of %d MiB, over the %d MiB read whole", path, what, fi.Size()>>20, documentMaxBytes>>20)
	}
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, jsonx.Value{}, fmt.Errorf("%s: %w", path, err)
	}
	v, err := jsonx.Parse(b)
	if err != nil {
		return nil, jsonx.Value{}, fmt.Errorf("%s: not a whole JSON document (cut short?): %w", path, err)
	}
	return b, v, nil
}
