// Package sessionname is the one rule by which a person names a session,
// in every place sessions live (a data dir, another harness's directory,
// a PostgreSQL store): what omp's --resume takes, widened as xdev's
// commands take it.
//
// A name is matched against a session's id and its file's base name,
// without regard to case:
//
//   - It names the session exactly when it is the id, or the file's name
//     with or without .jsonl (or .jsonl.zst), or the id part of the name
//     (after its last '_': omp's <time>_<id>.jsonl).
//   - It names it by a prefix when the id, the file's name or the id part
//     of the name starts with it ("NAME.json" is a prefix of NAME.jsonl).
//
// Among the sessions of a place, a name that names one session exactly
// names it, whatever it is a prefix of; several exact matches are
// ambiguous; otherwise a name that is a prefix of one session's names
// it, and a prefix of several is ambiguous (Pick). A place that shortlists
// candidates elsewhere (in SQL) must shortlist every session Of does not
// call None, and then Pick.
package sessionname

import (
	"fmt"
	"strings"
)

// A Kind is how a name matches a session.
type Kind int

const (
	None   Kind = iota // not at all
	Prefix             // a prefix of its id or its file's name
	Exact              // its id, or its file's name
)

// Of is how arg matches the session with id and file (its base name; ""
// for a session that is no file).
func Of(arg, id, file string) Kind {
	a := strings.ToLower(arg)
	if a == "" {
		return None
	}
	bare := Stem(a)
	id = strings.ToLower(id)
	name := strings.ToLower(file)
	stem := Stem(name)
	fileID := stem
	if k := strings.LastIndexByte(stem, '_'); k >= 0 {
		fileID = stem[k+1:]
	}
	switch {
	case id != "" && id == a, stem != "" && (stem == bare || fileID == bare):
		return Exact
	case id != "" && strings.HasPrefix(id, a), name != "" && (strings.HasPrefix(name, a) || strings.HasPrefix(fileID, a)):
		return Prefix
	}
	return None
}

// Stem is a file name without .jsonl or .jsonl.zst.
func Stem(name string) string {
	return strings.TrimSuffix(strings.TrimSuffix(name, ".zst"), ".jsonl")
}

// Pick is the rule among a place's sessions: the one arg names (ok), or
// the sessions it names when they are more than one (ambiguous, to be
// listed in the error), or neither when it names none. name gives a
// session's id and file name.
func Pick[T any](arg string, items []T, name func(*T) (id, file string)) (one *T, ambiguous []T) {
	var exact, prefix []int
	for i := range items {
		id, file := name(&items[i])
		switch Of(arg, id, file) {
		case Exact:
			exact = append(exact, i)
		case Prefix:
			prefix = append(prefix, i)
		}
	}
	pick := func(ks []int) (*T, []T) {
		if len(ks) == 1 {
			return &items[ks[0]], nil
		}
		out := make([]T, len(ks))
		for j, k := range ks {
			out[j] = items[k]
		}
		return nil, out
	}
	switch {
	case len(exact) > 0:
		return pick(exact)
	case len(prefix) > 0:
		return pick(prefix)
	}
	return nil, nil
}

// AmbiguousError is the error of every place for a name that names more
// than one session: one text, whatever the place (a data dir, other
// harnesses' directories, a PostgreSQL store).
type AmbiguousError struct {
	Arg     string
	Matches []Match // newest first, where the place knows
}

// A Match is one session an ambiguous name names.
type Match struct {
	Harness string // whose session it is; "" within one place
	ID      string
	Path    string // its file, or its row's name in a store
}

// maxShown is how many matches an AmbiguousError names.
const maxShown = 5

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q matches %d sessions; give more of the id:", e.Arg, len(e.Matches))
	for i, m := range e.Matches {
		if i == maxShown {
			fmt.Fprintf(&b, "\n  … and %d more", len(e.Matches)-i)
			break
		}
		b.WriteString("\n  ")
		if m.Harness != "" {
			b.WriteString(m.Harness + " ")
		}
		fmt.Fprintf(&b, "%s  %s", m.ID, m.Path)
	}
	return b.String()
}

// Ambiguous is the AmbiguousError of arg for the items several, each
// named by match.
func Ambiguous[T any](arg string, several []T, match func(*T) Match) *AmbiguousError {
	e := &AmbiguousError{Arg: arg, Matches: make([]Match, len(several))}
	for i := range several {
		e.Matches[i] = match(&several[i])
	}
	return e
}
