package session

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMarshalTitleSlot(t *testing.T) {
	const ts = "2026-11-29T20:34:52.605Z" // 24 characters, as omp writes
	tests := []struct {
		name      string
		title     string
		source    TitleSource
		keepRunes int    // runes of the title that fit
		prefix    string // start of the line
	}{
		{"empty, no source", "", TitleNone, 0, `{"type":"title","v":1,"title":"","updatedAt":"` + ts + `","pad":"`},
		{"auto", "Fix the build", TitleAuto, 13, `{"type":"title","v":1,"title":"Fix the build","source":"auto","updatedAt":`},
		{"manual is user on disk", "Mine", TitleManual, 4, `{"type":"title","v":1,"title":"Mine","source":"user","updatedAt":`},
		{"subagent is never written", "Scout", TitleSubagent, 5, `{"type":"title","v":1,"title":"Scout","updatedAt":`},
		// The figures omp's serializeTitleSlot gives (omp-format.md §3.4).
		{"ascii with source", strings.Repeat("a", 300), TitleAuto, 158, ""},
		{"ascii without source", strings.Repeat("a", 300), TitleNone, 174, ""},
		{"cjk", strings.Repeat("漢", 100), TitleAuto, 52, ""},
		{"emoji", strings.Repeat("😀", 100), TitleAuto, 39, ""},
		{"escapes", strings.Repeat(`"\`, 100), TitleAuto, 79, ""},
		{"no html escaping", "<a> & <b>", TitleAuto, 9, `{"type":"title","v":1,"title":"<a> & <b>"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, err := MarshalTitleSlot(tt.title, tt.source, ts)
			if err != nil {
				t.Fatal(err)
			}
			if len(line) != TitleSlotWidth || line[len(line)-1] != '\n' {
				t.Fatalf("slot is %d bytes (last %q), want %d ending in newline", len(line), line[len(line)-1], TitleSlotWidth)
			}
			if !strings.HasPrefix(string(line), tt.prefix) {
				t.Errorf("line = %s, want prefix %s", line, tt.prefix)
			}
			if !strings.HasSuffix(strings.TrimSuffix(string(line), "\n"), ` "}`) && !strings.HasSuffix(string(line), `""}`+"\n") {
				t.Errorf("pad is not last: %s", line)
			}
			slot, ok := ParseTitleSlot(line)
			if !ok || !slot.OmpAccepts {
				t.Fatalf("own slot not accepted: ok=%v %+v", ok, slot)
			}
			if n := utf8.RuneCountInString(slot.Title); n != tt.keepRunes {
				t.Errorf("kept %d runes, want %d", n, tt.keepRunes)
			}
			want := tt.source
			if want == TitleSubagent {
				want = TitleNone
			}
			if slot.Source != want || slot.UpdatedAt != ts {
				t.Errorf("parsed %+v", slot)
			}
		})
	}
}

func TestParseTitleSlot(t *testing.T) {
	tests := []struct {
		line       string
		ok         bool
		source     TitleSource
		ompAccepts bool
	}{
		{`{"type":"title","v":1,"title":"x","source":"auto","updatedAt":"t","pad":" "}`, true, TitleAuto, true},
		{`{"type":"title","v":1,"title":"x","source":"user","updatedAt":"t","pad":""}`, true, TitleManual, true},
		{`{"type":"title","v":1,"title":"x","source":"manual","updatedAt":"t","pad":""}`, true, TitleManual, false},
		{`{"type":"title","v":1,"title":"x","source":"subagent","updatedAt":"t","pad":""}`, true, TitleSubagent, false},
		{`{"type":"title","v":1,"title":"x","updatedAt":"t"}`, true, TitleNone, false}, // no pad
		{`{"type":"title","v":2,"title":"x","updatedAt":"t","pad":""}`, true, TitleNone, false},
		{`{"type":"title","v":1,"title":"x","source":"robot","updatedAt":"t","pad":""}`, true, TitleNone, false},
		{`{"type":"title","v":1,"title":"x","source":null,"updatedAt":"t","pad":""}`, true, TitleNone, false},
		{`{"type":"title","title":"x"}`, true, TitleNone, false},
		{`{"type":"session","version":3,"id":"x"}`, false, 0, false},
		{`{"type":"title"`, false, 0, false},
		{``, false, 0, false},
		{`null`, false, 0, false},
		{"{\"type\":\"title\",\"v\":1,\"title\":\"x\",\"updatedAt\":\"t\",\"pad\":\"\"}\r\n", true, TitleNone, true},
	}
	for _, tt := range tests {
		slot, ok := ParseTitleSlot([]byte(tt.line))
		if ok != tt.ok || slot.Source != tt.source || slot.OmpAccepts != tt.ompAccepts {
			t.Errorf("ParseTitleSlot(%s) = %+v, %v; want source %v ok %v ompAccepts %v",
				tt.line, slot, ok, tt.source, tt.ok, tt.ompAccepts)
		}
	}
}

func TestCleanTitle(t *testing.T) {
	for in, want := range map[string]string{
		"  a\tb\n\nc  ": "a b c",
		"x\x00y":        "x y",
		"":              "",
		"\u0085ok":      "ok",
		"bad\xffutf8":   "bad\uFFFDutf8",
	} {
		if got := CleanTitle(in); got != want {
			t.Errorf("CleanTitle(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEncodeEntryKeyOrder(t *testing.T) {
	tests := []struct {
		e    Entry
		want string
	}{
		{Entry{Type: TypeModelChange, ID: "0000000a", Timestamp: "2026-01-01T00:00:00.000Z", Body: &ModelChange{Model: "anthropic/x"}},
			`{"type":"model_change","id":"0000000a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","model":"anthropic/x","resolvedModelIsFallback":false}`},
		{Entry{Type: TypeCustom, ID: "0000000b", ParentID: "0000000a", Timestamp: "2026-01-01T00:00:00.000Z", Body: &Custom{CustomType: "branch", Data: []byte(`{"to":"0000000a"}`)}},
			`{"type":"custom","customType":"branch","data":{"to":"0000000a"},"id":"0000000b","parentId":"0000000a","timestamp":"2026-01-01T00:00:00.000Z"}`},
		{Entry{Type: TypeResetBoundary, ID: "0000000c", ParentID: "0000000b", Timestamp: "2026-01-01T00:00:00.000Z", Body: &ResetBoundary{}},
			`{"type":"reset_boundary","id":"0000000c","parentId":"0000000b","timestamp":"2026-01-01T00:00:00.000Z"}`},
		{Entry{Type: TypeLabel, ID: "0000000d", ParentID: "0000000c", Timestamp: "2026-01-01T00:00:00.000Z", Body: &Label{TargetID: "0000000a", Label: "<ok> & \u2028"}},
			"{\"type\":\"label\",\"id\":\"0000000d\",\"parentId\":\"0000000c\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"targetId\":\"0000000a\",\"label\":\"<ok> & \u2028\"}"},
	}
	for _, tt := range tests {
		got, err := encodeEntry(&tt.e)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("encodeEntry(%s):\n got %s\nwant %s", tt.e.Type, got, tt.want)
		}
	}
}

func TestHeaderKeepsUnknownFields(t *testing.T) {
	line := `{"type":"session","version":3,"id":"abc","timestamp":"t","cwd":"/x","providerPromptCacheKey":"k","future":{"a":1}}`
	h, err := parseHeader([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if string(h.Raw()) != line {
		t.Errorf("raw = %s", h.Raw())
	}
	for _, bad := range []string{`{"type":"session","version":3}`, `{"type":"message","id":"x"}`, `[]`, `null`} {
		if _, err := parseHeader([]byte(bad)); err == nil {
			t.Errorf("parseHeader(%s) accepted", bad)
		}
	}
}
