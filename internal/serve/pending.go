package serve

// pending is what a harness's listing waits for: the files that changed
// since it was made, to be read alone (catalog.Reread), or a whole
// listing, when a change was not told by its paths (the watcher's queue
// overflowed, a refresh failed) or they were more than maxTouched.
type pending struct {
	whole bool
	paths map[string]bool
}

// wholePending is a whole listing's pending.
func wholePending() *pending { return &pending{whole: true} }

// add notes that the file at path changed.
func (p *pending) add(path string) {
	switch {
	case p.whole:
	case len(p.paths) >= maxTouched:
		p.whole, p.paths = true, nil
	default:
		if p.paths == nil {
			p.paths = map[string]bool{}
		}
		p.paths[path] = true
	}
}

// merge adds what q waits for to p.
func (p *pending) merge(q *pending) {
	if q.whole {
		p.whole, p.paths = true, nil
		return
	}
	for path := range q.paths {
		p.add(path)
	}
}

// list is the paths, for catalog.Reread.
func (p *pending) list() []string {
	out := make([]string, 0, len(p.paths))
	for path := range p.paths {
		out = append(out, path)
	}
	return out
}
