package usagecache

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strconv"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/usage"
)

// A LedgerFile is a file a ledger read, as the ledger files kept beside
// its counted file say it (LedgerFilesPath): its cache key's owner
// (OwnerOf), its stamp, whether the ledger counted its session alone
// (usage.Session.Alone), its session's lineage (LineageOf), and the hash
// of its last bytes (TailHash; 0 where not taken). They say which files
// changed since the groups were counted, whether each only grew, and
// whether the groups of those may be counted again (ReplaceCounted)
// rather than a ledger built again.
type LedgerFile struct {
	Owner   uint64
	Stamp   Stamp
	Alone   bool
	Lineage uint64
	Tail    uint64
}

// LedgerFilesPath is where the files of the ledger whose groups the
// counted file at counted holds are kept.
func LedgerFilesPath(counted string) string { return counted + ".files" }

const ledgerFilesMagic = "xdev ledger files 1\n"

// maxLedgerFiles bounds the file read: about 40 bytes a file, a million
// files.
const maxLedgerFiles = 64 << 20

// The bytes of a ledger files file: its magic; the files' sum (N as a
// varint, Lo and Hi in 8 bytes each); a count of files, then each one's
// owner (8 bytes), size and time (varints), inode (a varint), flags (1:
// alone), lineage and tail (8 bytes each), by owner; and the CRC-32 of
// all before it (4 bytes).

// WriteLedgerFiles writes the files fs of a ledger, whose sum is files
// (its Counted.Files), to path, atomically. fs is sorted by owner.
func WriteLedgerFiles(path string, files StampSum, fs []LedgerFile) error {
	slices.SortFunc(fs, func(a, b LedgerFile) int { return cmp.Compare(a.Owner, b.Owner) })
	return atomicfile.ReplaceCache(path, func(w io.Writer) error {
		b := append([]byte(nil), ledgerFilesMagic...)
		b = binary.AppendUvarint(b, uint64(files.N))
		b = binary.LittleEndian.AppendUint64(b, files.Lo)
		b = binary.LittleEndian.AppendUint64(b, files.Hi)
		b = binary.AppendUvarint(b, uint64(len(fs)))
		for _, f := range fs {
			b = binary.LittleEndian.AppendUint64(b, f.Owner)
			b = binary.AppendVarint(b, f.Stamp.Size)
			b = binary.AppendVarint(b, f.Stamp.ModTime)
			b = binary.AppendUvarint(b, f.Stamp.Ino)
			flags := uint64(0)
			if f.Alone {
				flags |= 1
			}
			b = binary.AppendUvarint(b, flags)
			b = binary.LittleEndian.AppendUint64(b, f.Lineage)
			b = binary.LittleEndian.AppendUint64(b, f.Tail)
		}
		b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
		_, err := w.Write(b)
		return err
	})
}

// errNotLedgerFiles is what a file that is not one whole ledger files
// file of this version is, read.
var errNotLedgerFiles = errors.New("not a whole ledger files file of this version")

// ReadLedgerFiles reads the files WriteLedgerFiles wrote at path, by
// owner, and the sum they were written for. A file that is not one whole
// is an error naming it.
func ReadLedgerFiles(path string) (files StampSum, fs []LedgerFile, err error) {
	b, err := regularfile.ReadFile(path, maxLedgerFiles)
	if err != nil {
		return files, nil, err
	}
	bad := func() (StampSum, []LedgerFile, error) {
		return StampSum{}, nil, fmt.Errorf("%s: %w", path, errNotLedgerFiles)
	}
	if len(b) < len(ledgerFilesMagic)+4 || string(b[:len(ledgerFilesMagic)]) != ledgerFilesMagic ||
		crc32.ChecksumIEEE(b[:len(b)-4]) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return bad()
	}
	r := &usageReader{b: unsafeString(b[len(ledgerFilesMagic) : len(b)-4])}
	files.N = int(r.uvarint())
	files.Lo, files.Hi = r.fixed64(), r.fixed64()
	// 28 bytes: the least a file takes, its owner, lineage and tail and
	// a byte for each of its numbers.
	fs = make([]LedgerFile, r.countOf(28))
	for k := range fs {
		f := &fs[k]
		f.Owner = r.fixed64()
		f.Stamp.Size, f.Stamp.ModTime, f.Stamp.Ino = r.varint(), r.varint(), r.uvarint()
		f.Alone = r.uvarint()&1 != 0
		f.Lineage, f.Tail = r.fixed64(), r.fixed64()
		if k > 0 && f.Owner <= fs[k-1].Owner {
			r.fail()
		}
	}
	if r.bad || len(r.b) != 0 || files.N != len(fs) {
		return bad()
	}
	return files, fs, nil
}

// FindLedgerFile is where the file of owner is among fs (sorted by
// owner, as ReadLedgerFiles reads them), ok false for none.
func FindLedgerFile(fs []LedgerFile, owner uint64) (k int, ok bool) {
	return slices.BinarySearchFunc(fs, owner, func(f LedgerFile, o uint64) int { return cmp.Compare(f.Owner, o) })
}

// LineageOf is the hash of what links session s to others in a ledger
// (usage.Ledger): its harness, id, parent, whether it is a subagent's,
// and the origin it was imported from. A session read again whose
// lineage is as it was, among sessions none of which changed, is linked
// to the same ones.
func LineageOf(s *usage.Session) uint64 {
	origin := "-"
	if s.ImportOf != nil {
		origin = s.ImportOf.Harness + "\x00" + s.ImportOf.ID
	}
	return hashName(s.Harness + "\x00" + s.ID + "\x00" + s.Parent + "\x00" + strconv.FormatBool(s.Subagent) + "\x00" + origin)
}
