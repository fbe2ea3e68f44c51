package jsonx

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// maxTime is the largest magnitude a JavaScript Date holds, in milliseconds.
const maxTime = 8.64e15

// DateMillis returns what JavaScript's new Date(v).getTime() gives for a
// value read from a session file, and NaN where JavaScript gives NaN
// (JSON.stringify then writes null). Strings are read as Date.parse reads
// them in JavaScriptCore (see ParseDate), numbers are clipped to whole
// milliseconds, null is 0 and a boolean 0 or 1.
func DateMillis(v Value) float64 {
	switch v.kind {
	case Null:
		return 0
	case Bool:
		if v.b {
			return 1
		}
		return 0
	case Number:
		return timeClip(v.num())
	case String:
		return ParseDate(v.str())
	case Array:
		return ParseDate(v.ToString())
	}
	return math.NaN()
}

func timeClip(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > maxTime {
		return math.NaN()
	}
	return math.Trunc(f) + 0 // +0, never -0
}

// ISOString formats milliseconds as Date.prototype.toISOString does.
func ISOString(ms float64) string {
	t := time.UnixMilli(int64(ms)).UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		sign := "+"
		if y < 0 {
			sign, y = "-", -y
		}
		return sign + pad(y, 6) + t.Format("-01-02T15:04:05.000Z")
	}
	return t.Format("2006-01-02T15:04:05.000Z")
}

func pad(n, width int) string {
	s := strconv.Itoa(n)
	for len(s) < width {
		s = "0" + s
	}
	return s
}

// ParseDate is Date.parse as JavaScriptCore (Bun) implements it for the
// forms timestamps take in practice: the ISO 8601 forms of ECMA-262 (a
// date alone is UTC, a date and time without an offset is local time;
// JavaScriptCore also takes a space or a lowercase t before the time, any
// number of fraction digits and offsets without a colon), and what its
// fallback parser takes (see parseLegacyDate). Anything else is NaN.
func ParseDate(s string) float64 {
	if ms, ok := parseISODate(s); ok {
		return timeClip(ms)
	}
	if ms, ok := parseLegacyDate(s); ok {
		return timeClip(ms)
	}
	return math.NaN()
}

// scanner over a date string.
type dscan struct {
	s string
	i int
}

func (d *dscan) digits(n int) (int, bool) {
	if d.i+n > len(d.s) {
		return 0, false
	}
	v := 0
	for _, c := range []byte(d.s[d.i : d.i+n]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	d.i += n
	return v, true
}

func (d *dscan) eat(c byte) bool {
	if d.i < len(d.s) && d.s[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *dscan) done() bool { return d.i == len(d.s) }

func parseISODate(s string) (float64, bool) {
	d := &dscan{s: s}
	year := 0
	switch {
	case d.eat('+'), d.eat('-'):
		neg := s[0] == '-'
		y, ok := d.digits(6)
		if !ok || neg && y == 0 {
			return 0, false
		}
		year = y
		if neg {
			year = -y
		}
	default:
		y, ok := d.digits(4)
		if !ok {
			return 0, false
		}
		year = y
	}
	month, day := 1, 1
	if d.eat('-') {
		m, ok := d.digits(2)
		if !ok || m < 1 || m > 12 {
			return 0, false
		}
		month = m
		if d.eat('-') {
			dd, ok := d.digits(2)
			if !ok || dd < 1 || dd > 31 {
				return 0, false
			}
			day = dd
		}
	}
	if d.done() || d.i == len(s)-1 && (s[d.i] == 'Z' || s[d.i] == 'z') {
		return float64(time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC).UnixMilli()), true
	}
	if !d.eat('T') && !d.eat('t') && !d.eat(' ') {
		return 0, false
	}
	hour, ok := d.digits(2)
	if !ok || !d.eat(':') {
		return 0, false
	}
	minute, ok := d.digits(2)
	if !ok || hour > 24 || minute > 59 {
		return 0, false
	}
	sec, nanos := 0, 0
	if d.eat(':') {
		if sec, ok = d.digits(2); !ok || sec > 59 {
			return 0, false
		}
		if d.eat('.') {
			start := d.i
			for d.i < len(s) && s[d.i] >= '0' && s[d.i] <= '9' {
				d.i++
			}
			frac := s[start:d.i]
			if frac == "" {
				return 0, false
			}
			for len(frac) < 3 {
				frac += "0"
			}
			ms, _ := strconv.Atoi(frac[:3])
			nanos = ms * 1e6
		}
	}
	if hour == 24 && (minute != 0 || sec != 0 || nanos != 0) {
		return 0, false
	}
	loc := time.Local
	switch {
	case d.eat('Z'), d.eat('z'):
		loc = time.UTC
	case d.i < len(s) && (s[d.i] == '+' || s[d.i] == '-'):
		sign := 1
		if s[d.i] == '-' {
			sign = -1
		}
		d.i++
		oh, ok := d.digits(2)
		if !ok {
			return 0, false
		}
		d.eat(':')
		om, ok := d.digits(2)
		if !ok || oh > 23 || om > 59 {
			return 0, false
		}
		loc = time.FixedZone("", sign*(oh*3600+om*60))
	}
	if !d.done() {
		return 0, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nanos, loc)
	return float64(t.UnixMilli()), true
}

var monthNames = map[string]time.Month{
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
	"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}

var zoneOffsets = map[string]int{
	"GMT": 0, "UTC": 0, "UT": 0, "Z": 0,
	"EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6, "PST": -8, "PDT": -7,
}

// parseLegacyDate reads what JavaScriptCore's fallback parser reads in
// practice: the RFC 2822 family, Date.prototype.toString's form (its
// parenthesized zone name is a comment), "Nov 1, 2026", "Nov 2026",
// numeric dates (2026/11/01, 11/01/2026, 2026-11-1) with an optional
// time, all in local time unless a zone is given.
func parseLegacyDate(s string) (float64, bool) {
	s = dropComments(s)
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' })
	if len(fields) == 0 {
		return 0, false
	}
	if ms, ok := parseNumericDate(fields); ok {
		return ms, true
	}
	// An optional weekday name first.
	if len(fields[0]) >= 3 && isLetters(fields[0]) {
		if _, isMonth := monthNames[strings.ToLower(fields[0][:3])]; !isMonth {
			fields = fields[1:]
		}
	}
	if len(fields) == 1 {
		return 0, false
	}
	if len(fields) == 2 { // Nov 2026
		if m, ok := monthOf(fields[0]); ok {
			if y, err := strconv.Atoi(fields[1]); err == nil && len(fields[1]) == 4 {
				return float64(time.Date(y, m, 1, 0, 0, 0, 0, time.Local).UnixMilli()), true
			}
		}
		return 0, false
	}
	if len(fields) < 3 {
		return 0, false
	}
	var day, year int
	var month time.Month
	var err error
	if m, ok := monthOf(fields[1]); ok { // 01 Jan 2026
		month = m
		if day, err = strconv.Atoi(fields[0]); err != nil {
			return 0, false
		}
	} else if m, ok := monthOf(fields[0]); ok { // Jan 1 2026
		month = m
		if day, err = strconv.Atoi(fields[1]); err != nil {
			return 0, false
		}
	} else {
		return 0, false
	}
	if year, err = strconv.Atoi(fields[2]); err != nil || day < 1 || day > 31 {
		return 0, false
	}
	return clockAndZone(year, month, day, fields[3:])
}

// clockAndZone finishes a legacy date: an optional h:mm[:ss] and an
// optional zone (GMT, UTC, EST…, +hhmm, GMT+hhmm), else local time.
func clockAndZone(year int, month time.Month, day int, rest []string) (float64, bool) {
	hour, minute, sec := 0, 0, 0
	if len(rest) > 0 && strings.Contains(rest[0], ":") {
		p := strings.Split(rest[0], ":")
		if len(p) < 2 || len(p) > 3 {
			return 0, false
		}
		var e1, e2, e3 error
		hour, e1 = strconv.Atoi(p[0])
		minute, e2 = strconv.Atoi(p[1])
		if len(p) == 3 {
			sec, e3 = strconv.Atoi(p[2])
		}
		if e1 != nil || e2 != nil || e3 != nil || hour > 24 || minute > 59 || sec > 59 {
			return 0, false
		}
		rest = rest[1:]
	}
	loc := time.Local
	if len(rest) > 0 {
		z := rest[0]
		rest = rest[1:]
		base, offs, _ := strings.Cut(z, "+")
		if off, ok := zoneOffsets[strings.ToUpper(z)]; ok {
			loc = time.FixedZone("", off*3600)
		} else if o, ok := numericOffset(z); ok {
			loc = time.FixedZone("", o)
		} else if _, ok := zoneOffsets[strings.ToUpper(base)]; ok && offs != "" {
			o, ok := numericOffset("+" + offs)
			if !ok {
				return 0, false
			}
			loc = time.FixedZone("", o)
		} else if b, o, ok := strings.Cut(z, "-"); ok && zoneOffsets[strings.ToUpper(b)] == 0 && b != "" {
			off, ok := numericOffset("-" + o)
			if !ok {
				return 0, false
			}
			loc = time.FixedZone("", off)
		} else {
			return 0, false
		}
	}
	if len(rest) > 0 {
		return 0, false
	}
	t := time.Date(year, month, day, hour, minute, sec, 0, loc)
	return float64(t.UnixMilli()), true
}

// parseNumericDate reads 2026/11/01, 11/01/2026 (US order) and 2026-11-1
// (a form the ISO parser refuses), each with an optional time and zone.
func parseNumericDate(fields []string) (float64, bool) {
	sep := "/"
	if !strings.Contains(fields[0], "/") {
		sep = "-"
	}
	p := strings.Split(fields[0], sep)
	if len(p) != 3 {
		return 0, false
	}
	n := make([]int, 3)
	for i, x := range p {
		v, err := strconv.Atoi(x)
		if err != nil || x == "" || x[0] == '+' || x[0] == '-' {
			return 0, false
		}
		n[i] = v
	}
	var y, m, d int
	switch {
	case len(p[0]) == 4:
		y, m, d = n[0], n[1], n[2]
	case sep == "/" && len(p[2]) == 4:
		m, d, y = n[0], n[1], n[2]
	default:
		return 0, false
	}
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return 0, false
	}
	return clockAndZone(y, time.Month(m), d, fields[1:])
}

// dropComments removes parenthesized text, which JavaScriptCore's parser
// skips ("… GMT+0000 (Coordinated Universal Time)").
func dropComments(s string) string {
	if !strings.Contains(s, "(") {
		return s
	}
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func monthOf(s string) (time.Month, bool) {
	if len(s) < 3 || !isLetters(s) {
		return 0, false
	}
	m, ok := monthNames[strings.ToLower(s[:3])]
	return m, ok
}

func isLetters(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// numericOffset reads "+hhmm" or "-hh:mm" as seconds east of UTC.
func numericOffset(z string) (int, bool) {
	if len(z) < 2 || (z[0] != '+' && z[0] != '-') {
		return 0, false
	}
	sign := 1
	if z[0] == '-' {
		sign = -1
	}
	digits := strings.ReplaceAll(z[1:], ":", "")
	if len(digits) != 4 {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0, false
	}
	return sign * (n/100*3600 + n%100*60), true
}
