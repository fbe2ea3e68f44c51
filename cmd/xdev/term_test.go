package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/xdev/xdev/internal/session"
)

// hostile returns a string mixing text with what a terminal must never be
// sent from session content: escape sequences (OSC retitle, screen clear,
// cursor moves), bare C0 and C1 controls, DEL, bidi overrides, CRs and
// bytes that are not UTF-8.
func hostile(r *rand.Rand) string {
	parts := []string{"text ", "漢字 ", "😀 ", "\x1b]0;PWNED\x07", "\x1b[2J", "\x1b[1;31m", "\x1b[H", "\x07", "\x00",
		"\x08", "\x7f", "\u009b2J", "\u0085", "\u202e", "\u2066", "\r", "\r\n", "\n", "\t", "\xff", "\xc3", "\xe2\x82"}
	var b strings.Builder
	for range 3 + r.IntN(12) {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	return b.String()
}

// checkTerminalSafe fails if out holds anything a terminal would act on.
func checkTerminalSafe(t *testing.T, what string, out []byte) {
	t.Helper()
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRune(out[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			t.Errorf("%s: byte %#x at %d is not UTF-8", what, out[i], i)
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f, r >= 0x80 && r <= 0x9f, escapedRune(r):
			t.Errorf("%s: control character %U at %d: %q", what, r, i, out[max(0, i-20):min(len(out), i+20)])
		default:
			i += size
			continue
		}
		return
	}
}

// TestHumanOutputIsEscaped: session content full of terminal escapes,
// controls and invalid UTF-8, in every field a command prints (title,
// cwd, messages, tool names and arguments, outputs, thinking, labels,
// custom types, models, errors), never reaches the terminal as such,
// whichever command prints it, on a terminal or a pipe; --json output
// still carries it exactly.
func TestHumanOutputIsEscaped(t *testing.T) {
	for seed := range 8 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), 9))
			data := t.TempDir()
			path := writeHostileSession(t, data, r)
			payload := hostile(r)
			for _, args := range [][]string{
				{"list", "--all"}, {"show", path}, {"show", "--full", path}, {"show", "--tree", path},
				{"show", "--raw", path}, {"context", path}, {"verify", path}, {"export", path},
				{"export", "--format", "html", path}, {"show", "nothing-" + payload}, {"retitle", path, payload},
			} {
				for _, tty := range []bool{true, false} {
					var out, errb bytes.Buffer
					e := newEnv(strings.NewReader(""), &out, &errb, tty, 100)
					run(e, append([]string{args[0], "--data-dir", data}, args[1:]...))
					if args[0] == "show" && args[1] == "--raw" && !tty || args[0] == "export" && !tty {
						// Data on a pipe, byte for byte: not for a terminal.
						checkTerminalSafe(t, fmt.Sprintf("%v stderr", args), errb.Bytes())
						continue
					}
					checkTerminalSafe(t, fmt.Sprintf("%v (tty %v) stdout", args, tty), out.Bytes())
					// The progress line is ours: its \r and erase-line are meant.
					stderr := progressLine.ReplaceAll(errb.Bytes(), nil)
					checkTerminalSafe(t, fmt.Sprintf("%v (tty %v) stderr", args, tty), stderr)
				}
			}
			// --json is data: the content survives exactly (as JSON escapes).
			var out bytes.Buffer
			run(newEnv(strings.NewReader(""), &out, &bytes.Buffer{}, true, 100), []string{"show", "--json", "--data-dir", data, path})
			var got struct{ Messages []struct{ Content any } }
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("show --json: %v\n%s", err, out.Bytes())
			}
			if len(got.Messages) == 0 || !strings.Contains(out.String(), `\u001b`) {
				t.Errorf("show --json lost the content: %s", out.Bytes())
			}
		})
	}
}

// writeHostileSession writes a session whose every printed field is
// hostile, in the omp layout under data.
func writeHostileSession(t *testing.T, data string, r *rand.Rand) string {
	t.Helper()
	str := func() string { b, _ := json.Marshal(hostile(r)); return string(b) }
	dir := filepath.Join(session.SessionsDir(data), "-p")
	must(t, os.MkdirAll(dir, 0o700))
	path := filepath.Join(dir, "s.jsonl")
	slot, err := session.MarshalTitleSlot("T\x1b]0;x\x07 "+hostile(r), session.TitleAuto, "2026-11-01T10:00:00.000Z")
	must(t, err)
	lines := []string{
		string(slot[:len(slot)-1]),
		`{"type":"session","version":3,"id":"0195-hostile","timestamp":"2026-11-01T10:00:00.000Z","cwd":` + str() + `}`,
		`{"type":"model_change","id":"a0000001","parentId":null,"timestamp":"2026-11-01T10:00:00.000Z","model":` + str() + `}`,
		`{"type":"message","id":"a0000002","parentId":"a0000001","timestamp":"2026-11-01T10:00:00.000Z","message":{"role":"user","content":` + str() + `,"timestamp":1}}`,
		`{"type":"message","id":"a0000003","parentId":"a0000002","timestamp":"2026-11-01T10:00:00.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":` + str() + `},{"type":"text","text":` + str() + `},{"type":"toolCall","id":"c1","name":` + str() + `,"arguments":{"cmd":` + str() + `}}],"model":` + str() + `,"stopReason":"toolUse","timestamp":2}}`,
		`{"type":"message","id":"a0000004","parentId":"a0000003","timestamp":"2026-11-01T10:00:00.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":` + str() + `,"content":[{"type":"text","text":` + str() + `}],"isError":true,"timestamp":3}}`,
		`{"type":"label","id":"a0000005","parentId":"a0000004","timestamp":"2026-11-01T10:00:00.000Z","targetId":"a0000002","label":` + str() + `}`,
		`{"type":"custom_message","customType":` + str() + `,"content":` + str() + `,"display":true,"id":"a0000006","parentId":"a0000005","timestamp":"2026-11-01T10:00:00.000Z"}`,
		`{"type":"message","id":"a0000007","parentId":"a0000004","timestamp":"2026-11-01T10:00:00.000Z","message":{"role":"bashExecution","command":` + str() + `,"output":` + str() + `,"timestamp":4}}`,
		`{"type":"compaction","id":"a0000008","parentId":"a0000007","timestamp":"2026-11-01T10:00:00.000Z","summary":` + str() + `,"shortSummary":` + str() + `,"firstKeptEntryId":"a0000007","tokensBefore":1}`,
		`{"type":"message","id":"a0000009","parentId":"a0000008","timestamp":"2026-11-01T10:00:00.000Z","message":{"role":"user","content":` + str() + `,"timestamp":5}}`,
		"not json \x1b[2J garbage",
	}
	must(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return path
}

var progressLine = regexp.MustCompile("\r[a-z ]+ [0-9]+/[0-9]+…|\r\x1b\\[K")

// TestTableFits: a terminal table never runs past the terminal's width,
// measured in display columns, whatever the titles and directories hold
// (CJK, emoji, combining marks, escapes), and the id column is never cut.
func TestTableFits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"fix", "the", "漢字", "テスト", "😀", "👩‍💻", "e\u0301", "🇫🇷", "\x1b[2J", "long-directory-name", "ü"}
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(words[r.IntN(len(words))] + " ")
		}
		return b.String()
	}
	for range 300 {
		width := 40 + r.IntN(120)
		var out bytes.Buffer
		e := newEnv(nil, &out, &bytes.Buffer{}, true, width)
		tb := &table{e: e, header: []string{"ID", "TITLE", "STATUS", "DIRECTORY"}, flex: []bool{false, true, false, true}}
		var ids []string
		for range 1 + r.IntN(5) {
			id := fmt.Sprintf("%08x", r.Uint32())
			ids = append(ids, id)
			tb.add(id, text(r.IntN(20)), "complete", "~/"+text(r.IntN(10)))
		}
		tb.print()
		e.flush()
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		for _, l := range lines {
			if w := displayWidth(l); w > width && w > 8+columnGap+minFlexWidth+columnGap+8+columnGap+minFlexWidth {
				t.Errorf("width %d: a line of %d columns: %q", width, w, l)
			}
		}
		for i, id := range ids {
			if !strings.HasPrefix(lines[i+1], id+" ") {
				t.Errorf("row %d does not start with its whole id %s: %q", i, id, lines[i+1])
			}
		}
	}
}

// FuzzEscapeWriter: whatever bytes a session holds, and however the
// writes split them, what reaches the terminal is safe, and every byte
// that was safe to show comes out as it went in.
func FuzzEscapeWriter(f *testing.F) {
	f.Add([]byte("hi \x1b]0;PWNED\x07\x1b[2J there\r\n\u202e\xff\xc3"), uint8(3))
	f.Add([]byte("漢字😀\r"), uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, split uint8) {
		var out bytes.Buffer
		w := &escapeWriter{w: &out}
		for rest := in; len(rest) > 0; {
			n := min(len(rest), int(split)+1)
			w.Write(rest[:n])
			rest = rest[n:]
		}
		w.flush()
		checkTerminalSafe(t, "output", out.Bytes())
		var whole bytes.Buffer
		w = &escapeWriter{w: &whole}
		w.Write(in)
		w.flush()
		if whole.String() != out.String() {
			t.Fatalf("split writes give %q, one write %q", out.String(), whole.String())
		}
	})
}

// TestIsTerminal: /dev/null, a file and a pipe are no terminals, though
// /dev/null is a character device: progress written to `2>>log` with
// stdout on /dev/null would be noise in the log.
func TestIsTerminal(t *testing.T) {
	t.Setenv("XDEV_FORCE_TTY", "")
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, f := range map[string]*os.File{"/dev/null": null, "a file": file, "a pipe": w} {
		if isTerminal(f) {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
	// Progress follows stderr: with stdout on a terminal and stderr not,
	// none is written.
	var out, errb bytes.Buffer
	e := newEnv(strings.NewReader(""), &out, &errb, true, 80)
	e.errTTY = false
	p := &progress{e: e, what: "working"}
	p.update(1, 2)
	p.update(2, 2)
	p.done()
	if errb.Len() != 0 {
		t.Errorf("progress on a stderr that is no terminal: %q", errb.String())
	}
}
