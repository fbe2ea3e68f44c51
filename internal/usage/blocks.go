package usage

import (
	"slices"
	"time"
)

// BlockLength is the length of a billing block: Anthropic's plans meter
// use in windows of five hours from the first message of a window.
const BlockLength = 5 * time.Hour

// A Block is one five-hour billing window and its calls, as ccusage's
// blocks report finds them: a block starts at the hour (UTC) of the first
// call after the previous block ended, and ends five hours later; a gap
// of five hours without calls ends a block early.
type Block struct {
	Start, End time.Time // End is Start + BlockLength
	Last       time.Time // the last call's time
	Calls      []LedgerCall
}

// Active reports whether now falls in the block, and it has seen a call
// in the last five hours.
func (b Block) Active(now time.Time) bool {
	return !now.Before(b.Start) && now.Before(b.End) && now.Sub(b.Last) < BlockLength
}

// Blocks are the calls' blocks, oldest first.
func Blocks(calls []LedgerCall) []Block {
	sorted := slices.Clone(calls)
	slices.SortStableFunc(sorted, func(a, b LedgerCall) int {
		switch {
		case a.Time < b.Time:
			return -1
		case a.Time > b.Time:
			return 1
		}
		return 0
	})
	var out []Block
	for _, c := range sorted {
		if c.Time <= 0 {
			continue
		}
		at := time.UnixMilli(int64(c.Time)).UTC()
		if n := len(out); n > 0 && at.Before(out[n-1].End) && at.Sub(out[n-1].Last) < BlockLength {
			out[n-1].Calls = append(out[n-1].Calls, c)
			out[n-1].Last = at
			continue
		}
		start := at.Truncate(time.Hour)
		out = append(out, Block{Start: start, End: start.Add(BlockLength), Last: at, Calls: []LedgerCall{c}})
	}
	return out
}
