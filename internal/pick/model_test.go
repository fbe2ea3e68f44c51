package pick

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/xdev/xdev/internal/catalog"
)

func TestKeyNames(t *testing.T) {
	for _, k := range []string{keyProject, keySubagents, keyPager, keyFork, keyExport, keyCopy, keyEraseWord, keyEraseAll,
		keyChoose, keyBack, keyUp, keyDown, keyPageUp, keyPageDown, keyFirst, keyLast, keyHarness, keyHarnessBk, keyErase} {
		if got := keyPress(k).String(); got != k {
			t.Errorf("the key %q is called %q", k, got)
		}
	}
}

func TestFilter(t *testing.T) {
	rs := rows(40, titled)
	rs[7].Title = "Refactor the parser"
	rs[21].Title = "Fix the reader"
	rs[30].Title = "Rename parser files"
	rs[33].FirstMessage = "the parser is slow"
	rs[34].ID = "7f3e9c21-5555-4aaa-8bbb-cccccccccccc"
	for _, tc := range []struct {
		cwd, query string
		want       []string // the first titles shown
		n          int      // how many are shown; -1: any
	}{
		{"", "", []string{"Session 0", "Session 1", "Session 2"}, 40},
		// The current project's sessions first, then newest first.
		{"/work/project-2", "", []string{"Session 2", "Session 6", "Session 10"}, 40},
		{"/work/project-2/sub", "", []string{"Session 2", "Session 6"}, 40}, // a directory of the project
		{"/work", "", []string{"Session 0", "Session 1"}, 40},               // every project is under it: newest first
		{"", "parser", []string{"Refactor the parser", "Rename parser files", "Session 33"}, 3},
		{"/work/project-2", "parser", []string{"Rename parser files", "Refactor the parser", "Session 33"}, 3},
		{"", "PARSER refactor", []string{"Refactor the parser"}, 1},
		{"", "rfctr", []string{"Refactor the parser"}, 1}, // fuzzy
		{"", "reader", []string{"Fix the reader"}, 1},
		{"", "prsr", []string{"Refactor the parser", "Rename parser files", "Session 33"}, 3}, // fuzzy all; newest first
		{"", "project-3", []string{"Session 3", "Session 7"}, 10},                             // by directory; 7 is "Refactor…"? no: titles say
		{"", "7F3E9C21", []string{"Session 34"}, 1},                                           // by id
		{"", "gemini", []string{"Session 3", "Session 8"}, 8},                                 // by harness
		{"", "zz", nil, 0}, // two letters are never fuzzy
		{"", "qqqq", nil, 0},
	} {
		t.Run(tc.cwd+"|"+tc.query, func(t *testing.T) {
			d := newDriver(t, Options{Source: staticSource(rs, nil), Cwd: tc.cwd, Query: tc.query}, 80, 24)
			got := d.titles()
			if tc.query == "project-3" {
				// the titles of rows 3, 7, 11…: 7 is retitled
				tc.want = []string{"Session 3", "Refactor the parser"}
			}
			if !equal(first(got, len(tc.want)), tc.want) || tc.n >= 0 && len(got) != tc.n {
				t.Errorf("got %d: %q, want %d beginning %q", len(got), first(got, 5), tc.n, tc.want)
			}
		})
	}
}

func TestKeys(t *testing.T) {
	rs := rows(60, titled)
	rs[5].Subagent = true
	rs[5].Title = "A subagent"
	for _, tc := range []struct {
		name     string
		keys     []string
		selected string
		shown    int
		chosen   bool
	}{
		{"starts at the newest", nil, "Session 0", 59, false},
		{"down", []string{"down", "down"}, "Session 2", 59, false},
		{"down skips no row, up stops at the top", []string{"down", "up", "up", "up"}, "Session 0", 59, false},
		{"aliases", []string{"ctrl+n", "ctrl+j", "ctrl+k"}, "Session 1", 59, false},
		{"a page is the list's height", []string{"pgdown"}, "Session 12", 59, false}, // 80×24: 11 rows (5 is a subagent's)
		{"end", []string{"end"}, "Session 59", 59, false},
		{"home", []string{"end", "home"}, "Session 0", 59, false},
		{"tab: the next harness", []string{"tab"}, "Session 1", 12, false},             // claude's, in name order
		{"shift+tab: the last harness", []string{"shift+tab"}, "Session 0", 11, false}, // xdev's, but the subagent
		{"tab all the way round", []string{"tab", "tab", "tab", "tab", "tab", "tab"}, "Session 0", 59, false},
		{"ctrl+p: the selected session's project", []string{"down", "ctrl+p"}, "Session 1", 14, false},
		{"ctrl+p again: every project", []string{"down", "ctrl+p", "ctrl+p"}, "Session 1", 59, false},
		{"ctrl+s: subagents too", []string{"ctrl+s"}, "Session 0", 60, false},
		{"typing selects the best match", []string{"down", "down", "S", "e", "s", "s", "i", "o", "n", " ", "4", "2"}, "Session 42", 1, false},
		{"backspace", []string{"S", "e", "s", "s", "i", "o", "n", " ", "4", "2", "backspace", "backspace", "4", "3"}, "Session 43", 1, false},
		{"ctrl+w erases a word", []string{"S", "e", "s", " ", "4", "2", "ctrl+w"}, "Session 0", 59, false},
		{"ctrl+u erases all", []string{"4", "2", "ctrl+u"}, "Session 0", 59, false},
		{"esc clears the query", []string{"4", "2", "esc"}, "Session 0", 59, false},
		{"enter chooses", []string{"down", "enter"}, "Session 1", 59, true},
		{"a switch keeps the selection", []string{"down", "down", "ctrl+s"}, "Session 2", 60, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDriver(t, Options{Source: staticSource(rs, nil)}, 80, 24)
			d.keys(tc.keys...)
			if got := d.selected(); got != tc.selected {
				t.Errorf("selected %q, want %q", got, tc.selected)
			}
			if got := len(d.m.view); got != tc.shown {
				t.Errorf("%d shown, want %d", got, tc.shown)
			}
			row, chosen := d.m.Chosen()
			if chosen != tc.chosen || chosen && row.Title != tc.selected || chosen != d.quit {
				t.Errorf("chosen %v (%q), quit %v", chosen, row.Title, d.quit)
			}
		})
	}
}

func TestEscOnNothingQuits(t *testing.T) {
	for _, k := range []string{"esc", "ctrl+c"} {
		d := newDriver(t, Options{Source: staticSource(rows(3, titled), nil)}, 80, 24)
		d.keys(k)
		if _, ok := d.m.Chosen(); ok || !d.quit {
			t.Errorf("%s: chose %v, quit %v", k, ok, d.quit)
		}
	}
}

func TestSelectionStaysOnScreen(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}, {40, 6}, {40, 3}} {
		d := newDriver(t, Options{Source: staticSource(rows(200, titled), nil)}, size[0], size[1])
		for k, key := range strings.Fields(strings.Repeat("down ", 70) + "pgdown pgdown up pgup end home pgdown " + strings.Repeat("down ", 9)) {
			d.keys(key)
			h := d.m.listHeight()
			if d.m.cursor < d.m.top || d.m.cursor >= d.m.top+h || d.m.top < 0 {
				t.Fatalf("%v, key %d (%s): cursor %d, top %d, height %d", size, k, key, d.m.cursor, d.m.top, h)
			}
			if !strings.Contains(d.m.Frame(), fmt.Sprintf("Session %d ", d.m.cursor)) {
				t.Fatalf("%v, key %d: the selected row (%d) is not drawn", size, k, d.m.cursor)
			}
		}
	}
}

func TestPreview(t *testing.T) {
	d := newDriver(t, Options{Source: staticSource(rows(10, titled), nil)}, 160, 48)
	frame := d.m.Frame()
	for _, want := range []string{"question about Session 0", "answer in 000.jsonl", "resume: cd /work/project-0 && omp --resume /sessions/xdev/000.jsonl"} {
		if !strings.Contains(frame, want) {
			t.Errorf("the preview lacks %q:\n%s", want, frame)
		}
	}
	d.keys("down")
	if frame := d.m.Frame(); !strings.Contains(frame, "answer in 001.jsonl") || !strings.Contains(frame, "resume: cd /work/project-1 && claude --resume 00000002") {
		t.Errorf("the preview does not follow the selection:\n%s", frame)
	}
	if len(d.m.previews) != 2 {
		t.Errorf("%d previews kept, want 2", len(d.m.previews))
	}
	for range previewsKept + 5 {
		d.keys("down")
		d.keys("end")
		d.keys("home")
	}
	if len(d.m.previews) > previewsKept {
		t.Errorf("%d previews kept, bound %d", len(d.m.previews), previewsKept)
	}
}

// A preview that arrives after the selection moved on is kept for its
// row, and the selected row's is read next; one is read at a time.
func TestLatePreview(t *testing.T) {
	rs := rows(5, titled)
	m := New(Options{Source: staticSource(nil, nil), Now: nowFunc})
	defer m.Close()
	m.opts.Source.Preview = staticSource(rs, nil).Preview
	m.Add("", rs)
	first := m.wantPreview() // none: Add asked for row 0's already
	if first != nil || m.loading != rs[0].Path {
		t.Fatalf("loading %q", m.loading)
	}
	m = New(Options{Source: staticSource(rs, nil), Now: nowFunc})
	defer m.Close()
	read0 := m.Add("", rs)
	_, cmd := m.Update(keyPress("down"))
	if cmd != nil {
		t.Errorf("a second preview is read while the first is")
	}
	var msgs []any
	for _, c := range flatten(read0) {
		msgs = append(msgs, c())
	}
	for _, msg := range msgs {
		if p, ok := msg.(previewMsg); ok {
			_, cmd = m.Update(p)
		}
	}
	if _, ok := m.previews[rs[0].Path]; !ok {
		t.Errorf("row 0's preview was dropped")
	}
	if cmd == nil || m.loading != rs[1].Path {
		t.Errorf("the selected row's preview is not read next (loading %q)", m.loading)
	}
}

// flatten are the commands of cmd, a batch's each.
func flatten(cmd tea.Cmd) []tea.Cmd {
	if cmd == nil {
		return nil
	}
	if b, ok := cmd().(tea.BatchMsg); ok {
		var out []tea.Cmd
		for _, c := range b {
			out = append(out, flatten(c)...)
		}
		return out
	}
	return []tea.Cmd{cmd}
}

func TestSearch(t *testing.T) {
	rs := rows(20, titled)
	var asked []string
	found := func(text string) []string {
		asked = append(asked, text)
		if text == "window lock" || text == "lockfile" {
			return []string{rs[9].Path, "/not/listed.jsonl", rs[3].Path}
		}
		return nil
	}
	for _, tc := range []struct {
		name   string
		keys   []string
		titles []string
		asked  []string
		status string
	}{
		{"a slash searches the text", []string{"/", "w", "i", "n", "d", "o", "w", " ", "l", "o", "c", "k"},
			[]string{"Session 9", "Session 3"}, []string{"window lock"}, ""},
		{"words no row holds are searched", []string{"l", "o", "c", "k", "f", "i", "l", "e"},
			[]string{"Session 9", "Session 3"}, []string{"lockfile"}, "no title or first message holds it"},
		{"words a row holds are not", []string{"S", "e", "s", "s", "i", "o", "n", " ", "1", "9"}, []string{"Session 19"}, nil, ""},
		{"a search that finds nothing", []string{"/", "q", "q", "q"}, nil, []string{"qqq"}, ""},
		{"esc leaves the search", []string{"/", "q", "q", "q", "esc"}, first(titlesOf(rs), 3), nil, ""}, // before it ran: typing had not paused
		{"a switch filters what it found", []string{"/", "w", "i", "n", "d", "o", "w", " ", "l", "o", "c", "k", "tab", "tab", "tab"},
			[]string{"Session 3"}, []string{"window lock"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked = nil
			d := newDriver(t, Options{Source: staticSource(rs, found)}, 80, 24)
			d.keys(tc.keys...)
			if got := d.titles(); !equal(first(got, len(tc.titles)), tc.titles) || len(tc.titles) < 3 && len(got) != len(tc.titles) {
				t.Errorf("shown %q, want %q", first(got, 5), tc.titles)
			}
			if !equal(asked, tc.asked) {
				t.Errorf("searched %q, want %q", asked, tc.asked)
			}
			if !strings.Contains(d.m.Frame(), tc.status) {
				t.Errorf("the status does not say %q:\n%s", tc.status, d.m.Frame())
			}
		})
	}
}

func titlesOf(rs []catalog.Row) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Title)
	}
	return out
}

func TestFirst(t *testing.T) {
	rs := rows(20, titled)
	rs[13].FirstMessage = "the windowed reader"
	found := func(text string) []string {
		if text == "lockfile" {
			return []string{rs[17].Path}
		}
		return nil
	}
	for _, tc := range []struct {
		cwd, query string
		want       string
		ok         bool
	}{
		{"", "", "Session 0", true},
		{"/work/project-3", "", "Session 3", true},
		{"", "windowed", "Session 13", true},
		{"", "lockfile", "Session 17", true},
		{"", "/lockfile", "Session 17", true},
		{"", "nothing holds this", "", false},
	} {
		row, ok, err := First(Options{Source: staticSource(rs, found), Cwd: tc.cwd, Query: tc.query})
		if err != nil || ok != tc.ok || row.Title != tc.want {
			t.Errorf("First(%q in %q) = %q %v %v, want %q", tc.query, tc.cwd, row.Title, ok, err, tc.want)
		}
	}
}

// merge is the list's order, every time: rows of harnesses listed again
// and again, in any order, against a sort of what the list should hold.
func TestMergeIsSorted(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	hs := []catalog.Harness{"a", "b", "c", ""}
	var items []item
	want := map[catalog.Harness][]catalog.Row{}
	for round := range 300 {
		h := hs[r.IntN(len(hs))]
		rows := make([]catalog.Row, r.IntN(30))
		for k := range rows {
			hh := h
			if h == "" {
				hh = hs[r.IntN(3)]
			}
			rows[k] = catalog.Row{Harness: hh, Path: fmt.Sprintf("/%s/%d-%d", hh, round, k), Cwd: []string{"/p", "/q"}[r.IntN(2)],
				Modified: now.Add(time.Duration(r.IntN(50)) * time.Hour)}
		}
		items = merge(items, h, rows, "/p")
		if h == "" {
			for _, row := range rows {
				want[row.Harness] = append(want[row.Harness], row)
			}
		} else {
			want[h] = rows
		}
		var all []item
		for _, h := range hs[:3] {
			for k := range want[h] {
				all = append(all, newItem(&want[h][k], "/p"))
			}
		}
		slices.SortFunc(all, func(a, b item) int { return listOrder(&a, &b) })
		if len(all) != len(items) {
			t.Fatalf("round %d: %d items, want %d", round, len(items), len(all))
		}
		for k := range all {
			if all[k].path != items[k].path {
				t.Fatalf("round %d: item %d is %s, want %s", round, k, items[k].path, all[k].path)
			}
		}
	}
}
