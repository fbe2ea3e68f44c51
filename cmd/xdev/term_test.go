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

	"github.com/xdev/xdev/internal/term"

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
	if i := term.FirstUnsafe(out); i >= 0 {
		t.Errorf("%s: byte %d is one a terminal acts on: %q", what, i, out[max(0, i-20):min(len(out), i+20)])
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
