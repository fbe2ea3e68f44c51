// Package when reads the times people give xdev's commands and tools
// (--since, --until, the MCP server's since and until): a span back from
// now (30m, 12h, 7d, 2w), a date (2026-11-01, local midnight) or an RFC
// 3339 time. One rule, so that "7d" means the same everywhere.
package when

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Parse reads s at now; "" is the zero time (no bound). A span reaching
// back past the earliest time a time.Duration can is clamped to
// Earliest, never wrapped.
func Parse(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if n := len(s); n > 1 {
		unit := map[byte]time.Duration{'m': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[s[n-1]]
		if v, err := strconv.ParseUint(s[:n-1], 10, 64); unit != 0 && (err == nil || errors.Is(err, strconv.ErrRange)) {
			// A span reaching back past the earliest time means "since
			// ever" (or, for --until, "before anything"): clamp it there
			// rather than let the arithmetic wrap.
			if err != nil || v > uint64(maxBack/unit) {
				return Earliest, nil
			}
			return now.Add(-time.Duration(v) * unit), nil
		}
	}
	if t, err := time.ParseInLocation("2006-01-02", s, time.Local); err == nil {
		return notZero(t), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return notZero(t), nil
	}
	return time.Time{}, fmt.Errorf("%q is not a time: want 7d, 12h, 2w, 2026-11-01 or 2026-11-01T15:04:05Z", s)
}

// maxBack is the longest span Parse takes as a duration.
const maxBack = 290 * 365 * 24 * time.Hour // as far as a time.Duration reaches

// Earliest is where a longer span is clamped. It is not the zero time,
// which means "no bound".
var Earliest = time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)

// notZero keeps a time that happens to be the zero time from reading as
// "no bound".
func notZero(t time.Time) time.Time {
	if t.IsZero() {
		return Earliest
	}
	return t
}
