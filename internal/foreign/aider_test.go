package foreign

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/realfixtures"
)

var realAider = realfixtures.Join("aider")

// aiderProjects are the real projects' chat histories and a hand-made one
// (testdata/aider/hand-aider: two runs started in the same second, a
// multi-line prompt, a /model change, a reply with no cost), each a
// project directory under the returned dir.
func aiderProjects(t *testing.T) (dir string, projects []string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "projects")
	if hasReal(t, "the real Aider chat histories") {
		copyTree(t, realAider, dir)
	}
	copyTree(t, "testdata/aider", dir)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		projects = append(projects, filepath.Join(dir, e.Name()))
	}
	return dir, projects
}

func aiderSourceOf(projects []string) Source {
	src, _ := NewSource(HarnessAider, "/nonexistent/.aider")
	return src.(ProjectReader).WithProjects(func() []string { return projects })
}

// TestAiderList: each "# aider chat started at" line of a project's
// chat is a session, named by its start (the second of two in one second
// "-2"), its first prompt its first message; nothing changes.
func TestAiderList(t *testing.T) {
	dir, projects := aiderProjects(t)
	before := treeBytes(t, dir)
	src := aiderSourceOf(projects)
	list, err := src.List(false)
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	for _, p := range projects {
		b, _ := os.ReadFile(filepath.Join(p, aiderChatMD))
		runs += len(regexp.MustCompile(`(?m)^# aider chat started at `).FindAll(b, -1))
	}
	if len(list) != runs {
		t.Errorf("%d sessions, the chats have %d runs", len(list), runs)
	}
	for _, s := range list {
		if s.Err != nil || s.Created.IsZero() || s.Modified.Before(s.Created) || s.Size <= 0 {
			t.Errorf("%+v", s)
		}
		if at, err := src.At(s.Path); err != nil || at.ID != s.ID {
			t.Errorf("At(%s) = %+v, %v", s.Path, at, err)
		}
	}
	var hand []string
	for _, s := range list {
		if filepath.Base(s.Cwd) == "hand-aider" {
			hand = append(hand, s.ID+" "+s.FirstMessage)
		}
	}
	slices.Sort(hand)
	if want := []string{"20250301T100000 add a --verbose flag\nto main.go", "20250301T100000-2 second run, same second"}; !slices.Equal(hand, want) {
		t.Errorf("hand-made runs %q, want %q", hand, want)
	}
	if l, _ := src.(CwdLister).ListCwd(filepath.Join(dir, "hand-aider", "cmd"), false); len(l) != 2 {
		t.Errorf("from a directory of the project: %d sessions, want 2", len(l))
	}
	if after := treeBytes(t, dir); !maps2Equal(before, after) {
		t.Error("listing changed a chat history")
	}
}

// TestAiderConvert: a run converts to its prompts, its replies with the
// tokens and cost of the line that closes each, and its models.
func TestAiderConvert(t *testing.T) {
	_, projects := aiderProjects(t)
	src := aiderSourceOf(projects)
	list, _ := src.List(false)
	s := list[slices.IndexFunc(list, func(s Session) bool { return s.ID == "20250301T100000" })]
	c, err := convertAll(src.Stream(s, ForResume))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range c.Entries {
		v, _ := jsonx.Parse(e)
		if v.Get("type").Is("model_change") {
			model, _ := v.Get("model").Text()
			got = append(got, "model "+model)
			continue
		}
		m := v.Get("message")
		role, _ := m.Get("role").Text()
		text, _ := m.Get("content").Items()[0].Get("text").Text()
		in, _ := m.Get("usage").Get("input").Float()
		cost, _ := m.Get("usage").Get("cost").Get("total").Float()
		got = append(got, fmt.Sprintf("%s %.20q %v %v", role, text, in, cost))
	}
	want := []string{`model anthropic/claude-3-7-sonnet-20250219`, `user "add a --verbose flag" 0 0`,
		`assistant "I will add the flag." 2400 0.02`, `user "/model gpt-4o" 0 0`, `model aider/gpt-4o`,
		`user "why?" 0 0`, `assistant "Because you asked." 3000 0`}
	if !slices.Equal(got, want) {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
}

// TestAiderUsage: one call per "Tokens:" line, its cost the line's; on
// the real chats the costs of a run add up to the last "$… session." of
// the run, as Aider counted them.
func TestAiderUsage(t *testing.T) {
	_, projects := aiderProjects(t)
	src := aiderSourceOf(projects)
	list, _ := src.List(false)
	session := regexp.MustCompile(`\$([\d.]+) session\.`)
	lines := 0
	for _, s := range list {
		u, err := src.Usage(s)
		if err != nil {
			t.Fatal(err)
		}
		chat, r, _ := aiderRunOf(s.Path)
		b, _ := os.ReadFile(chat)
		run := string(b[r.offset:r.end])
		if n := strings.Count(run, "\n> Tokens: "); n != len(u.Calls) {
			t.Errorf("%s: %d calls, %d Tokens lines", s.ID, len(u.Calls), n)
		}
		lines += len(u.Calls)
		sum := 0.0
		for _, c := range u.Calls {
			sum += c.Cost
		}
		if m := session.FindAllStringSubmatch(run, -1); m != nil {
			last, _ := strconv.ParseFloat(m[len(m)-1][1], 64)
			// Each message's cost is rounded as the line shows it.
			if math.Abs(sum-last) > 0.005*float64(len(u.Calls))+1e-9 {
				t.Errorf("%s: costs add up to %v, the chat's session cost is %v", s.ID, sum, last)
			}
		}
	}
	if lines == 0 {
		t.Error("no calls")
	}
}

// FuzzAider: any chat history lists, converts and costs without a panic
// or an entry that is not JSON.
func FuzzAider(f *testing.F) {
	if b, err := os.ReadFile("testdata/aider/hand-aider/" + aiderChatMD); err == nil {
		f.Add(b)
	}
	f.Add([]byte("# aider chat started at 2025-01-01 00:00:00\n> Tokens: 1.5M sent, 1e9 received. Cost: $-1 message\n####\n>"))
	dir := f.TempDir()
	chat := filepath.Join(dir, aiderChatMD)
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(chat, data, 0o600); err != nil {
			t.Fatal(err)
		}
		src := aiderSourceOf([]string{dir})
		list, _ := src.List(false)
		for _, s := range list {
			checkConversion(t, StreamAider(s.Path, ForReading, func(*Converted) error { return nil }, validEntry(t)))
			src.Usage(s)
		}
	})
}

// aiderMessages counts the messages a conversion of an Aider run must
// give, from its lines alone: each block of "#### " lines, and each
// block of other lines (a reply) that aider's output does not break
// (its "Tokens:" and model lines do; the rest of it a reply goes on
// past, as "Applied edit to …").
func aiderMessages(t *testing.T, s Session) int {
	t.Helper()
	chat, r, err := aiderRunOf(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(chat)
	n, last := 0, byte(0)
	for i, l := range strings.Split(string(b[r.offset:r.end]), "\n") {
		l = strings.TrimRight(l, "\r")
		out := strings.TrimSpace(strings.TrimPrefix(l, ">"))
		switch {
		case i == 0, strings.TrimSpace(l) == "" && last != 'a', strings.HasPrefix(l, "Cost: $"):
		case strings.HasPrefix(l, "####"):
			if last != 'u' {
				n++
			}
			last = 'u'
		case strings.HasPrefix(l, ">"):
			if strings.HasPrefix(out, "Tokens: ") || strings.HasPrefix(out, "Model") || strings.HasPrefix(out, "Main model: ") {
				last = '>'
			}
		case strings.TrimSpace(l) == "":
		default:
			if last != 'a' {
				n++
			}
			last = 'a'
		}
	}
	return n
}
