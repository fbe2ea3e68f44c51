package usage

import (
	"cmp"
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
}

// Origin names a session of a harness.
type Origin struct{ Harness, ID string }

// A Ledger counts the calls of sessions once along the session tree,
// whichever harness wrote them and however often they were copied:
//
//   - A fork copies its source's entries byte for byte, ids included,
//     and a branch copies the path it was cut from: counted per file (as
//     omp-stats counts them), every copied call would count again. Here
//     the sessions linked by Parent are one lineage, and a call with an
//     EntryID is one entry id of a lineage, whichever of its files hold
//     it; it is the call of the session nearest the lineage's root that
//     holds it. Entry ids are short (eight hex digits in omp), so they
//     are told apart by lineage only: the same id in unrelated sessions
//     is two calls.
//   - A call with a Request (Claude Code's message id and request id) is
//     one call wherever it appears: the streamed lines of one response,
//     and the lines a resumed session copies into its new file. Of its
//     copies the one with the most tokens is kept (the last streamed
//     line holds the response's final usage), in the session that
//     recorded it first.
//   - An import's calls copied from its source (Imported) are the
//     source's: not counted while the ledger has the source.
type Ledger struct {
	sessions []*Session
	byID     map[string]*Session
	byPath   map[string]*Session
	byOrigin map[Origin]*Session
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
	if abs, err := filepath.Abs(s.Path); err == nil {
		l.byPath[abs] = s
	}
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
	if p := l.byPath[filepath.Clean(s.Parent)]; p != nil && p != s {
		return p
	}
	return nil
}

// chain is s and its ancestors, s first; a cycle of parents ends it.
func (l *Ledger) chain(s *Session) []*Session {
	var out []*Session
	for seen := map[*Session]bool{}; s != nil && !seen[s]; s = l.parentOf(s) {
		seen[s] = true
		out = append(out, s)
	}
	return out
}

// Calls are the ledger's calls, each once: the sessions nearest their
// lineage's root first, then those whose first call came first, each's
// in the order recorded.
func (l *Ledger) Calls() []LedgerCall {
	type entryKey struct {
		root  *Session
		entry string
	}
	order := slices.Clone(l.sessions)
	depth := make(map[*Session]int, len(order))
	chains := make(map[*Session][]*Session, len(order))
	for _, s := range order {
		chains[s] = l.chain(s)
		depth[s] = len(chains[s])
	}
	first := func(s *Session) float64 {
		if len(s.Calls) == 0 {
			return 0
		}
		return s.Calls[0].Time
	}
	slices.SortStableFunc(order, func(a, b *Session) int {
		return cmp.Or(depth[a]-depth[b], cmp.Compare(first(a), first(b)), cmp.Compare(a.Path, b.Path))
	})
	entries := map[entryKey]bool{}
	requests := map[string]int{} // a request's place in out
	var out []LedgerCall
	for _, s := range order {
		chain := chains[s]
		root := chain[len(chain)-1]
		rollup := s
		for _, a := range chain {
			rollup = a
			if !a.Subagent {
				break
			}
		}
		sourced := s.ImportOf != nil && l.byOrigin[*s.ImportOf] != nil && l.byOrigin[*s.ImportOf] != s
		for _, c := range s.Calls {
			if c.Imported && sourced {
				continue
			}
			if c.EntryID != "" {
				k := entryKey{root, c.EntryID}
				if entries[k] {
					continue
				}
				entries[k] = true
			}
			if c.Request != "" {
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
