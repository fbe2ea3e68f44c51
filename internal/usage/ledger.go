package usage

import (
	"cmp"
	"errors"
	"path/filepath"
	"slices"
)

// A Session is one session's part in a ledger: where it is, what it
// descends from, and the calls it records.
type Session struct {
	Harness string // "xdev", "omp", "claude", "codex", …
	Path    string // its file (or, for opencode, its database path and id)
	ID      string
	// Parent is the session it was forked, branched or spawned from: an
	// id, or (an omp branch's or subagent's parentSession) a file path.
	Parent string
	// Subagent reports a subagent's session: its calls roll up to the
	// session that spawned it (Parent) in a report by session.
	Subagent bool
	// ImportOf names the source of an import (an omp-format session
	// converted from another harness's): while the ledger has the
	// source, the import's Imported calls are the source's.
	ImportOf       *Origin
	Project, Title string
	Calls          []Call
	// Skipped counts what could not be read: torn or malformed lines,
	// records whose usage is not a usage.
	Skipped int

	digest   []Bucket               // for a session added by its digest
	load     func() ([]Call, error) // reads its calls
	involved bool                   // its calls must be counted one by one
	alone    bool                   // Groups counted it by its digest alone
}

// Alone reports whether the ledger's last Groups counted s by its digest
// alone: it was added by its digest, and the ledger has no session of
// its lineage (parent or child), no session that may hold one of its
// calls (Involve), no import of it, nor the source it was imported from.
// Read again later, of the same lineage and with calls of its own, it
// would be counted so again, by its new digest: what a ledger kept
// across changes (internal/catalog) replaces its groups by.
func (s *Session) Alone() bool { return s.alone }

// Origin names a session of a harness.
type Origin struct{ Harness, ID string }

// A Ledger counts the calls of sessions once along the session tree,
// whichever harness wrote them and however often they were copied:
//
//   - A fork copies its source's entries byte for byte, ids and times
//     included, and a branch copies the path it was cut from: counted per
//     file (as omp-stats' parser counts them), every copied call would
//     count again. A call with an Entry (an omp entry's id and time,
//     EntryKey) is one call wherever it appears, in the session that
//     holds it nearest the root of its lineage (the sessions linked by
//     Parent), as omp-stats' database keeps the first of the rows with
//     one entry id and time. A fork whose source the ledger does not have
//     (or whose parentSession names a file since moved) is so counted
//     once too.
//   - A call with a Request (Claude Code's message id) is one call
//     wherever it appears: the streamed lines of one response, and the
//     lines a resumed session copies into its new file and an import
//     holds. Of its copies the one with the most tokens is kept (the last
//     streamed line holds the response's final usage), in the session
//     that recorded it first.
//   - An import's calls copied from its source (Imported) are the
//     source's: not counted while the ledger has the source.
//
// A subagent's calls are its own session's, rolled up (LedgerCall.Rollup)
// into the session that spawned it for a report by session.
type Ledger struct {
	sessions []*Session
	byID     map[string]*Session
	byPath   map[string]*Session
	byOrigin map[Origin]*Session
	sources  map[Origin]bool // the origins of the imports, once asked
}

// A LedgerCall is a call and the session it is counted in.
type LedgerCall struct {
	Call
	Session *Session // the session nearest the lineage's root holding it
	// Rollup is the session a report by session counts it under: the
	// session itself, or for a subagent's the nearest ancestor that is
	// not a subagent's.
	Rollup *Session
}

// Add puts a session into the ledger. The ledger keeps s.
func (l *Ledger) Add(s *Session) {
	if l.byID == nil {
		l.byID, l.byPath, l.byOrigin = map[string]*Session{}, map[string]*Session{}, map[Origin]*Session{}
	}
	l.sessions = append(l.sessions, s)
	if s.ID != "" {
		l.byID[s.ID] = s
		l.byOrigin[Origin{s.Harness, s.ID}] = s
	}
	path := s.Path
	if !filepath.IsAbs(path) {
		path, _ = filepath.Abs(path)
	}
	l.byPath[path] = s
}

// AddFile reads the omp-format session file at path (ReadSession) into
// the ledger as harness's.
func (l *Ledger) AddFile(harness, path string) error {
	s, err := ReadSession(path)
	if err != nil {
		return err
	}
	s.Harness = harness
	l.Add(&s)
	return nil
}

// AddDigest puts a session into the ledger by its digest (s's Calls
// nil): where none of its calls may be counted elsewhere, the buckets
// stand for them. load reads its calls, which the ledger asks for only
// when some may be: the session shares its lineage with another, is an
// import of a session the ledger has or such an import's source, or
// Involve said so (one of its requests is another session's).
func (l *Ledger) AddDigest(s *Session, digest []Bucket, load func() ([]Call, error)) {
	s.digest, s.load = digest, load
	l.Add(s)
}

// Involve says that some of s's calls may be counted in another session
// too: they are counted one by one.
func (l *Ledger) Involve(s *Session) { s.involved = true }

// A Group is calls of one session counted once, summed by quarter hour
// and model: a bucket of the session's digest, shared, not copied (a
// ledger of 25,000 sessions has hundreds of thousands).
type Group struct {
	Session, Rollup *Session // as LedgerCall's
	*Bucket
}

// Groups are the ledger's calls, each counted once, summed: a session's
// digest where none of its calls may be counted elsewhere, the rest
// counted one by one (Calls) and digested with prices (the built-in
// table when nil, read only when there are such calls). A session whose
// calls cannot be read again is left out, and the error returned with the
// rest.
func (l *Ledger) Groups(prices *Table) ([]Group, error) {
	roots := map[*Session]int{}
	chains := make(map[*Session][]*Session, len(l.sessions))
	for _, s := range l.sessions {
		c := l.chain(s)
		chains[s] = c
		roots[c[len(c)-1]]++
	}
	var exact []*Session
	var out []Group
	var errs []error
	for _, s := range l.sessions {
		c := chains[s]
		imported := s.ImportOf != nil && l.byOrigin[*s.ImportOf] != nil
		s.alone = s.digest != nil && !s.involved && roots[c[len(c)-1]] == 1 && !imported && !l.isSource(s)
		if s.alone {
			rollup := rollupOf(c)
			for k := range s.digest {
				out = append(out, Group{Session: s, Rollup: rollup, Bucket: &s.digest[k]})
			}
			continue
		}
		if err := s.readCalls(); err != nil {
			errs = append(errs, err)
			continue
		}
		exact = append(exact, s)
	}
	kept := map[*Session][]Call{}
	rollups := map[*Session]*Session{}
	for _, c := range dedupe(exact, chains) {
		kept[c.Session] = append(kept[c.Session], c.Call)
		rollups[c.Session] = c.Rollup
	}
	if len(exact) > 0 && prices == nil {
		prices = Prices()
	}
	for _, s := range exact {
		digest := Digest(kept[s], prices)
		for k := range digest {
			out = append(out, Group{Session: s, Rollup: rollups[s], Bucket: &digest[k]})
		}
	}
	return out, errors.Join(errs...)
}

// readCalls reads the calls of a session added by its digest, once.
func (s *Session) readCalls() error {
	if s.Calls != nil || s.load == nil {
		return nil
	}
	calls, err := s.load()
	if err != nil {
		return err
	}
	s.Calls = calls
	return nil
}

// isSource reports whether an import of s is in the ledger.
func (l *Ledger) isSource(s *Session) bool {
	if l.sources == nil {
		l.sources = map[Origin]bool{}
		for _, x := range l.sessions {
			if x.ImportOf != nil {
				l.sources[*x.ImportOf] = true
			}
		}
	}
	return s.ID != "" && l.sources[Origin{s.Harness, s.ID}]
}

// rollupOf is the session a chain's first session's calls roll up to:
// it, or its nearest ancestor that is not a subagent's.
func rollupOf(chain []*Session) *Session {
	rollup := chain[0]
	for _, a := range chain {
		rollup = a
		if !a.Subagent {
			break
		}
	}
	return rollup
}

// Sessions are the sessions added, in the order added.
func (l *Ledger) Sessions() []*Session { return l.sessions }

// parentOf is the session s was forked, branched or spawned from, when
// the ledger has it.
func (l *Ledger) parentOf(s *Session) *Session {
	if s.Parent == "" {
		return nil
	}
	if p := l.byID[s.Parent]; p != nil && p != s {
		return p
	}
	if !filepath.IsAbs(s.Parent) {
		return nil
	}
	p := l.byPath[s.Parent]
	if p == nil {
		p = l.byPath[filepath.Clean(s.Parent)]
	}
	if p != s {
		return p
	}
	return nil
}

// chain is s and its ancestors, s first; a cycle of parents ends it (a
// chain is no longer than the ledger, and a session seen twice ends it).
func (l *Ledger) chain(s *Session) []*Session {
	out := []*Session{s}
	var seen map[*Session]bool // past a short chain, where a scan of it would cost more
	for p := l.parentOf(s); p != nil; p = l.parentOf(p) {
		if len(out) == 16 {
			seen = map[*Session]bool{}
			for _, x := range out {
				seen[x] = true
			}
		}
		if seen != nil && seen[p] || seen == nil && slices.Contains(out, p) {
			break
		}
		if seen != nil {
			seen[p] = true
		}
		out = append(out, p)
	}
	return out
}

// Calls are the ledger's calls, each once: the sessions nearest their
// lineage's root first, then those whose first call came first, each's
// in the order recorded. Sessions added by their digest are read.
func (l *Ledger) Calls() ([]LedgerCall, error) {
	chains := make(map[*Session][]*Session, len(l.sessions))
	var errs []error
	var read []*Session
	for _, s := range l.sessions {
		chains[s] = l.chain(s)
		if err := s.readCalls(); err != nil {
			errs = append(errs, err)
			continue
		}
		read = append(read, s)
	}
	return dedupe(read, chains), errors.Join(errs...)
}

// dedupe counts the calls of sessions once, by the rules of Ledger;
// chains are each session's chain of ancestors.
func dedupe(sessions []*Session, chains map[*Session][]*Session) []LedgerCall {
	order := slices.Clone(sessions)
	first := func(s *Session) float64 {
		if len(s.Calls) == 0 {
			return 0
		}
		return s.Calls[0].Time
	}
	slices.SortStableFunc(order, func(a, b *Session) int {
		return cmp.Or(len(chains[a])-len(chains[b]), cmp.Compare(first(a), first(b)), cmp.Compare(a.Path, b.Path))
	})
	n := 0
	for _, s := range order {
		n += len(s.Calls)
	}
	entries := map[uint64]bool{}
	requests := make(map[uint64]int, n) // a request's place in out
	out := make([]LedgerCall, 0, n)
	byOrigin := map[Origin]bool{}
	for _, s := range sessions {
		if s.ID != "" {
			byOrigin[Origin{s.Harness, s.ID}] = true
		}
	}
	for _, s := range order {
		rollup := rollupOf(chains[s])
		sourced := s.ImportOf != nil && byOrigin[*s.ImportOf] && *s.ImportOf != (Origin{s.Harness, s.ID})
		for _, c := range s.Calls {
			if c.Imported && sourced {
				continue
			}
			if c.Entry != 0 {
				if entries[c.Entry] {
					continue
				}
				entries[c.Entry] = true
			}
			if c.Request != 0 {
				if at, ok := requests[c.Request]; ok {
					if kept := &out[at]; c.Tokens.Sum() > kept.Tokens.Sum() {
						kept.Call = c
					}
					continue
				}
				requests[c.Request] = len(out)
			}
			out = append(out, LedgerCall{Call: c, Session: s, Rollup: rollup})
		}
	}
	return out
}
