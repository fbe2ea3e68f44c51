package usage

import (
	"cmp"
	"slices"
	"time"
)

// BlockLength is the length of a billing block: Anthropic's plans meter
// use in windows of five hours from the first message of a window.
const BlockLength = 5 * time.Hour

// A Block is one five-hour billing window and its calls, as ccusage's
// blocks report finds them: a block starts at the hour (UTC) of the first
// call after the previous block ended, and ends five hours later; a gap
// of five hours without calls ends a block early. Calls are known by
// their groups (a quarter hour of one session's calls to one model): a
// group belongs to the block its first call falls in.
type Block struct {
	Start, End time.Time // End is Start + BlockLength
	Last       time.Time // the last call's time
	Groups     []Group
}

// Active reports whether now falls in the block, and it has seen a call
// in the last five hours.
func (b Block) Active(now time.Time) bool {
	return !now.Before(b.Start) && now.Before(b.End) && now.Sub(b.Last) < BlockLength
}

// Blocks are the groups' blocks, oldest first.
func Blocks(groups []Group) []Block {
	sorted := slices.Clone(groups)
	slices.SortStableFunc(sorted, func(a, b Group) int { return cmp.Compare(a.First, b.First) })
	var out []Block
	for _, g := range sorted {
		if g.First <= 0 {
			continue
		}
		first, last := time.UnixMilli(int64(g.First)).UTC(), time.UnixMilli(int64(g.Last)).UTC()
		if n := len(out); n > 0 && first.Before(out[n-1].End) && first.Sub(out[n-1].Last) < BlockLength {
			out[n-1].Groups = append(out[n-1].Groups, g)
			if last.After(out[n-1].Last) {
				out[n-1].Last = last
			}
			continue
		}
		start := first.Truncate(time.Hour)
		out = append(out, Block{Start: start, End: start.Add(BlockLength), Last: last, Groups: []Group{g}})
	}
	return out
}

// Totals are the calls' tokens and cost in mode.
func (g *Group) Totals(mode Mode) Totals { return g.totals(mode) }
