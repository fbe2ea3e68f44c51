package usagecache

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/usage"
)

// A LedgerFile is a file a ledger read, as the ledger files kept beside
// its counted file say it (LedgerFilesPath): its cache key's owner
// (OwnerOf), its stamp, whether the ledger counted its session alone
// (usage.Session.Alone), its session's lineage (LineageOf), the lines
// the ledger skipped of it (usage.Session.Skipped), and the hash of its
// last bytes (TailHash; 0 where not taken). They say which files
// changed since the groups were counted, whether each only grew, and
// whether the groups of those may be counted again (ReplaceCounted)
// rather than a ledger built again.
type LedgerFile struct {
	Owner   uint64
	Stamp   Stamp
	Alone   bool
	Lineage uint64
	Skipped int
	Tail    uint64
}

// LedgerFiles are what the ledger files beside a counted file hold: the
// files the ledger read, and what its sessions hold that a new session
// could share with them. A session new since is counted into the groups
// by its digest alone only where it shares none of it (internal/catalog's
// recount); else a ledger is built.
type LedgerFiles struct {
	Sum   StampSum     // of the files (the counted file's Files)
	Files []LedgerFile // by owner
	// Requests are the keys of the sessions' calls (CallKeys): a session
	// holding one of them holds a copy of a call counted (a resumed
	// Claude Code transcript's lines, a fork's entries).
	Requests KeySet
	// Known are the names the sessions are known by to others, Links
	// those they name (SessionNames): a session whose names are among
	// them is of a lineage of theirs, or an import of one, or named by
	// one.
	Known, Links KeySet
}

// A KeySet is a set of hashes, sorted, each once. What a ledger's sessions
// hold may be more than they do (a file read before that changed since):
// a set is asked only whether it may hold a key.
type KeySet []uint64

// NewKeySet is the set of keys.
func NewKeySet(keys []uint64) KeySet {
	return KeySet(slices.Compact(slices.Sorted(slices.Values(keys))))
}

// HasAny reports whether the set holds one of keys.
func (s KeySet) HasAny(keys []uint64) bool {
	for _, k := range keys {
		if _, ok := slices.BinarySearch(s, k); ok {
			return true
		}
	}
	return false
}

// With is the set and keys, a new set (s is not changed): the few keys
// merged in, where sorting the set with them again took 15 ms of a
// recount at 25,001 sessions.
func (s KeySet) With(keys []uint64) KeySet {
	if len(keys) == 0 {
		return s
	}
	add := NewKeySet(keys)
	out := make(KeySet, 0, len(s)+len(add))
	for len(s) > 0 && len(add) > 0 {
		switch {
		case s[0] < add[0]:
			out, s = append(out, s[0]), s[1:]
		case s[0] > add[0]:
			out, add = append(out, add[0]), add[1:]
		default:
			out, s, add = append(out, s[0]), s[1:], add[1:]
		}
	}
	return append(append(out, s...), add...)
}

// SessionNames are the hashes of the names a ledger (usage.Ledger) knows
// session s by, known, and of those it links s to, links: its id, path
// and origin (harness and id) others' Parent and ImportOf name, and its
// own Parent and ImportOf. Two sessions of which one's links are among
// the other's known names may be of one lineage, or an import and its
// source; two known by one name (one id) make the ledger's name of it
// another's. Paths are named as written and cleaned both, which the
// ledger's lookups take either of.
func SessionNames(s *usage.Session) (known, links []uint64) {
	known = append(known, hashName("id\x00"+s.ID), hashName("origin\x00"+s.Harness+"\x00"+s.ID))
	path := s.Path
	if !filepath.IsAbs(path) {
		path, _ = filepath.Abs(path)
	}
	known = append(known, hashName("path\x00"+path), hashName("path\x00"+filepath.Clean(path)))
	if s.Parent != "" {
		links = append(links, hashName("id\x00"+s.Parent), hashName("path\x00"+s.Parent), hashName("path\x00"+filepath.Clean(s.Parent)))
	}
	if s.ImportOf != nil {
		links = append(links, hashName("origin\x00"+s.ImportOf.Harness+"\x00"+s.ImportOf.ID))
	}
	return known, links
}

// LedgerFilesPath is where the files of the ledger whose groups the
// counted file at counted holds are kept.
func LedgerFilesPath(counted string) string { return counted + ".files" }

const ledgerFilesMagic = "xdev ledger files 2\n"

// maxLedgerFiles bounds the file read: about 40 bytes a file and 8 a
// call, a million files.
const maxLedgerFiles = 256 << 20

// The bytes of a ledger files file: its magic; the files' sum (N as a
// varint, Lo and Hi in 8 bytes each); a count of files, then each one's
// owner (8 bytes), size and time (varints), inode (a varint), flags (1:
// alone), lines skipped (a varint), lineage and tail (8 bytes each), by owner; the requests, the
// known names and the links, each a count then its keys (8 bytes each),
// rising; and the CRC-32 of all before it (4 bytes).

// WriteLedgerFiles writes the ledger files lf to path, atomically.
// lf.Files is sorted by owner.
func WriteLedgerFiles(path string, lf LedgerFiles) error {
	fs := lf.Files
	slices.SortFunc(fs, func(a, b LedgerFile) int { return cmp.Compare(a.Owner, b.Owner) })
	return atomicfile.ReplaceCache(path, func(w io.Writer) error {
		b := make([]byte, 0, len(ledgerFilesMagic)+40*len(fs)+8*(len(lf.Requests)+len(lf.Known)+len(lf.Links))+64)
		b = append(b, ledgerFilesMagic...)
		b = binary.AppendUvarint(b, uint64(lf.Sum.N))
		b = binary.LittleEndian.AppendUint64(b, lf.Sum.Lo)
		b = binary.LittleEndian.AppendUint64(b, lf.Sum.Hi)
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
			b = binary.AppendUvarint(b, uint64(f.Skipped))
			b = binary.LittleEndian.AppendUint64(b, f.Lineage)
			b = binary.LittleEndian.AppendUint64(b, f.Tail)
		}
		for _, set := range []KeySet{lf.Requests, lf.Known, lf.Links} {
			b = binary.AppendUvarint(b, uint64(len(set)))
			for _, k := range set {
				b = binary.LittleEndian.AppendUint64(b, k)
			}
		}
		b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
		_, err := w.Write(b)
		return err
	})
}

// errNotLedgerFiles is what a file that is not one whole ledger files
// file of this version is, read.
var errNotLedgerFiles = errors.New("not a whole ledger files file of this version")

// ReadLedgerFiles reads the ledger files WriteLedgerFiles wrote at path.
// A file that is not one whole is an error naming it.
func ReadLedgerFiles(path string) (LedgerFiles, error) {
	var lf LedgerFiles
	b, err := regularfile.ReadFile(path, maxLedgerFiles)
	if err != nil {
		return lf, err
	}
	bad := func() (LedgerFiles, error) {
		return LedgerFiles{}, fmt.Errorf("%s: %w", path, errNotLedgerFiles)
	}
	if len(b) < len(ledgerFilesMagic)+4 || string(b[:len(ledgerFilesMagic)]) != ledgerFilesMagic ||
		crc32.ChecksumIEEE(b[:len(b)-4]) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return bad()
	}
	r := &usageReader{b: unsafeString(b[len(ledgerFilesMagic) : len(b)-4])}
	lf.Sum.N = int(r.uvarint())
	lf.Sum.Lo, lf.Sum.Hi = r.fixed64(), r.fixed64()
	// 29 bytes: the least a file takes, its owner, lineage and tail and
	// a byte for each of its numbers.
	fs := make([]LedgerFile, r.countOf(29))
	for k := range fs {
		f := &fs[k]
		f.Owner = r.fixed64()
		f.Stamp.Size, f.Stamp.ModTime, f.Stamp.Ino = r.varint(), r.varint(), r.uvarint()
		f.Alone = r.uvarint()&1 != 0
		if skipped := r.uvarint(); skipped <= math.MaxInt32 {
			f.Skipped = int(skipped)
		} else {
			r.fail()
		}
		f.Lineage, f.Tail = r.fixed64(), r.fixed64()
		if k > 0 && f.Owner <= fs[k-1].Owner {
			r.fail()
		}
	}
	lf.Files = fs
	for _, set := range []*KeySet{&lf.Requests, &lf.Known, &lf.Links} {
		keys := make(KeySet, r.countOf(8))
		for k := range keys {
			keys[k] = r.fixed64()
			if k > 0 && keys[k] <= keys[k-1] {
				r.fail()
			}
		}
		*set = keys
	}
	if r.bad || len(r.b) != 0 || lf.Sum.N != len(fs) {
		return bad()
	}
	return lf, nil
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
