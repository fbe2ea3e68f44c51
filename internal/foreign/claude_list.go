package foreign

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/regularfile"
)

// claudeHistory is what Claude's history.jsonl (the prompts typed, one
// line each) says of one session, as omp's readHistoryIndex gathers it.
type claudeHistory struct {
	created, modified float64
	first, cwd        string
}

func readClaudeHistory(root string) map[string]*claudeHistory {
	out := map[string]*claudeHistory{}
	// An unreadable history is no history: the transcripts still list.
	eachRecord(filepath.Join(root, "history.jsonl"), func(r record) error {
		id, ok := stringField(r.v, "sessionId")
		if !ok {
			id, ok = stringField(r.v, "session_id")
		}
		ts := timestampMs(orElse(r.v.Get("timestamp"), r.v.Get("ts")), 0)
		if !ok || !(ts > 0) {
			return nil
		}
		raw, ok := stringField(r.v, "display")
		if !ok {
			raw, _ = stringField(r.v, "text")
		}
		text := strings.Join(strings.Fields(raw), " ")
		cwd, _ := stringField(r.v, "project")
		prev := out[id]
		if prev == nil {
			out[id] = &claudeHistory{created: ts, modified: ts, first: text, cwd: cwd}
			return nil
		}
		if ts < prev.created {
			prev.created = ts
			if text != "" {
				prev.first = text
			}
		}
		prev.modified = max(prev.modified, ts)
		if prev.first == "" {
			prev.first = text
		}
		if prev.cwd == "" {
			prev.cwd = cwd
		}
		return nil
	})
	return out
}

// claudeRegistered is the absolute project paths Claude's .claude.json
// knows, which decode project directory names exactly.
func claudeRegistered(root string) []string {
	config := filepath.Join(filepath.Dir(root), ".claude.json")
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" && filepath.Clean(d) == filepath.Clean(root) {
		config = filepath.Join(root, ".claude.json")
	}
	data, err := os.ReadFile(config)
	if err != nil {
		return nil
	}
	v, err := jsonx.Parse(data)
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range v.Get("projects").Members() {
		if filepath.IsAbs(m.Name) {
			out = append(out, m.Name)
		}
	}
	return out
}

func claudeProjectCwd(name string, registered []string) string {
	for _, p := range registered {
		if strings.ReplaceAll(p, string(filepath.Separator), "-") == name {
			return p
		}
	}
	return ClaudeProjectCwd(name)
}

// claudeHeadBytes is how much of a transcript's start a listing reads for
// its cwd (omp reads the same 64 KiB) and first prompt, and of its end
// for the latest custom or AI title.
const claudeHeadBytes = 64 << 10

// ListClaude lists the Claude Code transcripts under root as omp's
// ClaudeSessionStore.list does (projects/ and .projects/, history.jsonl
// for times and first prompts, .claude.json for project paths, the cwd
// recorded in the first 64 KiB), newest first. It adds what omp's picker
// leaves out: the title (the last custom-title or ai-title line in the
// file's last 64 KiB, else the last summary line in its first 64 KiB, as
// Claude Code's picker shows it), the first prompt when history.jsonl lacks it, and,
// with subagents, the transcripts of Claude's subagents (agent-*.jsonl,
// and <session>/subagents/*.jsonl), marked Subagent.
func ListClaude(root string, subagents bool) ([]Session, error) {
	return listClaude(root, subagents, nil, "")
}

// listClaude lists the transcripts of the project directories project
// keeps (every one when nil), with the list cache kept in cacheDir ("":
// none).
func listClaude(root string, subagents bool, project func(name, cwd string) bool, cacheDir string) ([]Session, error) {
	history := readClaudeHistory(root)
	cache := openListCache(cacheDir, HarnessClaude, root)
	defer cache.save(root, func(path string) bool {
		// What this listing did not look at stays: other projects', and
		// subagents' when it left them out.
		return project != nil || !subagents && claudeSubagentPath(path)
	})
	var out []Session
	claudeFiles(root, subagents, project, func(path, cwd string, sub bool) {
		if s, ok := claudeListed(path, cwd, history, cache); ok {
			s.Subagent = sub
			out = append(out, s)
		}
	})
	slices.SortFunc(out, func(a, b Session) int {
		return cmp.Or(b.Modified.Compare(a.Modified), strings.Compare(a.Path, b.Path))
	})
	return out, nil
}

// ClaudeFiles names the transcripts under root, subagents' included, as
// ListClaude finds them, without opening one: each with its id (the file's
// name), its project's cwd and whether it is a subagent's. What a reader
// of every line (the usage ledger) needs, which reads the rest itself.
func ClaudeFiles(root string) []Session {
	// Named first, then made at their number: a Session is some 300
	// bytes, and growing a slice of 10,000 of them copied each time.
	type file struct {
		path, cwd string
		sub       bool
	}
	var files []file
	claudeFiles(root, true, nil, func(path, cwd string, sub bool) {
		files = append(files, file{path, cwd, sub})
	})
	out := make([]Session, len(files))
	for k, f := range files {
		out[k] = Session{Harness: HarnessClaude, ID: strings.TrimSuffix(filepath.Base(f.path), ".jsonl"), Path: f.path, Cwd: f.cwd, Subagent: f.sub}
	}
	return out
}

// ClaudeFilesAt is ClaudeFiles of the files at paths alone: those that
// are transcripts, named as ClaudeFiles names them. A path among the
// transcripts that is a directory, or is gone and no transcript's name
// (a directory may have gone with transcripts under it), has ok false:
// only a walk can say. A transcript gone is named by none.
func ClaudeFilesAt(root string, paths []string) (out []Session, ok bool) {
	var registered []string
	loaded := false
	for _, p := range cleanPaths(paths) {
		var dir, rel string
		for _, container := range []string{"projects", ".projects"} {
			if r, err := filepath.Rel(filepath.Join(root, container), p); err == nil && filepath.IsLocal(r) {
				dir, rel = filepath.Join(root, container), r
				break
			}
		}
		if dir == "" {
			continue // no transcript: claudeFiles looks nowhere else
		}
		parts := strings.Split(rel, string(filepath.Separator))
		fi, err := os.Lstat(p)
		switch {
		case err != nil && strings.HasSuffix(p, ".jsonl") && len(parts) > 1:
			continue // a transcript gone
		case err != nil || fi.IsDir():
			return nil, false
		}
		// Where claudeFiles looks: a project's directory (a real one,
		// not a link) and its *.jsonl files; a session's directory in it
		// and the subagents/*.jsonl under it, of any type (a glob).
		isDir := func(path string) bool {
			fi, err := os.Lstat(path)
			return err == nil && fi.IsDir()
		}
		var sub bool
		switch {
		case len(parts) == 2 && strings.HasSuffix(parts[1], ".jsonl") && fi.Mode().IsRegular() && isDir(filepath.Join(dir, parts[0])):
			sub = strings.HasPrefix(parts[1], "agent-")
		case len(parts) == 4 && parts[2] == "subagents" && strings.HasSuffix(parts[3], ".jsonl") &&
			isDir(filepath.Join(dir, parts[0])) && isDir(filepath.Join(dir, parts[0], parts[1])):
			sub = true
		default:
			continue // a file claudeFiles does not name
		}
		if !loaded {
			registered, loaded = claudeRegistered(root), true
		}
		out = append(out, Session{Harness: HarnessClaude, ID: strings.TrimSuffix(filepath.Base(p), ".jsonl"), Path: p,
			Cwd: claudeProjectCwd(parts[0], registered), Subagent: sub})
	}
	return out, true
}

// claudeFiles calls fn with every transcript under root's projects
// directories (those project keeps, when not nil), its project's cwd, and whether it is a subagent's (an
// agent-*.jsonl beside the sessions, or one under <session>/subagents/,
// listed only with subagents).
func claudeFiles(root string, subagents bool, project func(name, cwd string) bool, fn func(path, cwd string, sub bool)) {
	registered := claudeRegistered(root)
	claudeProjects(root, func(name, dir string) {
		cwd := claudeProjectCwd(name, registered)
		if project == nil || project(name, cwd) {
			claudeProjectFiles(dir, subagents, func(path string, sub bool) { fn(path, cwd, sub) })
		}
	})
}

// claudeProjects calls fn with the name and path of every project
// directory under root's projects directories.
func claudeProjects(root string, fn func(name, dir string)) {
	for _, container := range []string{"projects", ".projects"} {
		projects, err := os.ReadDir(filepath.Join(root, container))
		if err != nil {
			continue
		}
		for _, p := range projects {
			if p.IsDir() {
				fn(p.Name(), filepath.Join(root, container, p.Name()))
			}
		}
	}
}

// claudeProjectFiles calls fn with every transcript in the project
// directory dir, and whether it is a subagent's (only with subagents).
func claudeProjectFiles(dir string, subagents bool, fn func(path string, sub bool)) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		switch {
		case e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".jsonl"):
			sub := strings.HasPrefix(e.Name(), "agent-")
			if !sub || subagents {
				fn(filepath.Join(dir, e.Name()), sub)
			}
		case e.IsDir() && subagents:
			nested, _ := filepath.Glob(filepath.Join(dir, e.Name(), "subagents", "*.jsonl"))
			for _, f := range nested {
				fn(f, true)
			}
		}
	}
}

// walkTranscripts names every transcript a listing with subagents looks
// at, opening none and reading no file of Claude Code's own.
func (c claudeSource) walkTranscripts(fn func(path string)) {
	claudeProjects(c.root, func(_, dir string) {
		claudeProjectFiles(dir, true, func(path string, _ bool) { fn(path) })
	})
}

// listingInputs is what a listing reads besides the transcripts that a
// mirror keeps of it: history.jsonl's first prompts and times.
// (~/.claude.json's project paths give only cwds, which a mirror's rows
// do not hold.)
func (c claudeSource) listingInputs() []string {
	return []string{filepath.Join(c.root, "history.jsonl")}
}

// ListCwd lists the transcripts of the project of cwd only: those in
// the project directory Claude Code names after it (every character but
// a letter or a digit a '-', as Claude Code's sanitizePath does; a name
// it shortened and hashed, past 200 characters, is read to be sure), or
// that ~/.claude.json registers for it. A listing of one project reads
// that project's files, not every session's head and tail.
func (c claudeSource) ListCwd(cwd string, subagents bool) ([]Session, error) {
	slug := claudeSlug(cwd)
	return listClaude(c.root, subagents, func(name, projectCwd string) bool {
		return name == slug || len(name) > claudeSlugMax || projectCwd == filepath.Clean(cwd)
	}, c.listCache)
}

// claudeSubagentPath says whether a transcript's path is a subagent's
// (claudeFiles): an agent-*.jsonl, or one under <session>/subagents/.
func claudeSubagentPath(path string) bool {
	return strings.HasPrefix(filepath.Base(path), "agent-") || filepath.Base(filepath.Dir(path)) == "subagents"
}

// claudeSlugMax is the longest project directory name Claude Code writes
// whole; a longer one is cut and given a hash.
const claudeSlugMax = 200

// claudeSlug is the name of the project directory Claude Code keeps the
// sessions of cwd in: path.replace(/[^a-zA-Z0-9]/g, '-'), on JavaScript's
// UTF-16 code units (a character past the BMP is two of them).
func claudeSlug(cwd string) string {
	var b strings.Builder
	for _, r := range filepath.Clean(cwd) {
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// Files are the transcripts under the root, subagents' included, named
// by their files (ClaudeFiles): no file is opened.
func (c claudeSource) Files() []Session { return ClaudeFiles(c.root) }

// ClaudeSessionAt describes the transcript at path as a listing of root
// would, whether or not it lies under root.
func ClaudeSessionAt(root, path string) (Session, error) {
	// The project directory's name stands for the cwd only inside
	// Claude's projects directory: elsewhere a directory is named anyhow,
	// and the cwd is what the records say, or nothing.
	projectCwd := ""
	if rel, err := filepath.Rel(filepath.Join(root, "projects"), path); err == nil && filepath.IsLocal(rel) {
		if name, _, ok := strings.Cut(filepath.ToSlash(rel), "/"); ok {
			projectCwd = claudeProjectCwd(name, claudeRegistered(root))
		}
	}
	s, ok := claudeListed(path, projectCwd, readClaudeHistory(root), nil)
	if !ok {
		_, err := os.Stat(path)
		return Session{}, err
	}
	s.Subagent = strings.HasPrefix(filepath.Base(path), "agent-") || filepath.Base(filepath.Dir(path)) == "subagents"
	return s, nil
}

var claudeTitleLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"type"\s*:\s*"(custom-title|ai-title)"`) })

func claudeListed(path, projectCwd string, history map[string]*claudeHistory, cache *listCache) (Session, bool) {
	fi, err := regularfile.Stat(path)
	if err != nil {
		return Session{}, false
	}
	facts, ok := cache.get(path, fi)
	if !ok {
		if facts, ok = claudeFileFacts(path); !ok {
			return Session{}, false
		}
	}
	if facts.Created == 0 {
		// The birth time goes with the facts: the cache keeps them by
		// inode, whose birth never moves, so a listing from the cache
		// makes one stat of a transcript, not two. (Facts an older xdev
		// cached without it get it now.)
		facts.Created = birthMillis(path, fi)
		ok = false
	}
	if !ok {
		cache.put(path, fi, facts)
	}
	id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	s := Session{Harness: HarnessClaude, ID: id, Path: path, Size: fi.Size(), mtimeNs: fi.ModTime().UnixNano()}
	if facts.Err != "" {
		s.Err = errors.New(facts.Err)
	}
	mtime := mtimeMillis(fi)
	created := facts.Created
	h := history[id]
	if h != nil {
		created = h.created
		s.FirstMessage = h.first
	}
	s.Created, s.Modified = Time(created), Time(max(mtime, historyModified(h)))
	switch {
	case h != nil && h.cwd != "":
		s.Cwd = h.cwd
	case facts.Cwd != "":
		s.Cwd = facts.Cwd
	default:
		s.Cwd = projectCwd
	}
	if s.FirstMessage == "" {
		s.FirstMessage = facts.First
	}
	// Claude Code's own picker names a session by its summary line when
	// it has no title.
	s.Title = cmp.Or(facts.Custom, facts.AI, facts.Summary)
	return s, true
}

// claudeFileFacts reads what a listing wants of a transcript's own bytes:
// from its first 64 KiB the recorded cwd, the first prompt and the
// summary; from its last 64 KiB the latest custom and AI titles.
func claudeFileFacts(path string) (fileFacts, bool) {
	f, fi, err := regularfile.Open(path, 0)
	if err != nil {
		return fileFacts{}, false
	}
	defer f.Close()
	var facts fileFacts
	head, done := readPooled(f)
	defer done()
	seen := false
	for line := range bytes.Lines(head) {
		if seen && facts.Cwd != "" && facts.First != "" && !bytes.Contains(line, []byte(`"summary"`)) {
			// All a listing wants of the head is known; the lines left are
			// the conversation, often tool outputs of many KB each, and
			// parsing them was most of a listing's time.
			continue
		}
		v, err := jsonx.Parse(line)
		if err != nil || v.Kind() != jsonx.Object {
			continue
		}
		if !seen {
			seen = true
			if h := harnessOf(v); h != HarnessClaude && h != "?" {
				facts.Err = fmt.Sprintf("%s: line 1 is %s, not Claude Code's", path, formatName(h))
			}
		}
		if facts.Cwd == "" {
			facts.Cwd, _ = stringField(v, "cwd")
		}
		if t, ok := stringField(v, "summary"); ok && v.Get("type").Is("summary") {
			facts.Summary = t
		}
		if facts.First == "" && v.Get("type").Is("user") && !v.Get("isMeta").Truthy() {
			facts.First = claudePromptText(v.Get("message").Get("content"))
		}
	}
	tail := head
	if fi.Size() > claudeHeadBytes {
		var done func()
		tail, done = readPooled(io.NewSectionReader(f, fi.Size()-claudeHeadBytes, claudeHeadBytes))
		defer done()
	}
	for line := range bytes.Lines(tail) {
		// Both kinds of title line hold `-title"`; looking for it first
		// spares the regexp the rest of the tail's lines.
		if !bytes.Contains(line, []byte(`-title"`)) || !claudeTitleLine().Match(line) {
			continue
		}
		if v, err := jsonx.Parse(line); err == nil {
			if t, ok := stringField(v, "customTitle"); ok && v.Get("type").Is("custom-title") {
				facts.Custom = t
			}
			if t, ok := stringField(v, "aiTitle"); ok && v.Get("type").Is("ai-title") {
				facts.AI = t
			}
		}
	}
	return facts, true
}

func historyModified(h *claudeHistory) float64 {
	if h == nil {
		return 0
	}
	return h.modified
}

// claudePromptText is the text a user record typed: its string content,
// or its text blocks; a record of tool results only has none.
func claudePromptText(v jsonx.Value) string {
	if s, ok := v.Text(); ok {
		return claudeDisplayText(s)
	}
	var parts []string
	for _, b := range v.Items() {
		if t, ok := b.Get("text").Text(); ok && b.Get("type").Is("text") {
			parts = append(parts, t)
		}
	}
	return claudeDisplayText(strings.Join(parts, " "))
}

// claudeDisplayText is a prompt as Claude Code shows it, in one line: a
// slash command's markup (<command-message>init is analyzing…
// </command-message><command-name>/init</command-name><command-args>…)
// as the command and its arguments ("/init …"), and the notes Claude
// Code wraps in tags for the model (<system-reminder>, a hook's output)
// left out.
func claudeDisplayText(s string) string {
	if name, ok := claudeTag(s, "command-name"); ok {
		args, _ := claudeTag(s, "command-args")
		s = strings.TrimSpace(name + " " + args)
	}
	for _, tag := range []string{"command-message", "system-reminder", "user-prompt-submit-hook", "local-command-caveat"} {
		for {
			i := strings.Index(s, "<"+tag+">")
			if i < 0 {
				break
			}
			j := strings.Index(s[i:], "</"+tag+">")
			if j < 0 {
				s = s[:i]
				break
			}
			s = s[:i] + " " + s[i+j+len(tag)+3:]
		}
	}
	if body, ok := claudeTag(s, "local-command-stdout"); ok {
		s = body
	}
	return strings.Join(strings.Fields(s), " ")
}

// claudeTag is the text inside <tag>…</tag> in s.
func claudeTag(s, tag string) (string, bool) {
	_, rest, ok := strings.Cut(s, "<"+tag+">")
	if !ok {
		return "", false
	}
	body, _, _ := strings.Cut(rest, "</"+tag+">")
	return strings.TrimSpace(body), true
}
