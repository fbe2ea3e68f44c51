package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/xdev/xdev/internal/sessionname"
)

// ErrNotFound is returned when no session matches.
var ErrNotFound = errors.New("no session found")

// AmbiguousError is returned by Resolve when an argument matches more than
// one session: the one error of the naming rule (package sessionname),
// its matches newest first.
type AmbiguousError = sessionname.AmbiguousError

// mostRecent returns the session --continue would pick for cwd: the most
// recently modified session of that project that opens.
func mostRecent(dataDir, cwd string) (SessionInfo, error) {
	infos, err := List(dataDir, &ListOptions{Cwd: cwd})
	if err != nil {
		return SessionInfo{}, err
	}
	for _, i := range infos {
		if i.Err == nil {
			return i, nil
		}
	}
	return SessionInfo{}, fmt.Errorf("%w for %s in %s", ErrNotFound, cwd, SessionsDir(dataDir))
}

// Resolve finds the session arg names, as --resume <arg> would: a path to a
// session file, or a prefix (case-insensitive) of a session id, of a file
// name (.jsonl included: "NAME.json" is a prefix of NAME.jsonl), or of the
// id part of a file name; a file name with or without its .jsonl matches
// exactly (omp's --resume takes a name without .jsonl only). The project
// of cwd is searched first, then every project, then the subagent
// transcripts. An exact id or file name wins over prefixes; otherwise
// several matches are an *AmbiguousError.
func Resolve(dataDir, cwd, arg string) (SessionInfo, error) {
	return ResolveIn(dataDir, arg, &ResolveOptions{Cwd: cwd})
}

// ResolveOptions tune ResolveIn.
type ResolveOptions struct {
	// Cwd is the project searched first ("" for none).
	Cwd string
	// Cache is the list cache's directory (ListOptions.Cache): the
	// listings Resolve matches against read only the files that changed
	// since the last, the same listings a walk gives. "" keeps none.
	Cache string
	// CacheReadOnly reads Cache and never writes it (ListOptions).
	CacheReadOnly bool
}

// ResolveIn is Resolve with options: a process that resolves many
// arguments (a server) gives it the list cache, so that naming a session
// by its id is not a read of every session's head.
func ResolveIn(dataDir, arg string, opts *ResolveOptions) (SessionInfo, error) {
	if opts == nil {
		opts = &ResolveOptions{}
	}
	cwd := opts.Cwd
	if arg == "" {
		return SessionInfo{}, errors.New("resolve: empty session argument")
	}
	if SessionPath(arg) {
		abs, _ := filepath.Abs(arg)
		info := Stat(abs)
		return info, info.Err
	}
	// Subagent transcripts last: --resume never picks one, but a name that
	// matches nothing else names it (show, export and verify read them).
	ro := opts.CacheReadOnly
	scopes := []*ListOptions{{Cwd: cwd, Cache: opts.Cache, CacheReadOnly: ro}, {Cache: opts.Cache, CacheReadOnly: ro},
		{Subagents: true, Cache: opts.Cache, CacheReadOnly: ro}}
	if cwd == "" {
		scopes = scopes[1:]
	}
	for _, opts := range scopes {
		infos, err := List(dataDir, opts)
		if err != nil {
			return SessionInfo{}, err
		}
		if m, err := pick(arg, infos); m != nil || err != nil {
			if err != nil {
				return SessionInfo{}, err
			}
			return *m, nil
		}
	}
	return SessionInfo{}, fmt.Errorf("%w matching %q in %s", ErrNotFound, arg, SessionsDir(dataDir))
}

// SessionPath reports whether a session argument names a file rather than
// an id: it holds a path separator or ends in .jsonl, and something is
// there. The one rule for Resolve and for commands that take a file
// before they know the data dir.
func SessionPath(arg string) bool {
	if !strings.ContainsRune(arg, filepath.Separator) && !strings.HasSuffix(arg, ".jsonl") {
		return false
	}
	_, err := os.Lstat(arg)
	return err == nil
}

// pick applies the one naming rule (internal/sessionname) to infos; nil,
// nil means no match.
func pick(arg string, infos []SessionInfo) (*SessionInfo, error) {
	readable := make([]SessionInfo, 0, len(infos))
	for _, i := range infos {
		if i.Err == nil {
			readable = append(readable, i)
		}
	}
	one, several := sessionname.Pick(arg, readable, func(i *SessionInfo) (string, string) { return i.ID, filepath.Base(i.Path) })
	switch {
	case one != nil:
		return one, nil
	case len(several) > 0:
		return nil, sessionname.Ambiguous(arg, several, func(i *SessionInfo) sessionname.Match {
			return sessionname.Match{ID: i.ID, Path: i.Path}
		})
	}
	return nil, nil
}
