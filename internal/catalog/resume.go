package catalog

import (
	"path/filepath"
	"strings"

	"github.com/xdev/xdev/internal/foreign"
)

// Resuming. A session is taken up again in the harness that made it, by
// that harness's own command, in the session's working directory. The
// command is the harness's registry entry's (foreign.Kind's Resume, and
// omp's --resume for the omp-format data dirs and files), so that every
// place that offers it (a session's page, an MCP result, a picker) offers
// the same.

// A Resume is how a session is resumed where it was made.
type Resume struct {
	// Argv is the command and its arguments; nil when there is none.
	Argv []string
	// Dir is the directory to run it in ("" when the session does not
	// say): harnesses look a session up by the project it was made in.
	Dir string
	// Why says, when Argv is nil, why there is no command.
	Why string
}

// ResumeOf is how the session of row r is resumed.
func ResumeOf(r Row) Resume {
	var x Resume
	if filepath.IsAbs(r.Cwd) {
		x.Dir = r.Cwd
	}
	switch k, foreignKind := foreign.KindOf(string(r.Harness)); {
	case r.Subagent:
		x.Why = "a subagent's transcript is resumed with the session that spawned it"
	case r.Harness == Xdev || r.Harness == Omp || r.Harness == File:
		x.Argv = []string{"omp", "--resume", r.Path}
	case r.Harness == DB:
		x.Why = "a session of a team's database is not a file here: fork it into the data dir first (xdev fork)"
	case !foreignKind:
		x.Why = "no harness is known to have made it"
	case k.Resume == nil:
		x.Why = k.NoResume
	case r.ID == "":
		x.Why = "its id is not known, and " + k.Display + " resumes a session by its id"
	default:
		x.Argv = k.Resume(r.ID, r.Path)
	}
	return x
}

// Shell is the command as a person types it in a POSIX shell, after a cd
// to its directory: "" when there is none.
func (x Resume) Shell() string {
	if len(x.Argv) == 0 {
		return ""
	}
	words := make([]string, len(x.Argv))
	for k, w := range x.Argv {
		words[k] = ShellQuote(w)
	}
	line := strings.Join(words, " ")
	if x.Dir != "" {
		line = "cd " + ShellQuote(x.Dir) + " && " + line
	}
	return line
}

// ShellQuote is s as one word of a POSIX shell: as it is when it holds
// only characters no shell gives a meaning, else in single quotes.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
