package session

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"sync"
)

// DefaultMaxLineBytes bounds the memory one line may take. A longer line is
// skipped (and counted as malformed) without being held in memory.
const DefaultMaxLineBytes = 64 << 20

// lineReader yields the lines of a session file with their offsets. A line
// longer than max is consumed but not returned whole; its tooLong flag is set.
type lineReader struct {
	r       *bufio.Reader
	pool    *sync.Pool // where r came from (bigReaders, smallReaders), nil if made; release hands it back
	max     int
	off     int64 // offset of the next line
	buf     []byte
	lineNum int
	// keep, when not zero, is how much of a too-long line to return: its
	// first keep bytes, in prefix (reused from line to line).
	keep   int
	prefix []byte
	// at, when the reader is also an io.ReaderAt (a file, a section of
	// one), reads a line longer than the buffer in one piece once its end
	// is found, into a slice of its size: appending it piece by piece
	// would hold up to twice the line, and its copies on the way.
	at   io.ReaderAt
	base int64 // the offset of the reader's first byte
}

type rawLine struct {
	data    []byte // without the newline; valid until the next call
	off     int64  // offset of the first byte
	size    int64  // bytes consumed, newline included
	num     int    // 1-based line number
	tooLong bool   // data is nil, or with lineReader.keep the line's start
	eol     bool   // ended in '\n' (false only for the last line of a torn file)
}

func newLineReader(r io.Reader, off int64, max int) *lineReader {
	return newLineReaderSize(r, off, max, readBufferFor(r))
}

// maxReadBuffer is the read buffer of a line reader of a large file.
const maxReadBuffer = 1 << 20

// readBufferFor is the read buffer for r: maxReadBuffer, or less when r
// says it holds less (its Size, or a file's Stat). Most sessions are tens
// of KB, and a reader of each of 10,000 with a buffer of 1 MiB would
// allocate (and clear) 10 GB to read 250 MB.
func readBufferFor(r io.Reader) int {
	var size int64 = -1
	switch r := r.(type) {
	case interface{ Size() int64 }:
		size = r.Size()
	case interface{ Stat() (fs.FileInfo, error) }:
		if fi, err := r.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
	}
	if size < 0 {
		return maxReadBuffer
	}
	return int(min(max(size+1, 4096), maxReadBuffer))
}

// newLineReaderSize is newLineReader with a read buffer of size bytes
// (longer lines are still read whole, in pieces): a small one when only
// the first lines of a file are wanted.
func newLineReaderSize(r io.Reader, off int64, max, size int) *lineReader {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	lr := &lineReader{max: max, off: off, base: off}
	switch {
	case size >= maxReadBuffer:
		lr.r, lr.pool = bigReaders.Get().(*bufio.Reader), &bigReaders
	case size > smallReadBuffer/2 && size <= smallReadBuffer:
		lr.r, lr.pool = smallReaders.Get().(*bufio.Reader), &smallReaders
	case size > smallReadBuffer:
		// Less than a MiB to read, more than 64 KiB: a big buffer, used
		// again, beats one made the file's size and cleared.
		lr.r, lr.pool = bigReaders.Get().(*bufio.Reader), &bigReaders
	default:
		lr.r = bufio.NewReaderSize(r, size)
	}
	if lr.pool != nil {
		lr.r.Reset(r)
	}
	lr.at, _ = r.(io.ReaderAt)
	return lr
}

// bigReaders are read buffers of maxReadBuffer, used again: a search's
// snippets each read one line of a large session, and a buffer apiece
// was a MiB of garbage a hit (28 MB a page of a common word's hits).
// smallReaders are those of smallReadBuffer, for files of 32–64 KiB. A
// file of less than 32 KiB gets a buffer its size, cheap to make; one
// between 64 KiB and 1 MiB a big one: a usage ledger's first read of
// 10,000 omp sessions (950 MB) made a buffer the size of each, most of
// its time allocating and clearing them.
var (
	bigReaders   = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, maxReadBuffer) }}
	smallReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, smallReadBuffer) }}
)

// smallReadBuffer is the size of smallReaders' buffers.
const smallReadBuffer = 64 << 10

// release hands the read buffer back once the reader is done: nothing it
// returned may be used after.
func (lr *lineReader) release() {
	if lr.pool != nil {
		lr.r.Reset(nil)
		lr.pool.Put(lr.r)
		lr.r, lr.pool = nil, nil
	}
}

// next returns the next line, or io.EOF.
func (lr *lineReader) next() (rawLine, error) {
	l := rawLine{off: lr.off}
	lr.buf = lr.buf[:0]
	lr.prefix = lr.prefix[:0]
	for {
		chunk, err := lr.r.ReadSlice('\n')
		l.size += int64(len(chunk))
		if l.tooLong && len(lr.prefix) < lr.keep {
			lr.prefix = append(lr.prefix, chunk[:min(len(chunk), lr.keep-len(lr.prefix))]...)
		}
		if !l.tooLong {
			if len(lr.buf)+len(chunk) > lr.max+1 {
				l.tooLong = true
				if lr.keep > 0 {
					lr.prefix = append(lr.prefix, lr.buf[:min(len(lr.buf), lr.keep)]...)
					lr.prefix = append(lr.prefix, chunk[:min(len(chunk), max(0, lr.keep-len(lr.prefix)))]...)
				}
				lr.buf = lr.buf[:0]
			} else if err == nil && len(lr.buf) == 0 {
				// Whole line in the buffer: no copy.
				l.data = chunk
			} else {
				lr.buf = append(lr.buf, chunk...)
			}
		}
		if err == nil {
			l.eol = true
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			if lr.at != nil && !l.tooLong && len(lr.buf) == len(chunk) {
				return lr.long(l)
			}
			continue
		}
		if errors.Is(err, io.EOF) {
			if l.size == 0 {
				return l, io.EOF
			}
			break
		}
		return l, err
	}
	if l.data == nil {
		l.data = lr.buf
	}
	if l.tooLong {
		l.data = nil
		if lr.keep > 0 {
			l.data = lr.prefix
		}
	}
	l.data = bytes.TrimSuffix(l.data, []byte("\n"))
	l.data = bytes.TrimSuffix(l.data, []byte("\r"))
	lr.off += l.size
	lr.lineNum++
	l.num = lr.lineNum
	return l, nil
}

// long reads on the line l whose first buffer's worth has been read: to
// its end, without holding it, then (when it is not too long) all of it
// at once from its offset.
func (lr *lineReader) long(l rawLine) (rawLine, error) {
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.r.ReadSlice('\n')
		l.size += int64(len(chunk))
		if err == nil {
			l.eol = true
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			break
		}
		return l, err
	}
	n := l.size
	if l.eol {
		n--
	}
	read := func(size int64) ([]byte, error) {
		b := make([]byte, size)
		if _, err := lr.at.ReadAt(b, l.off-lr.base); err != nil {
			return nil, err
		}
		return b, nil
	}
	var err error
	switch {
	case l.size > int64(lr.max)+1:
		l.tooLong = true
		if lr.keep > 0 {
			l.data, err = read(min(n, int64(lr.keep)))
			lr.prefix = l.data
		}
	default:
		l.data, err = read(n)
		l.data = bytes.TrimSuffix(l.data, []byte("\r"))
	}
	if err != nil {
		return l, err
	}
	lr.off += l.size
	lr.lineNum++
	l.num = lr.lineNum
	return l, nil
}

// blank reports whether a line holds only JSON whitespace; such lines are
// skipped silently, as omp skips them.
func blank(b []byte) bool {
	return len(bytes.Trim(b, " \t\r\n")) == 0
}
