package pick

// The keys, by what Bubble Tea calls them (tea.KeyPressMsg.String), and
// what each does. Printable keys are typed into the query.
const (
	keyChoose    = "enter"
	keyQuit      = "ctrl+c"
	keyBack      = "esc" // clears the query, else quits
	keyUp        = "up"
	keyDown      = "down"
	keyPageUp    = "pgup"
	keyPageDown  = "pgdown"
	keyFirst     = "home"
	keyLast      = "end"
	keyHarness   = "tab"
	keyHarnessBk = "shift+tab"
	keyProject   = "ctrl+p"
	keySubagents = "ctrl+s"
	keyPager     = "ctrl+o"
	keyFork      = "ctrl+f"
	keyExport    = "ctrl+e"
	keyCopy      = "ctrl+y"
	keyErase     = "backspace"
	keyEraseWord = "ctrl+w"
	keyEraseAll  = "ctrl+u"
)

// keyAliases are other names of the same keys (a terminal's, or another
// picker's habit).
var keyAliases = map[string]string{
	"ctrl+n": keyDown, "ctrl+j": keyDown,
	"ctrl+k": keyUp,
	"ctrl+d": keyPageDown, "ctrl+b": keyPageUp,
	"ctrl+h": keyErase, "alt+backspace": keyEraseWord,
}

// help is the status line's reminder of the keys, widest first: the
// first that fits is shown.
var help = []string{
	"enter resume · esc quit · ↑↓ pgup/pgdn move · tab harness · ^p project · ^s subagents · ^o pager · ^f fork · ^e export · ^y copy path · /word searches the text",
	"enter resume · esc quit · tab harness · ^p project · ^s subagents · ^o pager · ^f fork · ^e export · ^y copy · /text",
	"enter resume · esc quit · tab harness · ^p project · ^s subagents · ^o ^f ^e ^y",
	"enter resume · esc quit · tab harness · ^p project",
	"enter · esc",
}
