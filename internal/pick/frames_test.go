package pick

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/term"
)

var update = flag.Bool("update", false, "write the golden frames anew")

// TestFrames compares the frames of a few keys with the goldens under
// testdata/ (the text, the styles left out), at 80×24 and 160×48.
func TestFrames(t *testing.T) {
	rs := rows(30, titled)
	rs[0].Title = "Refactor the session list"
	rs[1].Title = ""
	rs[1].FirstMessage = "why does the picker\nstall on a 5 GB store?"
	rs[2].Cwd = "/home/someone/src/a-project-with-a-very-long-name-indeed"
	rs[3].Subagent = true
	for _, tc := range []struct {
		name string
		keys []string
	}{
		{"start", nil},
		{"typed", []string{"r", "e", "f"}},
		{"claude", []string{"tab", "down"}},
		{"nothing", []string{"q", "q", "q", "q"}},
	} {
		for _, size := range [][2]int{{80, 24}, {160, 48}} {
			name := fmt.Sprintf("%s-%dx%d", tc.name, size[0], size[1])
			t.Run(name, func(t *testing.T) {
				d := newDriver(t, Options{Source: staticSource(rs, nil), Cwd: "/work/project-2"}, size[0], size[1])
				d.keys(tc.keys...)
				got := ansi.Strip(d.m.Frame()) + "\n"
				golden := filepath.Join("testdata", name+".golden")
				if *update {
					os.MkdirAll("testdata", 0o755)
					if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				if got != string(want) {
					t.Errorf("the frame differs from %s (go test -update writes it):\n%s", golden, got)
				}
			})
		}
	}
}

// hostile are texts a session may hold that a terminal would obey, or
// draw wider or narrower than they count, or right to left.
var hostile = []string{
	"\x1b[2J\x1b[H", "\x1b]0;pwned\x07", "\x1b]52;c;ZXZpbA==\x07", "\x1b[31mred", "\x9b31m", "\x90q\x9c", "\r\roverwrite",
	"\b\b\bback", "\x00nul", "\x7f", "tab\there", "\u202eevil\u202c", "\u2066iso\u2069", "\u200f\u200e", "שלום עולם", "مرحبا بالعالم",
	"日本語のタイトル", "한국어", "e\u0301\u0301\u0301", "👍🏽", "👨‍👩‍👧‍👦", "🇺🇸🇯🇵", "❤️", "☕︎", "a\u200bb", "\ufeff", "\xff\xfe bad utf8",
	"\U0001F600\U0001F600\U0001F600", "x\u0300\u0301\u0302\u0303\u0304", "\u0e01\u0e34\u0e48", "각", "\u3000", "Ａ全角",
	strings.Repeat("long ", 400), strings.Repeat("界", 300), "line\nbreak\r\nagain", "%s%n%x", "AKIAIOSFODNN7EXAMPLE",
}

// hostileText is n pieces of hostile and plain text, at random.
func hostileText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		if r.IntN(3) == 0 {
			b.WriteString("plain words ")
			continue
		}
		b.WriteString(hostile[r.IntN(len(hostile))])
	}
	return b.String()
}

// TestHostileFramesHoldTheirShape draws pickers of sessions whose every
// text is hostile, at many sizes, after random keys, and checks every
// frame: as many lines as the terminal, each exactly its width by every
// measure (term's, and Bubble Tea's by grapheme and by wcwidth), and
// nothing a terminal obeys but the picker's own styles.
func TestHostileFramesHoldTheirShape(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := 300
	if testing.Short() {
		cases = 60
	}
	sizes := [][2]int{{80, 24}, {160, 48}, {120, 30}, {119, 30}, {40, 10}, {20, 5}, {200, 60}, {1, 1}, {3, 2}}
	keys := []string{"down", "up", "pgdown", "tab", "ctrl+s", "ctrl+p", "end", "a", "é", "界", "backspace", "/", "esc"}
	for c := range cases {
		rs := rows(1+r.IntN(20), func(int) string { return hostileText(r, 1+r.IntN(4)) })
		for k := range rs {
			rs[k].FirstMessage = hostileText(r, r.IntN(6))
			rs[k].Cwd = "/work/" + hostileText(r, 1)
			rs[k].ID = hostileText(r, 1)
			rs[k].Harness = catalog.Harness([]string{"claude", "codex", "xdev", hostileText(r, 1)}[r.IntN(4)])
		}
		src := staticSource(rs, nil)
		msgs := make([]ai.Message, 1+r.IntN(6))
		for k := range msgs {
			msgs[k] = ai.Message{Role: []ai.Role{ai.RoleUser, ai.RoleAssistant, ai.RoleToolResult, ai.Role(hostileText(r, 1))}[r.IntN(4)],
				ToolName: hostileText(r, r.IntN(2)), Content: ai.TextContent(hostileText(r, 1+r.IntN(8)))}
		}
		src.Preview = func(context.Context, catalog.Row, int) ([]ai.Message, error) { return msgs, nil }
		size := sizes[c%len(sizes)]
		d := newDriver(t, Options{Source: src, Query: hostileText(r, r.IntN(2))}, size[0], size[1])
		for k := range 1 + r.IntN(6) {
			check(t, fmt.Sprintf("case %d, %dx%d, after %d keys", c, size[0], size[1], k), d.m.Frame(), size[0], size[1])
			d.keys(keys[r.IntN(len(keys))])
			if d.quit {
				break
			}
		}
	}
}

// check fails t unless frame is h lines of exactly w columns, with no
// control but the SGR styles the picker writes.
func check(t testing.TB, what, frame string, w, h int) {
	t.Helper()
	lines := strings.Split(frame, "\n")
	if len(lines) != h {
		t.Fatalf("%s: %d lines, want %d:\n%s", what, len(lines), h, frame)
	}
	for k, line := range lines {
		plain := ansi.Strip(line)
		if gw, wc, tw := ansi.StringWidth(line), ansi.StringWidthWc(line), term.DisplayWidth(plain); gw != w || wc != w || tw != w {
			t.Fatalf("%s: line %d is %d columns by grapheme, %d by wcwidth, %d by term's measure, want %d: %q", what, k, gw, wc, tw, w, plain)
		}
		if !utf8.ValidString(line) {
			t.Fatalf("%s: line %d is not UTF-8: %q", what, k, line)
		}
		for _, c := range plain {
			if unicode.IsControl(c) || unicode.Is(unicode.Bidi_Control, c) {
				t.Fatalf("%s: line %d holds %U: %q", what, k, c, plain)
			}
		}
		// The styles are the only escapes: ESC [ … m.
		rest := line
		for {
			i := strings.IndexByte(rest, 0x1b)
			if i < 0 {
				break
			}
			rest = rest[i+1:]
			j := strings.IndexFunc(rest, func(r rune) bool { return r != '[' && r != ';' && r != ':' && (r < '0' || r > '9') })
			if !strings.HasPrefix(rest, "[") || j < 0 || rest[j] != 'm' {
				t.Fatalf("%s: line %d holds an escape that is not a style: %q", what, k, line)
			}
		}
	}
}

// The secrets a transcript holds are masked wherever the picker shows
// them: the preview, and the resume command.
func TestPreviewMasksSecrets(t *testing.T) {
	key := "ghp_" + strings.Repeat("A1b2C3d4E5", 4)[:36]
	rs := rows(2, titled)
	rs[0].Cwd = "/work/" + key
	src := staticSource(rs, nil)
	src.Preview = func(context.Context, catalog.Row, int) ([]ai.Message, error) {
		return []ai.Message{{Role: ai.RoleUser, Content: ai.TextContent("my token is " + key)}}, nil
	}
	d := newDriver(t, Options{Source: src}, 200, 40)
	if frame := d.m.Frame(); strings.Contains(frame, key) || strings.Contains(frame, key[:20]) {
		t.Errorf("the frame shows the key:\n%s", frame)
	}
	// What a key's work or a read said, and the project switched to.
	d.keys("ctrl+p")
	d.send(statusMsg("fork failed: open /work/" + key + "/x: no such file"))
	src.Preview = func(context.Context, catalog.Row, int) ([]ai.Message, error) {
		return nil, errors.New("cannot open /work/" + key)
	}
	d = newDriver(t, Options{Source: src}, 200, 40)
	d.keys("ctrl+p")
	d.send(statusMsg("export failed: " + key))
	if frame := d.m.Frame(); strings.Contains(frame, key[:20]) {
		t.Errorf("the frame shows the key:\n%s", frame)
	}
}

// FuzzFrame draws a picker of a session titled, begun and made where the
// fuzzer says, with its query, and checks the frame as the hostile
// frames are checked.
func FuzzFrame(f *testing.F) {
	for _, s := range hostile[:12] {
		f.Add(s, "hello", "/w", "a")
	}
	f.Add("Refactor", "the parser", "/work/p", "rfctr")
	f.Fuzz(func(t *testing.T, title, message, cwd, query string) {
		rs := rows(3, titled)
		rs[0].Title, rs[0].FirstMessage, rs[0].Cwd = title, message, cwd
		src := staticSource(rs, func(string) []string { return []string{rs[0].Path} })
		src.Preview = func(context.Context, catalog.Row, int) ([]ai.Message, error) {
			return []ai.Message{{Role: ai.RoleUser, Content: ai.TextContent(title + "\n" + message)}}, nil
		}
		d := newDriver(t, Options{Source: src, Query: query}, 80, 24)
		check(t, "fuzz", d.m.Frame(), 80, 24)
		d.keys("down", "tab")
		check(t, "fuzz, after keys", d.m.Frame(), 80, 24)
	})
}
