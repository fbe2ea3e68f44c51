package foreign

import (
	"fmt"
	"strings"
)

// A Kind is the registry entry of one harness this package reads:
// everything the rest of xdev knows of it by name (what --from takes,
// the flag that moves its directory, where it keeps its sessions by
// default, how a person calls it) and the Source that reads it. Adding a
// harness is one file of this package (its Source) and one entry in
// Kinds; every command, help text, MCP enum and serve filter follows
// from there (docs/catalog.md, "Adding a harness").
type Kind struct {
	// Name is the harness's name as --from takes it and listings print it.
	Name string
	// Display is how a person calls it: "Claude Code".
	Display string
	// DirHelp says, for the flag --<Name>-dir, what the directory is and
	// where it is by default (its environment variables first).
	DirHelp string
	// DefaultRoot is where the harness keeps its data on this machine,
	// from its environment variables, else under the home directory.
	DefaultRoot func() (string, error)
	// Env are the environment variables DefaultRoot reads (XDG_DATA_HOME
	// for opencode), so that a test can point every harness at a home.
	Env []string
	// Watched is the directory under the root whose tree holds its
	// sessions, what a watcher watches ("" for the root itself).
	Watched string
	// FilesUnder is the directory whose tree holds its session files, by
	// which the root of a file found elsewhere is known (the directory
	// above it); "" when a file's own directory is its root.
	FilesUnder string
	// OmpFormat: its files are in omp's format and open as they are; the
	// others' are converted to be read.
	OmpFormat bool
	// New is the Source of its sessions under root.
	New func(root string) Source
	// Resume is the command line that resumes the session id (its file at
	// path) in the harness itself, from its own CLI's flags, run in the
	// session's working directory; nil where the harness has no command
	// that resumes one session, and NoResume then says what it has.
	Resume   func(id, path string) []string
	NoResume string
}

// argv is a Resume of the harness's command and its flags, the session's
// id last.
func argv(words ...string) func(id, path string) []string {
	return func(id, _ string) []string { return append(append([]string(nil), words...), id) }
}

// Kinds are the harnesses this package reads, in the order a search for
// a session's name looks through them and a listing of all of them
// shows them.
var Kinds = []Kind{
	{Name: HarnessClaude, Display: "Claude Code", DirHelp: "Claude Code's dir (default $CLAUDE_CONFIG_DIR or ~/.claude)",
		DefaultRoot: ClaudeDir, Env: []string{"CLAUDE_CONFIG_DIR"}, Watched: "projects", FilesUnder: "projects", New: func(root string) Source { return claudeSource{root: root} },
		Resume: argv("claude", "--resume")},
	{Name: HarnessCodex, Display: "Codex", DirHelp: "Codex's dir (default $CODEX_HOME or ~/.codex)",
		DefaultRoot: CodexDir, Env: []string{"CODEX_HOME"}, Watched: "sessions", FilesUnder: "sessions", New: func(root string) Source { return codexSource{root: root} },
		Resume: argv("codex", "resume")},
	{Name: HarnessPi, Display: "pi", DirHelp: "pi's agent dir (default ~/.pi/agent)",
		DefaultRoot: PiDir, Watched: "sessions", OmpFormat: true, New: func(root string) Source { return piSource{root} },
		Resume: func(_, path string) []string { return []string{"pi", "--session", path} }},
	{Name: HarnessCopilot, Display: "Copilot CLI", DirHelp: "Copilot CLI's dir (default $COPILOT_HOME or ~/.copilot)",
		DefaultRoot: CopilotDir, Env: []string{"COPILOT_HOME"}, Watched: "session-state", FilesUnder: "session-state", New: func(root string) Source { return copilotSource{root} },
		Resume: argv("copilot", "--resume")},
	{Name: HarnessGemini, Display: "Gemini CLI", DirHelp: "Gemini CLI's dir (default $GEMINI_CLI_HOME/.gemini or ~/.gemini)",
		DefaultRoot: GeminiDir, Env: []string{"GEMINI_CLI_HOME"}, Watched: "tmp", FilesUnder: "tmp", New: func(root string) Source { return geminiSource{root} },
		Resume: argv("gemini", "--resume")},
	{Name: HarnessOpencode, Display: "opencode", DirHelp: "opencode's data dir (default $XDG_DATA_HOME/opencode or ~/.local/share/opencode)",
		DefaultRoot: OpencodeDir, Env: []string{"XDG_DATA_HOME"}, FilesUnder: "storage", New: func(root string) Source { return opencodeSource{root} },
		Resume: argv("opencode", "--session")},
	{Name: HarnessQwen, Display: "Qwen Code", DirHelp: "Qwen Code's dir (default $QWEN_RUNTIME_DIR, $QWEN_HOME or ~/.qwen)",
		DefaultRoot: QwenDir, Env: []string{"QWEN_RUNTIME_DIR", "QWEN_HOME"}, Watched: "projects", FilesUnder: "projects", New: func(root string) Source { return qwenSource{root} },
		Resume: argv("qwen", "--resume")},
	{Name: HarnessContinue, Display: "Continue", DirHelp: "Continue's dir (default $CONTINUE_GLOBAL_DIR or ~/.continue)",
		DefaultRoot: ContinueDir, Env: []string{"CONTINUE_GLOBAL_DIR"}, Watched: "sessions", FilesUnder: "sessions", New: func(root string) Source { return continueSource{root} },
		NoResume: "Continue resumes its sessions from its own history list, not from a command line"},
	{Name: HarnessKimi, Display: "Kimi CLI", DirHelp: "Kimi CLI's dir (default $KIMI_SHARE_DIR or ~/.kimi)",
		DefaultRoot: KimiDir, Env: []string{"KIMI_SHARE_DIR"}, Watched: "sessions", New: func(root string) Source { return kimiSource{root} },
		Resume: argv("kimi", "--session")},
	{Name: HarnessCline, Display: "Cline", DirHelp: "Cline's storage (default $CLINE_DIR/data, VS Code's globalStorage/saoudrizwan.claude-dev, or ~/.cline/data)",
		DefaultRoot: ClineDir, Env: []string{"CLINE_DIR"}, Watched: "tasks", FilesUnder: "tasks", New: func(root string) Source { return clineSource{root} },
		NoResume: "Cline reopens a task from its history in the editor, not from a command line"},
	{Name: HarnessCrush, Display: "Crush", DirHelp: "Crush's global data dir, whose projects.json names the projects whose .crush/crush.db are read (default $CRUSH_GLOBAL_DATA, $XDG_DATA_HOME/crush or ~/.local/share/crush)",
		DefaultRoot: CrushDir, Env: []string{"CRUSH_GLOBAL_DATA", "XDG_DATA_HOME"}, New: func(root string) Source { return crushSource{root: root} },
		NoResume: "Crush reopens a session from its own session list, not from a command line"},
	{Name: HarnessGoose, Display: "Goose", DirHelp: "Goose's data dir (default $GOOSE_PATH_ROOT/data, $XDG_DATA_HOME/goose or ~/.local/share/goose)",
		DefaultRoot: GooseDir, Env: []string{"GOOSE_PATH_ROOT", "XDG_DATA_HOME"}, Watched: "sessions", FilesUnder: "sessions", New: func(root string) Source { return gooseSource{root} },
		Resume: argv("goose", "session", "--resume", "--session-id")},
	{Name: HarnessAider, Display: "Aider", DirHelp: "Aider's own dir (default ~/.aider); its chats, .aider.chat.history.md, are read in the projects (--project)",
		DefaultRoot: AiderDir, New: func(root string) Source { return aiderSource{root: root} },
		NoResume: "Aider keeps one chat history a project, restored with aider --restore-chat-history in it, not one session"},
}

// KindOf is the registry entry of the harness called name.
func KindOf(name string) (Kind, bool) {
	for _, k := range Kinds {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// unknownHarness is the error for a name no Kind has.
func unknownHarness(name string) error {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = k.Name
	}
	return fmt.Errorf("no harness %q (%s)", name, strings.Join(names, ", "))
}
