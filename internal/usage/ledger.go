package usage

import (
	"path/filepath"
	"slices"

	"github.com/xdev/xdev/internal/session"
)

// A Ledger counts the calls of omp-format sessions once along the
// session tree. A fork copies its source's entries byte for byte, ids
// included, and a branch copies the path it was cut from: counted per
// file (as omp-stats does), every copied call would count again. Here the
// sessions linked by their headers' parentSession (a fork's source id, a
// branch's or subagent's parent file path) are one lineage, and a call is
// one entry id of a lineage, whichever of its files hold it; it is the
// session nearest the lineage's root that holds it whose call it is.
// Entry ids are short (eight hex digits in omp), so they are told apart
// by lineage only: the same id in unrelated sessions is two calls.
type Ledger struct {
	sessions []*ledgerSession
	byID     map[string]*ledgerSession
	byPath   map[string]*ledgerSession
}

type ledgerSession struct {
	path, id, parent string
	calls            []Call
}

// A LedgerCall is a call and the session it is counted in.
type LedgerCall struct {
	Call
	Session string // the file of the session nearest the lineage's root holding it
	Root    string // the file of the lineage's root
}

// Add reads the calls of the session file at path into the ledger.
func (l *Ledger) Add(path string) error {
	x, err := session.OpenIndex(path, nil)
	if err != nil {
		return err
	}
	h := x.Header()
	x.Close()
	calls, err := SessionCalls(path)
	if err != nil {
		return err
	}
	if l.byID == nil {
		l.byID, l.byPath = map[string]*ledgerSession{}, map[string]*ledgerSession{}
	}
	abs, _ := filepath.Abs(path)
	s := &ledgerSession{path: abs, id: h.ID, parent: h.ParentSession, calls: calls}
	l.sessions = append(l.sessions, s)
	if h.ID != "" {
		l.byID[h.ID] = s
	}
	l.byPath[abs] = s
	return nil
}

// parentOf is the session s was forked, branched or spawned from, when
// the ledger has it.
func (l *Ledger) parentOf(s *ledgerSession) *ledgerSession {
	if s.parent == "" {
		return nil
	}
	if p := l.byID[s.parent]; p != nil && p != s {
		return p
	}
	abs, _ := filepath.Abs(s.parent)
	if p := l.byPath[abs]; p != nil && p != s {
		return p
	}
	return nil
}

// chain is s and its ancestors, s first; a cycle of parents ends it.
func (l *Ledger) chain(s *ledgerSession) []*ledgerSession {
	var out []*ledgerSession
	for seen := map[*ledgerSession]bool{}; s != nil && !seen[s]; s = l.parentOf(s) {
		seen[s] = true
		out = append(out, s)
	}
	return out
}

// Calls are the ledger's calls, each once: the sessions nearest their
// lineage's root first (in the order added), each's in file order.
func (l *Ledger) Calls() []LedgerCall {
	type key struct{ root, entry string }
	counted := map[key]bool{}
	var out []LedgerCall
	// Ancestors first, so that a copied call is its source's: by depth,
	// then in the order added.
	order := slices.Clone(l.sessions)
	depth := map[*ledgerSession]int{}
	for _, s := range order {
		depth[s] = len(l.chain(s))
	}
	slices.SortStableFunc(order, func(a, b *ledgerSession) int { return depth[a] - depth[b] })
	for _, s := range order {
		chain := l.chain(s)
		root := chain[len(chain)-1]
		for _, c := range s.calls {
			k := key{root.path, c.EntryID}
			if counted[k] {
				continue
			}
			counted[k] = true
			out = append(out, LedgerCall{Call: c, Session: s.path, Root: root.path})
		}
	}
	return out
}
