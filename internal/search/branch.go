package search

import "github.com/xdev/xdev/internal/session"

// markBranch sets the on_branch and in_context flags of a file's entries:
// on_branch for those on the path from the leaf (the last entry) to its
// root, as omp walks it; in_context for those of them a resumed session
// still sends the model: from the latest compaction's first kept entry
// on, and nothing before a reset. It runs when an append did not simply
// extend the branch (a branch point, a compaction, a reset) and on a
// file read anew; a plain append marks its entries itself.
func (w *writer) markBranch(file int64) error {
	type node struct {
		row                       int64
		id, parent, typ, firstKpt string
	}
	s, err := w.stmt(`SELECT id, entry_id, parent_id, type, first_kept FROM entries WHERE id BETWEEN ? AND ? AND type != 'title' ORDER BY id`)
	if err != nil {
		return err
	}
	lo, hi := fileRows(file)
	s.BindInt64(1, lo)
	s.BindInt64(2, hi)
	var nodes []node
	byID := map[string]int{}
	for s.Step() {
		n := node{s.ColumnInt64(0), s.ColumnText(1), s.ColumnText(2), s.ColumnText(3), s.ColumnText(4)}
		byID[n.id] = len(nodes) // a duplicate id: the later entry wins, as in omp
		nodes = append(nodes, n)
	}
	if err := s.Err(); err != nil {
		return err
	}
	if err := w.exec(`UPDATE entries SET on_branch = 0, in_context = 0 WHERE id BETWEEN ? AND ? AND type != 'title'`, lo, hi); err != nil {
		return err
	}
	// The path from the leaf up, stopping at a missing parent or a cycle.
	var path []int
	seen := make([]bool, len(nodes))
	for i := len(nodes) - 1; i >= 0 && !seen[i]; {
		seen[i] = true
		path = append(path, i)
		p, ok := byID[nodes[i].parent]
		if nodes[i].parent == "" || !ok {
			break
		}
		i = p
	}
	// Leaf first: in context until the latest compaction's kept entry or
	// a reset is passed.
	inContext, keep := true, ""
	for _, i := range path {
		n := nodes[i]
		ctx := inContext
		if keep != "" && n.id == keep {
			inContext, keep = false, ""
		}
		switch {
		case n.typ == session.TypeCompaction && inContext && keep == "":
			if n.firstKpt == "" {
				inContext = false
			} else {
				keep = n.firstKpt
			}
		case n.typ == session.TypeResetBoundary:
			inContext = false
		}
		if err := w.exec(`UPDATE entries SET on_branch = 1, in_context = ? WHERE id = ?`, ctx, n.row); err != nil {
			return err
		}
	}
	return nil
}
