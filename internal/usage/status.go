package usage

import "iter"

// A Status is what a status line says of a ledger's groups, small enough
// to be read in a moment however many sessions there are: each session's
// calls summed, and the groups of the recent calls.
type Status struct {
	// Sessions are one group per session that others roll up to
	// (Group.Rollup): Session and Rollup are it, and its Bucket the sum of
	// its groups' (tokens, calls and costs; First and Last its first and
	// last call's times; no Quarter or Model).
	Sessions []Group
	// Recent are the groups whose last call is at or after Since (Unix
	// ms), in the groups' order.
	Recent []Group
	Since  float64
}

// NewStatus is the status of groups, with the groups since since (Unix
// ms) as its recent ones.
func NewStatus(groups []Group, since float64) Status {
	return StatusOf(func(yield func(*Group) bool) {
		for k := range groups {
			if !yield(&groups[k]) {
				return
			}
		}
	}, since)
}

// StatusOf is NewStatus of the groups seq hands out one at a time: a
// group and its Bucket need only last until the next is asked for (the
// recent ones are copied), its sessions as long as the status.
func StatusOf(groups iter.Seq[*Group], since float64) Status {
	st := Status{Since: since}
	at := map[*Session]*Bucket{}
	// The sums are made in blocks, never moved: a slice of 25,000
	// sessions' sums grown by append copied them over and over (18 MB
	// allocated for 3.6).
	var block []Bucket
	var rollups []*Session
	var sums []*Bucket
	var sum *Bucket // the last group's rollup's
	var last *Session
	for g := range groups {
		if g.Last >= since {
			b := *g.Bucket
			st.Recent = append(st.Recent, Group{Session: g.Session, Rollup: g.Rollup, Bucket: &b})
		}
		// A session's groups come together: its rollup is looked up
		// once for them.
		if sum == nil || last != g.Rollup {
			last = g.Rollup
			var ok bool
			if sum, ok = at[g.Rollup]; !ok {
				if len(block) == 0 {
					block = make([]Bucket, 1024)
				}
				sum, block = &block[0], block[1:]
				at[g.Rollup] = sum
				sums = append(sums, sum)
				rollups = append(rollups, g.Rollup)
			}
		}
		sum.add(g.Bucket)
	}
	st.Sessions = make([]Group, len(sums))
	for k, s := range rollups {
		st.Sessions[k] = Group{Session: s, Rollup: s, Bucket: sums[k]}
	}
	return st
}

// add adds o's calls to b: all but its quarter and model.
func (b *Bucket) add(o *Bucket) {
	if o.First > 0 && (b.First <= 0 || o.First < b.First) {
		b.First = o.First
	}
	b.Last = max(b.Last, o.Last)
	b.Tokens.Add(o.Tokens)
	b.Calls += o.Calls
	b.Malformed += o.Malformed
	for m := range b.Cost {
		b.Cost[m] += o.Cost[m]
		b.Unpriced[m] += o.Unpriced[m]
	}
}

// Latest is the session of the status's latest call, nil for none.
func (st Status) Latest() *Group {
	k := -1
	for i, g := range st.Sessions {
		if k < 0 || g.Last > st.Sessions[k].Last {
			k = i
		}
	}
	if k < 0 {
		return nil
	}
	return &st.Sessions[k]
}
