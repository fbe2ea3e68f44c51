package usagecache

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/xdev/xdev/internal/usage"
)

// The usage cache's bytes, after its magic, all in varints but where
// said:
//
//	calls:   each entry's calls (a record's last part, below), back to
//	         back, in no order a reader relies on
//	head:    a count, then per entry its key, its stamp (size, mtime,
//	         inode), flags (1: it shares a request with another entry;
//	         2: racy, see cachedUsage), the hash of its file's end (8
//	         bytes), its session's id and parent, its record's head
//	         (length first), and where its calls are in the calls part
//	         (offset and length); then the requests: a count, then per
//	         request of every entry its key and its entry's key's hash
//	         (8 bytes each, little-endian), by key
//	trailer: where the head begins (8 bytes), and the CRC-32 of every
//	         byte after the magic up to it (4 bytes)
//
// The calls come first and apart so that a reader holds the head only
// (a warm ledger takes each session's digest, and the calls of the few
// counted call by call), and a writer streams them from the old file.
//
// A session's record is its strings (a table: a model named by each of
// its calls is written once), its header (harness, path, id, parent,
// project, title, import origin, flags, skipped), its models (three
// strings each), its digest (usage.Bucket): its head; then its calls,
// length first, so that a session whose digest is all a ledger needs is
// never decoded further. A number that is a whole number from 0 to 2⁵³ (token counts,
// times in ms) is its value plus one; any other is a 0 and its 8 bytes.
// Decoding checks every length against what is left, so damage the
// checksum missed gives no cache, never a panic or a large allocation.

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendNum(b []byte, f float64) []byte {
	if f >= 0 && f <= 1<<53 && f == math.Trunc(f) {
		return binary.AppendUvarint(b, uint64(f)+1)
	}
	b = append(b, 0)
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

func appendTokens(b []byte, t usage.Tokens) []byte {
	for _, n := range []float64{t.Input, t.Output, t.CacheRead, t.CacheWrite, t.CacheWrite1h, t.Reasoning} {
		b = appendNum(b, n)
	}
	return b
}

// encodeSession is s's record: its header, digest and calls.
func encodeSession(s *usage.Session, digest []usage.Bucket) []byte {
	strs := map[string]uint64{}
	var table []string
	ref := func(x string) uint64 {
		k, ok := strs[x]
		if !ok {
			k = uint64(len(table))
			strs[x] = k
			table = append(table, x)
		}
		return k
	}
	var body []byte
	var origin [2]string
	flags := uint64(0)
	if s.Subagent {
		flags |= 1
	}
	if s.ImportOf != nil {
		flags |= 2
		origin = [2]string{s.ImportOf.Harness, s.ImportOf.ID}
	}
	for _, x := range []string{s.Harness, s.Path, s.ID, s.Parent, s.Project, s.Title, origin[0], origin[1]} {
		body = binary.AppendUvarint(body, ref(x))
	}
	body = binary.AppendUvarint(body, flags)
	body = binary.AppendUvarint(body, uint64(s.Skipped))
	modelOf := map[usage.ModelRef]uint64{}
	var refs []usage.ModelRef
	note := func(m usage.ModelRef) {
		if _, ok := modelOf[m]; !ok {
			modelOf[m] = uint64(len(refs))
			refs = append(refs, m)
		}
	}
	for _, c := range s.Calls {
		note(c.Model)
	}
	for _, b := range digest {
		note(b.Model)
	}
	body = binary.AppendUvarint(body, uint64(len(refs)))
	for _, m := range refs {
		n := m.Name()
		for _, x := range []string{n.Provider, n.Model, n.API} {
			body = binary.AppendUvarint(body, ref(x))
		}
	}
	body = binary.AppendUvarint(body, uint64(len(digest)))
	for k := range digest {
		body = appendBucket(body, &digest[k], modelOf[digest[k].Model])
	}
	var calls []byte
	calls = binary.AppendUvarint(calls, uint64(len(s.Calls)))
	for _, c := range s.Calls {
		f := uint64(0)
		if c.HasCost {
			f |= 1
		}
		if c.Imported {
			f |= 2
		}
		if c.Entry != 0 {
			f |= 4
		}
		if c.Request != 0 {
			f |= 8
		}
		calls = binary.AppendUvarint(calls, f)
		calls = binary.AppendUvarint(calls, modelOf[c.Model])
		if c.Entry != 0 {
			calls = binary.LittleEndian.AppendUint64(calls, c.Entry)
		}
		if c.Request != 0 {
			calls = binary.LittleEndian.AppendUint64(calls, c.Request)
		}
		calls = binary.AppendUvarint(calls, uint64(c.MalformedUsageCounters))
		calls = appendNum(calls, c.Time)
		calls = appendTokens(calls, c.Tokens)
		calls = appendNum(calls, c.Total)
		calls = appendNum(calls, c.Cost)
	}
	b := binary.AppendUvarint(nil, uint64(len(table)))
	for _, x := range table {
		b = appendString(b, x)
	}
	b = append(b, body...)
	b = binary.AppendUvarint(b, uint64(len(calls)))
	return append(b, calls...)
}

// appendBucket encodes a bucket, its model as its place (model) in a
// table beside it.
func appendBucket(b []byte, d *usage.Bucket, model uint64) []byte {
	b = binary.AppendVarint(b, d.Quarter)
	b = appendNum(b, d.First)
	b = appendNum(b, d.Last)
	b = binary.AppendUvarint(b, model)
	b = appendTokens(b, d.Tokens)
	b = binary.AppendUvarint(b, uint64(d.Calls))
	b = binary.AppendUvarint(b, uint64(d.Malformed))
	for k := range d.Cost {
		b = appendNum(b, d.Cost[k])
		b = binary.AppendUvarint(b, uint64(d.Unpriced[k]))
	}
	return b
}

// bucket reads what appendBucket wrote into d, but its model, whose
// place in the table it returns.
func (r *usageReader) bucket(d *usage.Bucket) (model uint64) {
	d.Quarter, d.First, d.Last = r.varint(), r.num(), r.num()
	model = r.uvarint()
	d.Tokens = r.tokens()
	d.Calls, d.Malformed = int(r.uvarint()), int(r.uvarint())
	for m := range d.Cost {
		d.Cost[m], d.Unpriced[m] = r.num(), int(r.uvarint())
	}
	return model
}

// appendEntry encodes what the file's head and the journal say of an
// entry before its record: its key, stamp, flags (1: it shares a
// request with another; 2: racy), the hash of its file's end, and its
// session's id and parent.
func appendEntry(b []byte, key string, e Entry, shared bool) []byte {
	b = appendString(b, key)
	b = binary.AppendVarint(b, e.Stamp.Size)
	b = binary.AppendVarint(b, e.Stamp.ModTime)
	b = binary.AppendUvarint(b, e.Stamp.Ino)
	flags := uint64(0)
	if shared {
		flags |= 1
	}
	if e.Racy {
		flags |= 2
	}
	b = binary.AppendUvarint(b, flags)
	b = binary.LittleEndian.AppendUint64(b, e.tail)
	b = appendString(b, e.ID)
	return appendString(b, e.Parent)
}

// entry reads what appendEntry wrote.
func (r *usageReader) entry() (string, Entry) {
	key := r.str()
	e := Entry{Stamp: Stamp{Size: r.varint(), ModTime: r.varint(), Ino: r.uvarint()}}
	flags := r.uvarint()
	e.shared, e.Racy = flags&1 != 0, flags&2 != 0
	e.tail = r.fixed64()
	e.ID = r.str()
	e.Parent = r.str()
	return key, e
}

// usageReader reads what the encoder wrote, from a string: what it
// hands out (names, records) are substrings of it, never copies. Its
// first failure sticks.
type usageReader struct {
	b   string
	bad bool
}

func (r *usageReader) fail() { r.bad, r.b = true, "" }

// unsafeString is b as a string, with no copy: b must never change
// after.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func (r *usageReader) uvarint() uint64 {
	var v uint64
	for i := 0; i < len(r.b) && i < binary.MaxVarintLen64; i++ {
		c := r.b[i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				break // overflows 64 bits
			}
			r.b = r.b[i+1:]
			return v | uint64(c)<<(7*i)
		}
		v |= uint64(c&0x7f) << (7 * i)
	}
	r.fail()
	return 0
}

func (r *usageReader) varint() int64 {
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// countOf reads a count of items of at least size bytes each: one that
// what is left cannot hold is damage (and would allocate for nothing).
func (r *usageReader) countOf(size int) int {
	n := r.uvarint()
	if n > uint64(len(r.b)/size) {
		r.fail()
		return 0
	}
	return int(n)
}

func (r *usageReader) str() string {
	n := r.countOf(1)
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

func (r *usageReader) fixed64() uint64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	v := uint64(r.b[0]) | uint64(r.b[1])<<8 | uint64(r.b[2])<<16 | uint64(r.b[3])<<24 |
		uint64(r.b[4])<<32 | uint64(r.b[5])<<40 | uint64(r.b[6])<<48 | uint64(r.b[7])<<56
	r.b = r.b[8:]
	return v
}

func (r *usageReader) fixed32() uint32 {
	if len(r.b) < 4 {
		r.fail()
		return 0
	}
	v := uint32(r.b[0]) | uint32(r.b[1])<<8 | uint32(r.b[2])<<16 | uint32(r.b[3])<<24
	r.b = r.b[4:]
	return v
}

func (r *usageReader) num() float64 {
	v := r.uvarint()
	if v > 0 {
		return float64(v - 1)
	}
	return math.Float64frombits(r.fixed64())
}

func (r *usageReader) tokens() usage.Tokens {
	return usage.Tokens{Input: r.num(), Output: r.num(), CacheRead: r.num(), CacheWrite: r.num(), CacheWrite1h: r.num(), Reasoning: r.num()}
}

// The least a bucket and a call take: a byte for each of their numbers
// (a bucket's 18: its quarter, first and last times, model, six token
// counts, calls, malformed, and a cost and unpriced count in each of
// three modes; it said 20, and a file of buckets that small, calls of
// no time and no price, did not read back).
const (
	bucketMinBytes = 18
	callMinBytes   = 12
)

// Decoded is a session record read up to its calls, which Calls reads
// on demand.
type Decoded struct {
	Session *usage.Session
	Digest  []usage.Bucket
	refs    []usage.ModelRef
	calls   string
	// load reads the calls from the cache file when they are not in
	// memory (calls is then empty).
	load func() (string, bool)
}

// Decode reads a whole session record: its head and its calls.
func Decode(b string) (Decoded, bool) {
	r := &usageReader{b: b}
	d, ok := decodeHead(r)
	if !ok {
		return Decoded{}, false
	}
	d.calls = r.str()
	if r.bad || len(r.b) != 0 {
		return Decoded{}, false
	}
	return d, true
}

// decodeStored reads a record's head, kept apart from its calls, which
// load reads when they are asked for.
func decodeStored(head string, load func() (string, bool)) (Decoded, bool) {
	r := &usageReader{b: head}
	d, ok := decodeHead(r)
	if !ok || len(r.b) != 0 {
		return Decoded{}, false
	}
	d.load = load
	return d, true
}

// splitRecord cuts a whole record (encodeSession's) into its head and
// its calls' encoding, as the cache file keeps them apart.
func splitRecord(rec string) (head, calls string, ok bool) {
	r := &usageReader{b: rec}
	if _, ok := decodeHead(r); !ok {
		return "", "", false
	}
	head = rec[:len(rec)-len(r.b)]
	calls = r.str()
	if r.bad || len(r.b) != 0 {
		return "", "", false
	}
	return head, calls, true
}

// decodeHead reads a record up to its calls, leaving r there.
func decodeHead(r *usageReader) (Decoded, bool) {
	table := make([]string, r.countOf(1))
	for k := range table {
		table[k] = r.str()
	}
	at := func() string {
		k := r.uvarint()
		if k >= uint64(len(table)) {
			r.fail()
			return ""
		}
		return table[k]
	}
	s := &usage.Session{Harness: at(), Path: at(), ID: at(), Parent: at(), Project: at(), Title: at()}
	origin := usage.Origin{Harness: at(), ID: at()}
	flags := r.uvarint()
	s.Subagent = flags&1 != 0
	if flags&2 != 0 {
		s.ImportOf = &origin
	}
	s.Skipped = int(r.uvarint())
	refs := make([]usage.ModelRef, r.countOf(3))
	for k := range refs {
		refs[k] = usage.RefModel(at(), at(), at())
	}
	digest := make([]usage.Bucket, r.countOf(bucketMinBytes))
	for k := range digest {
		if m := r.bucket(&digest[k]); m < uint64(len(refs)) {
			digest[k].Model = refs[m]
		} else {
			r.fail()
		}
	}
	if r.bad {
		return Decoded{}, false
	}
	return Decoded{Session: s, Digest: digest, refs: refs}, true
}

// Calls reads the calls of a record Decode read, from the cache file
// where they were left there.
func (d Decoded) Calls() ([]usage.Call, bool) {
	b := d.calls
	if d.load != nil {
		var ok bool
		if b, ok = d.load(); !ok {
			return nil, false
		}
	}
	r := &usageReader{b: b}
	calls := make([]usage.Call, r.countOf(callMinBytes))
	for k := range calls {
		c := &calls[k]
		f := r.uvarint()
		c.HasCost, c.Imported = f&1 != 0, f&2 != 0
		if m := r.uvarint(); m < uint64(len(d.refs)) {
			c.Model = d.refs[m]
		} else {
			r.fail()
		}
		if f&4 != 0 {
			c.Entry = r.fixed64()
		}
		if f&8 != 0 {
			c.Request = r.fixed64()
		}
		c.MalformedUsageCounters = int(r.uvarint())
		c.Time = r.num()
		c.Tokens = r.tokens()
		c.Total, c.Cost = r.num(), r.num()
	}
	if r.bad || len(r.b) != 0 {
		return nil, false
	}
	return calls, true
}
