package session

// Labels: the label entries in effect, as omp's index resolves them.

// labelsInEffect resolves label entries as omp does: over the given
// entries in order, the last label per target wins and an empty one clears.
func labelsInEffect(entries []*Entry) map[string]string {
	m := map[string]string{}
	for _, e := range entries {
		applyLabel(m, e)
	}
	return m
}

// applyLabel applies e to m if it is a label entry.
func applyLabel(m map[string]string, e *Entry) {
	if l, ok := e.Body.(*Label); ok {
		if l.Label == "" {
			delete(m, l.TargetID)
		} else {
			m[l.TargetID] = l.Label
		}
	}
}
