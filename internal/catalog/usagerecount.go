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
// the files it read (usagecache.LedgerFiles): each one's stamp, whether
// its session was counted by its digest alone (usage.Session.Alone), its
// session's lineage and the lines skipped of it; and what its sessions
// hold that another could share: the keys of their calls, the names they
// are known by and those they name. A later walk that finds a few files
// changed, each one
//
//   - that the ledger counted alone, and that only grew (the same inode,
//     more bytes, and the bytes that ended it as they were:
//     usagecache.TailHash), a file of one session (not a database or a
//     chat history of many) written lately, and that reads now as a
//     session of the same lineage (harness, id, parent, subagent, import
//     origin: usagecache.LineageOf); or
//   - new since, a file of one session that names none of the ledger's
//     sessions and is named by none (it is of no lineage of theirs, an
//     import of none and imported by none: usagecache.SessionNames), and
//     whose calls are none of theirs (a resumed Claude Code transcript
//     copies its source's; a fork, its source's entries),
//
// and no file gone, has those sessions read (again) and their groups
// replaced by their new digests', or put after the others
// (usagecache.ReplaceCounted): what a ledger built again would count,
// since nothing links them to a session they were not linked to, and no
// group of another changes. It costs the changed files' reads and a read
// of the groups, where a ledger decodes every session (at 25,001
// sessions, 0.55 s and 87 MiB for one that grew or one new).
//
// What a session grew by holds calls of its own: an agent appends the
// responses it is given. The requests of the sessions read again are
// checked against each other's; a new one's against every session's
// too (those of the ledger files, with those of every session counted
// again since).

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
	files    usagecache.LedgerFiles
	recounts []usagecache.Recount
	changed  []recounted // of each recount
	// keys and stamps are every job's, for a server (keep); only the
	// changed ones' where partial (planChanged: no walk named the
	// others).
	keys    []string
	stamps  []usagecache.Stamp
	partial bool
	// held are the ledger files' files as they were read, by owner.
	held []usagecache.LedgerFile
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
// they may not. jobs are every file of the places (a walk's).
func planRecount(counted string, jobs []usageJob, files usagecache.StampSum, server bool) (p recountPlan, ok bool) {
	p.path = usagecache.LedgerFilesPath(counted)
	lf, err := usagecache.ReadLedgerFiles(p.path)
	if err != nil || len(lf.Files) > len(jobs) {
		return p, false // none, or files gone
	}
	changes, sum, found, ok := diffJobs(lf, jobs)
	if !ok || len(changes) == 0 || found != len(lf.Files) || sum != files {
		return p, false // a file gone, or the files kept are not the sum's
	}
	if server {
		p.keys, p.stamps = make([]string, len(jobs)), make([]usagecache.Stamp, len(jobs))
		for k, j := range jobs {
			p.keys[k], p.stamps[k] = j.key, *j.known
		}
	}
	return p, p.recount(lf, jobs, changes, files)
}

// planChanged is planRecount for a server told which files changed
// since it wrote the counted file at counted and its ledger files, the
// files then summing to was (usageChanged): jobs are those files' alone,
// and gone the cache keys of those that are no session now (a file
// removed, or no longer one of a harness's sessions). The other files
// are as the ledger files say. It returns the files' sum now; a plan
// with nothing to count again where none of jobs changed.
func planChanged(counted string, was usagecache.StampSum, jobs []usageJob, gone []string) (p recountPlan, files usagecache.StampSum, ok bool) {
	p.path = usagecache.LedgerFilesPath(counted)
	lf, err := usagecache.ReadLedgerFiles(p.path)
	if err != nil || lf.Sum != was {
		return p, files, false
	}
	for _, key := range gone {
		if _, held := usagecache.FindLedgerFile(lf.Files, usagecache.OwnerOf(key)); held {
			return p, files, false // a file gone: a ledger
		}
	}
	now := time.Now()
	for k := range jobs {
		if jobs[k].known == nil || jobs[k].known.Fresh(now) {
			return p, files, false
		}
	}
	changes, sum, _, ok := diffJobs(lf, jobs)
	if !ok {
		return p, files, false
	}
	if len(changes) == 0 {
		return p, sum, true
	}
	p.partial = true
	p.keys, p.stamps = make([]string, len(changes)), make([]usagecache.Stamp, len(changes))
	for k, c := range changes {
		p.keys[k], p.stamps[k] = jobs[c.job].key, *jobs[c.job].known
	}
	return p, sum, p.recount(lf, jobs, changes, sum)
}

// A fileChange is a job whose file changed since the ledger files were
// written: at is its place among their files, -1 for a file new since.
type fileChange struct {
	job, at int
	path    string
}

// diffJobs finds the jobs whose files changed since the ledger files lf
// were written, each one that may be counted again (above); ok is false
// where one may not. sum is lf's with the changed files' stamps now, and
// found counts the jobs of files lf holds.
func diffJobs(lf usagecache.LedgerFiles, jobs []usageJob) (changes []fileChange, sum usagecache.StampSum, found int, ok bool) {
	kept := lf.Files
	sum = lf.Sum
	for k := range jobs {
		j := &jobs[k]
		if j.known == nil {
			return nil, sum, 0, false
		}
		_, path, _ := strings.Cut(j.key, " ")
		now := *j.known
		at, ok := usagecache.FindLedgerFile(kept, usagecache.OwnerOf(j.key))
		if !ok {
			if j.wal || j.file != path || len(changes) == maxRecount {
				return nil, sum, 0, false // not a file of one session, or too many
			}
			changes = append(changes, fileChange{job: k, at: -1, path: path})
			sum.Add(j.key, now)
			continue
		}
		found++
		f := kept[at]
		if now == f.Stamp {
			continue
		}
		if !f.Alone || j.wal || j.file != path || len(changes) == maxRecount ||
			f.Tail == 0 || now.Ino != f.Stamp.Ino || now.Size <= f.Stamp.Size || usagecache.TailHash(path, f.Stamp.Size) != f.Tail {
			return nil, sum, 0, false // not one that only grew
		}
		changes = append(changes, fileChange{job: k, at: at, path: path})
		sum.Remove(j.key, f.Stamp)
		sum.Add(j.key, now)
	}
	return changes, sum, found, true
}

// recount reads again the sessions of changes, of jobs, into the plan,
// with the ledger files as they are to be written: lf's, the files now
// summing to files. ok is false where they may not be counted again.
func (p *recountPlan) recount(lf usagecache.LedgerFiles, jobs []usageJob, changes []fileChange, files usagecache.StampSum) (ok bool) {
	kept := lf.Files
	p.was = lf.Sum
	if !p.partial {
		p.held = slices.Clone(kept) // kept changes below
	}
	held := map[uint64]bool{} // the keys of the calls of the sessions read
	var requests, known, links []uint64
	var added []usagecache.LedgerFile
	at := time.Now().UnixNano()
	for _, c := range changes {
		j := &jobs[c.job]
		s, err := j.read()
		if err != nil || s.Path != c.path {
			return false
		}
		keys := slices.Compact(slices.Sorted(slices.Values(usagecache.CallKeys(s.Calls))))
		fresh := c.at < 0
		if fresh {
			kn, ln := usagecache.SessionNames(&s)
			// Named by one counted, naming one, or holding a call of one;
			// or so of another new one. (One known by a name another is,
			// an id, is linked to none by it where none names it.)
			if lf.Links.HasAny(kn) || lf.Known.HasAny(ln) || lf.Requests.HasAny(keys) || hasAny(links, kn) || hasAny(known, ln) {
				return false
			}
			known, links = append(known, kn...), append(links, ln...)
		} else if usagecache.LineageOf(&s) != kept[c.at].Lineage {
			return false
		}
		// Each of its calls' keys once (a call may be known by two).
		for _, key := range keys {
			if held[key] {
				return false // two sessions read hold one call
			}
			held[key] = true
		}
		requests = append(requests, keys...)
		now := *j.known
		rc := usagecache.Recount{Session: &s, Digest: usage.DigestSession(&s, usage.Prices()), Ungrouped: true, New: fresh}
		f := usagecache.LedgerFile{Owner: usagecache.OwnerOf(j.key), Alone: true, Lineage: usagecache.LineageOf(&s)}
		if !fresh {
			// Counted with no groups (no calls then), where it has none.
			rc.WasSkipped = kept[c.at].Skipped
			f = kept[c.at]
		}
		f.Stamp, f.Skipped, f.Tail = now, s.Skipped, 0
		if at-now.ModTime < int64(recountRecent) {
			f.Tail = usagecache.TailHash(c.path, now.Size)
		}
		if fresh {
			added = append(added, f)
		} else {
			kept[c.at] = f
		}
		p.recounts = append(p.recounts, rc)
		p.changed = append(p.changed, recounted{key: j.key, file: j.file, stamp: now, incremental: j.readFrom != nil})
	}
	p.files = usagecache.LedgerFiles{Sum: files, Files: append(kept, added...),
		Requests: lf.Requests.With(requests), Known: lf.Known.With(known), Links: lf.Links.With(links)}
	return true
}

// hasAny reports whether one of keys is among set (a few, unsorted).
func hasAny(set, keys []uint64) bool {
	return slices.ContainsFunc(keys, func(k uint64) bool { return slices.Contains(set, k) })
}

// keep puts the plan's sessions, read again, in the usage cache at path,
// and writes it: what a server does, which vouches for the cache holding
// every session as it is now (a ledger of a process it vouches to may
// read the cache, with no walk). ok is false where the cache did not
// hold every other job's session as it is: then the server builds a
// ledger.
func (p recountPlan) keep(path string) (ok bool) {
	if p.partial {
		// No walk named the other files: the cache is the one this
		// server kept whole with the counted file beside it (a ledger
		// that writes the cache anew writes the counted file after it),
		// and the entries read again replace theirs, or join them: in
		// its journal, with none of the file read, where it has room.
		// They were counted alone: they share no request with another.
		if cache, ok := usagecache.OpenForJournal(path); ok {
			cache.Whole = true
			p.put(cache)
			if cache.AppendJournal() {
				return true
			}
		}
		cache := usagecache.Open(path)
		cache.Whole = true
		p.put(cache)
		cache.SaveChanged()
		return true
	}
	cache := usagecache.Open(path)
	cache.Whole = true
	changed := make(map[string]bool, len(p.changed))
	for _, c := range p.changed {
		changed[c.key] = true
	}
	for k, key := range p.keys {
		if changed[key] {
			continue
		}
		if e, ok := cache.Old[key]; ok && (e.Stamp != p.stamps[k] || e.Racy) || !ok && p.heldSession(key) {
			return false // not a server's whole cache of these files
		}
	}
	p.put(cache)
	cache.Save(p.keys, p.stamps)
	return true
}

// heldSession reports whether the ledger read a session of the file of
// cache key key: one it did not (a file its harness's listing leaves out,
// one that could not be read) has no entry in the cache.
func (p recountPlan) heldSession(key string) bool {
	k, ok := usagecache.FindLedgerFile(p.held, usagecache.OwnerOf(key))
	return !ok || p.held[k].Alone || p.held[k].Lineage != 0
}

// put puts the plan's sessions, read again, in cache.
func (p recountPlan) put(cache *usagecache.Cache) {
	for i, c := range p.changed {
		s := p.recounts[i].Session
		cache.Put(c.key, c.stamp, s, p.recounts[i].Digest, usagecache.CallKeys(s.Calls), c.file, c.incremental, c.stamp.Size)
	}
}

// apply counts the plan's sessions again into the groups of the counted
// file at counted, the files summing to files (a server's, where server:
// only where the file is one), and writes the ledger files; it returns
// how many sessions it counted, or ok false where it wrote nothing (then
// the ledger files are gone too: a ledger writes them again).
func (p recountPlan) apply(counted string, files usagecache.StampSum, server bool) (n int, ok bool) {
	_, ok = p.replace(counted, files, server)
	return len(p.recounts), ok
}

// replace is apply, returning the counted file's head written (with no
// groups), and the plan's recounts their groups before (Recount.Was).
func (p recountPlan) replace(counted string, files usagecache.StampSum, server bool) (head usagecache.Counted, ok bool) {
	k := usagecache.Counted{Files: files}
	if server {
		k.Server = os.Getpid()
	}
	head, err := usagecache.ReplaceCounted(counted, p.was, k, p.recounts)
	if err != nil {
		return head, false
	}
	if usagecache.WriteLedgerFiles(p.path, p.files) != nil {
		os.Remove(p.path)
	}
	return head, true
}

// writeLedgerFiles writes the ledger files beside the counted file at
// counted, of a ledger that read of jobs read, the files summing to
// files. Where they cannot be written, none are left: the next walk
// builds a ledger.
func writeLedgerFiles(counted string, files usagecache.StampSum, jobs []usageJob, read ledgerRead) {
	path := usagecache.LedgerFilesPath(counted)
	now := time.Now().UnixNano()
	lf := usagecache.LedgerFiles{Sum: files, Files: make([]usagecache.LedgerFile, len(jobs))}
	var known, links []uint64
	for k, j := range jobs {
		if j.known == nil {
			os.Remove(path)
			return
		}
		f := usagecache.LedgerFile{Owner: usagecache.OwnerOf(j.key), Stamp: *j.known}
		if s := read.byJob[k]; s != nil {
			f.Alone, f.Lineage, f.Skipped = s.Alone(), usagecache.LineageOf(s), s.Skipped
			// The end of a file that may go on, to tell later that it
			// only grew: one written lately (an agent's), never one of
			// many sessions. Read for few files of thousands.
			if _, path, _ := strings.Cut(j.key, " "); f.Alone && !j.wal && j.file == path && now-f.Stamp.ModTime < int64(recountRecent) {
				f.Tail = usagecache.TailHash(path, f.Stamp.Size)
			}
			kn, ln := usagecache.SessionNames(s)
			known, links = append(known, kn...), append(links, ln...)
		}
		lf.Files[k] = f
	}
	lf.Known, lf.Links = usagecache.NewKeySet(known), usagecache.NewKeySet(links)
	known, links = nil, nil
	lf.Requests = read.requests()
	if usagecache.WriteLedgerFiles(path, lf) != nil {
		os.Remove(path)
	}
}
