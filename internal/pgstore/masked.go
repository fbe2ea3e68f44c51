package pgstore

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"sort"

	"github.com/xdev/xdev/internal/secrets"
	"github.com/xdev/xdev/internal/session"
)

// A masked push stores each line of a session with the secrets in it
// masked (secrets.Detector.MaskJSON, one line at a time), so that what a
// team's store holds, and what a pull writes, is what xdev's pages and
// exports show: `[REDACTED kind …fp]` where a key was. A line is masked
// on its own, so the same line masks the same way on every push, and an
// append masks only the new lines.
//
// The stored lines are then not the file's bytes, nor at the file's
// offsets: a masked revision is read back as the stream of its masked
// lines, and the push record of the origin that pushed it remembers where
// that stream stood against its file (pushRecord.srcEnd, storedEnd) and a
// digest of the file's bytes before that point (tail), which stands for
// the byte comparison a raw push makes with the stored lines.

// maskedView is lines [from, to) of a file with their secrets masked,
// laid out from offset base on: the lines with nothing to mask are the
// file's own bytes, read through; the others are held masked.
type maskedView struct {
	src    io.ReaderAt
	base   int64
	end    int64 // base plus the masked lines' length
	pieces []piece
	slot   []byte // the masked title slot, when from is 0 and the file has one
	masked int    // how many secrets were masked
}

// piece is a run of a maskedView: the file's bytes from src, or text.
type piece struct {
	at     int64 // where it starts in the view
	n      int64
	src    int64
	text   []byte
	masked int // the secrets masked in text
}

// maskView reads lines [from, to) of src (to is a line's end) and masks
// them. name is the file's, for errors.
func maskView(name string, src io.ReaderAt, from, to, base int64) (*maskedView, error) {
	v := &maskedView{src: src, base: base, end: base}
	d := secrets.Default()
	r := bufio.NewReaderSize(io.NewSectionReader(src, from, to-from), 256<<10)
	at, seq := from, 0
	var line []byte
	for at < to {
		var err error
		if line, err = readLine(r, line, name, seq+1); err != nil {
			return nil, err
		}
		seq++
		isSlot := at == 0 && session.SlotLine(line) != nil
		var masked []byte
		var n int
		if isSlot {
			masked, n = maskSlot(d, line)
		} else if masked, n = maskLine(d, line[:len(line)-1]); n > 0 {
			masked = append(masked, '\n')
		}
		if n == 0 {
			v.add(piece{n: int64(len(line)), src: at})
		} else {
			v.add(piece{n: int64(len(masked)), text: masked, masked: n})
			v.masked += n
		}
		if isSlot {
			v.slot = bytes.Clone(line)
			if n > 0 {
				v.slot = masked
			}
		}
		at += int64(len(line))
	}
	return v, nil
}

// add appends p, joined to the last piece when both are runs of the file.
func (v *maskedView) add(p piece) {
	p.at = v.end
	v.end += p.n
	if k := len(v.pieces); k > 0 && p.text == nil {
		if last := &v.pieces[k-1]; last.text == nil && last.src+last.n == p.src {
			last.n += p.n
			return
		}
	}
	v.pieces = append(v.pieces, p)
}

// maskedFrom is how many secrets were masked in the lines from view
// offset off on: what a push that stores those lines masked.
func (v *maskedView) maskedFrom(off int64) int {
	n := 0
	for _, p := range v.pieces {
		if p.at >= off {
			n += p.masked
		}
	}
	return n
}

// ReadAt reads the view at view offsets; before base there is nothing.
func (v *maskedView) ReadAt(p []byte, off int64) (int, error) {
	if off < v.base {
		return 0, fmt.Errorf("masked view: offset %d is before its start %d", off, v.base)
	}
	n := 0
	i := sort.Search(len(v.pieces), func(i int) bool { return v.pieces[i].at+v.pieces[i].n > off })
	for ; n < len(p) && i < len(v.pieces); i++ {
		pc := v.pieces[i]
		in := off + int64(n) - pc.at
		want := min(int64(len(p)-n), pc.n-in)
		if pc.text != nil {
			copy(p[n:], pc.text[in:in+want])
		} else if _, err := v.src.ReadAt(p[n:n+int(want)], pc.src+in); err != nil {
			return n, err
		}
		n += int(want)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// maskedBytes is the lines of data (which ends with a newline) masked,
// and their view, which says where the secrets were.
func maskedBytes(name string, data []byte) ([]byte, *maskedView, error) {
	v, err := maskView(name, bytes.NewReader(data), 0, int64(len(data)), 0)
	if err != nil || v.masked == 0 {
		return data, v, err
	}
	out := make([]byte, v.end)
	_, err = v.ReadAt(out, 0)
	return out, v, err
}

// maskLine masks one line (without its newline): the JSON value in it,
// string by string, so that the line stays the JSON it was; a byte-order
// mark before it and blanks around it are kept as they were.
func maskLine(d *secrets.Detector, line []byte) ([]byte, int) {
	lo := 0
	if bytes.HasPrefix(line, []byte("\xef\xbb\xbf")) {
		lo = 3
	}
	body := bytes.TrimLeft(line[lo:], " \t")
	lo = len(line) - len(body)
	body = bytes.TrimRight(body, " \t\r")
	hi := lo + len(body)
	m, n := d.MaskJSON(body)
	if n == 0 {
		return nil, 0
	}
	out := make([]byte, 0, len(line)-len(body)+len(m))
	out = append(out, line[:lo]...)
	out = append(out, m...)
	return append(out, line[hi:]...), n
}

// maskSlot masks the title of a title slot, written again at the slot's
// width (a title that no longer fits is shortened, as omp shortens one).
func maskSlot(d *secrets.Detector, line []byte) ([]byte, int) {
	s, _ := session.ParseTitleSlot(line)
	title, n := d.Mask(s.Title)
	if n == 0 {
		return nil, 0
	}
	out, err := session.MarshalTitleSlot(title, s.Source, s.UpdatedAt)
	if err != nil {
		// A slot whose time leaves no room for a title keeps none.
		out, _ = session.MarshalTitleSlot("", s.Source, "")
	}
	return out, n
}

// tailDigest is the SHA-256 of a file's bytes [max(body, end-tailCheck),
// end): what a masked push compares with its record before it appends,
// where a raw push compares those bytes with the stored ones. body is the
// title slot's length, which is rewritten in place.
func tailDigest(f io.ReaderAt, body, end int64) ([]byte, error) {
	lo := max(body, end-tailCheck)
	if lo >= end {
		sum := sha256.Sum256(nil)
		return sum[:], nil
	}
	b := make([]byte, end-lo)
	if _, err := f.ReadAt(b, lo); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	return sum[:], nil
}

// storedPath is the path under the sessions dir a session is stored by:
// masked, for a masked push, where a project named by a key names its
// directory (a masked secret holds no slash, so the path keeps its
// directories). A pull into the data dir it came from finds the file by
// its masked path (localFiles).
func storedPath(rel string, masked bool) string {
	if !masked {
		return rel
	}
	return secrets.Mask(rel)
}
