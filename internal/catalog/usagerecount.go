package catalog

import (
	"os"
	"slices"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/usage"
	"github.com/xdev/xdev/internal/usagecache"
)

// A ledger kept across changes. Where a ledger of every session of the
// places wrote its groups (usagecache.Counted), it writes beside them
// the files it read (usagecache.LedgerFile): each one's stamp, whether
// its session was counted by its digest alone (usage.Session.Alone), and
// its session's lineage. A later walk that finds a few of those files
// changed, each one that
//
//   - the ledger counted alone,
//   - only grew (the same inode, more bytes, and the bytes that ended it
//     as they were: usagecache.TailHash), a file of one session (not a
//     database or a chat history of many) written lately, and
//   - reads now as a session of the same lineage (harness, id, parent,
//     subagent, import origin: usagecache.LineageOf),
//
// and no file new or gone, has those sessions read again and their
// groups replaced by their new digests' (usagecache.ReplaceCounted):
// what a ledger built again would count, since nothing links them to
// another session that did not link them before. It costs the changed
// files' reads and a read of the groups, where a ledger decodes every
// session (at 25,001 sessions, 0.55 s and 87 MiB for one that grew).
//
// What a session grew by holds calls of its own: an agent appends the
// responses it is given. A file that takes a copy of another's requests
// is a new one (Claude Code's resume), and a ledger is built for it.
// The requests of the sessions read again are checked against each
// other's, never against those of the files that did not change (their
// index is the usage cache's, which this does not read).

// maxRecount is the most files counted again: past it, a ledger.
const maxRecount = 16

// recountRecent is how lately a file was written for the ledger files to
// take its end (usagecache.LedgerFile.Tail), and so for it to be counted
// again when it grows: a file untouched for longer that grows has a
// ledger built, and its end taken then.
const recountRecent = 7 * 24 * time.Hour

// A recountPlan is what planRecount found: the sessions of the files
// that changed, read again, and the ledger files as they are to be
// written once their groups are.
type recountPlan struct {
	path     string // of the ledger files
	was      usagecache.StampSum
	kept     []usagecache.LedgerFile
	recounts []usagecache.Recount
	changed  []recounted // of each recount
	// keys and stamps are every job's, for a server (keep).
	keys   []string
	stamps []usagecache.Stamp
}

// recounted is what the usage cache keeps a session read again by.
type recounted struct {
	key, file   string
	stamp       usagecache.Stamp
	incremental bool
}

// planRecount reads again the sessions of the jobs whose files changed
// since the ledger files beside the counted file at counted were
// written, where they may be counted again (above), the jobs' files now
// summing to files, for a server where server (keep); ok is false where
// they may not.
func planRecount(counted string, jobs []usageJob, files usagecache.StampSum, server bool) (p recountPlan, ok bool) {
	p.path = usagecache.LedgerFilesPath(counted)
	was, kept, err := usagecache.ReadLedgerFiles(p.path)
	if err != nil || len(kept) != len(jobs) {
		return p, false // none, or files new or gone
	}
	p.was, p.kept = was, kept
	type change struct {
		job  int
		at   int // in kept
		path string
	}
	var changes []change
	sum := was
	for k := range jobs {
		j := &jobs[k]
		if j.known == nil {
			return p, false
		}
		at, ok := usagecache.FindLedgerFile(kept, usagecache.OwnerOf(j.key))
		if !ok {
			return p, false
		}
		f, now := kept[at], *j.known
		if now == f.Stamp {
			continue
		}
		_, path, _ := strings.Cut(j.key, " ")
		if !f.Alone || j.wal || j.file != path || len(changes) == maxRecount ||
			f.Tail == 0 || now.Ino != f.Stamp.Ino || now.Size <= f.Stamp.Size || usagecache.TailHash(path, f.Stamp.Size) != f.Tail {
			return p, false // not one that only grew
		}
		changes = append(changes, change{job: k, at: at, path: path})
		sum.Remove(j.key, f.Stamp)
		sum.Add(j.key, now)
	}
	if len(changes) == 0 || sum != files {
		return p, false // the files kept are not the sum's
	}
	held := map[uint64]bool{} // the keys of the calls of the sessions read
	for _, c := range changes {
		j := &jobs[c.job]
		s, err := j.read()
		if err != nil || s.Path != c.path || usagecache.LineageOf(&s) != kept[c.at].Lineage {
			return p, false
		}
		// Each of its calls' keys once (a call may be known by two).
		for _, key := range slices.Compact(slices.Sorted(slices.Values(usagecache.CallKeys(s.Calls)))) {
			if held[key] {
				return p, false // two sessions read hold one call
			}
			held[key] = true
		}
		p.recounts = append(p.recounts, usagecache.Recount{Session: &s, Digest: usage.DigestSession(&s, usage.Prices())})
		now := *j.known
		p.changed = append(p.changed, recounted{key: j.key, file: j.file, stamp: now, incremental: j.readFrom != nil})
		kept[c.at].Stamp, kept[c.at].Tail = now, usagecache.TailHash(c.path, now.Size)
	}
	if server {
		p.keys, p.stamps = make([]string, len(jobs)), make([]usagecache.Stamp, len(jobs))
		for k, j := range jobs {
			p.keys[k], p.stamps[k] = j.key, *j.known
		}
	}
	return p, true
}

// keep puts the plan's sessions, read again, in the usage cache at path,
// and writes it: what a server does, which vouches for the cache holding
// every session as it is now (a ledger of a process it vouches to may
// read the cache, with no walk). ok is false where the cache did not
// hold every other job's session as it is: then the server builds a
// ledger.
func (p recountPlan) keep(path string) (ok bool) {
	cache := usagecache.Open(path)
	cache.Whole = true
	changed := make(map[string]bool, len(p.changed))
	for _, c := range p.changed {
		changed[c.key] = true
	}
	for k, key := range p.keys {
		if e, ok := cache.Old[key]; !changed[key] && (!ok || e.Stamp != p.stamps[k] || e.Racy) {
			return false // not a server's whole cache of these files
		}
	}
	for i, c := range p.changed {
		s := p.recounts[i].Session
		cache.Put(c.key, c.stamp, s, p.recounts[i].Digest, usagecache.CallKeys(s.Calls), c.file, c.incremental, c.stamp.Size)
	}
	cache.Save(p.keys, p.stamps)
	return true
}

// apply counts the plan's sessions again into the groups of the counted
// file at counted, the files summing to files (a server's, where server:
// only where the file is one), and writes the ledger files; it returns
// how many sessions it counted, or ok false where it wrote nothing (then
// the ledger files are gone too: a ledger writes them again).
func (p recountPlan) apply(counted string, files usagecache.StampSum, server bool) (n int, ok bool) {
	k := usagecache.Counted{Files: files}
	if server {
		k.Server = os.Getpid()
	}
	if _, err := usagecache.ReplaceCounted(counted, p.was, k, p.recounts); err != nil {
		return 0, false
	}
	if usagecache.WriteLedgerFiles(p.path, files, p.kept) != nil {
		os.Remove(p.path)
	}
	return len(p.recounts), true
}

// writeLedgerFiles writes the files of jobs beside the counted file at
// counted, of a ledger whose sessions (by job) byJob are, the files
// summing to files. Where they cannot be written, none are left: the
// next walk builds a ledger.
func writeLedgerFiles(counted string, files usagecache.StampSum, jobs []usageJob, byJob []*usage.Session) {
	path := usagecache.LedgerFilesPath(counted)
	now := time.Now().UnixNano()
	fs := make([]usagecache.LedgerFile, len(jobs))
	for k, j := range jobs {
		if j.known == nil {
			os.Remove(path)
			return
		}
		f := usagecache.LedgerFile{Owner: usagecache.OwnerOf(j.key), Stamp: *j.known}
		if s := byJob[k]; s != nil {
			f.Alone, f.Lineage = s.Alone(), usagecache.LineageOf(s)
			// The end of a file that may go on, to tell later that it
			// only grew: one written lately (an agent's), never one of
			// many sessions. Read for few files of thousands.
			if _, path, _ := strings.Cut(j.key, " "); f.Alone && !j.wal && j.file == path && now-f.Stamp.ModTime < int64(recountRecent) {
				f.Tail = usagecache.TailHash(path, f.Stamp.Size)
			}
		}
		fs[k] = f
	}
	if usagecache.WriteLedgerFiles(path, files, fs) != nil {
		os.Remove(path)
	}
}
