package sessionname

import "testing"

func TestOf(t *testing.T) {
	const id = "01a11069-d248-7409-bf4a-81e3c89f69b9"
	const file = "2026-10-06T08-52-42-000Z_" + id + ".jsonl"
	for _, c := range []struct {
		arg, id, file string
		want          Kind
	}{
		{id, id, file, Exact},
		{"01A11069-D248-7409-BF4A-81E3C89F69B9", id, file, Exact},
		{"01a1", id, file, Prefix},
		{"01A1", id, file, Prefix},
		{file, id, file, Exact},
		{file[:len(file)-6], id, file, Exact},  // without .jsonl
		{file[:len(file)-1], id, file, Prefix}, // "NAME.json"
		{id + ".jsonl", id, file, Exact},       // the id part, with .jsonl
		{"2026-10-06", id, file, Prefix},       // the name's start
		{"01-all", "x", "01-all-entry-types.jsonl", Prefix},
		{"01-all-entry-types", "x", "01-all-entry-types.jsonl", Exact},
		{"s.jsonl.zst", "", "s.jsonl.zst", Exact},
		{"s", "", "s.jsonl.zst", Exact},
		{"d248", id, file, None}, // not a prefix of anything
		{"", id, file, None},
		{"x", "", "", None},
	} {
		if got := Of(c.arg, c.id, c.file); got != c.want {
			t.Errorf("Of(%q, %q, %q) = %d, want %d", c.arg, c.id, c.file, got, c.want)
		}
	}
}

func TestPick(t *testing.T) {
	type s struct{ id, file string }
	items := []s{{"abc1", "x_abc1.jsonl"}, {"abc12", "x_abc12.jsonl"}, {"abd", "x_abd.jsonl"}, {"dup", "a.jsonl"}, {"dup", "b.jsonl"}}
	name := func(x *s) (string, string) { return x.id, x.file }
	for _, c := range []struct {
		arg       string
		one       string // the id picked
		ambiguous int
	}{
		{"abc1", "abc1", 0}, // exact beats the prefix of abc12
		{"ABC12", "abc12", 0},
		{"abc", "", 2},
		{"abd", "abd", 0},
		{"ab", "", 3},
		{"dup", "", 2}, // two exact
		{"zz", "", 0},
	} {
		one, several := Pick(c.arg, items, name)
		got := ""
		if one != nil {
			got = one.id
		}
		if got != c.one || len(several) != c.ambiguous {
			t.Errorf("Pick(%q) = %q, %d ambiguous; want %q, %d", c.arg, got, len(several), c.one, c.ambiguous)
		}
	}
}

func FuzzOf(f *testing.F) {
	f.Add("01a1", "01a11069", "2026_01a11069.jsonl")
	f.Fuzz(func(t *testing.T, arg, id, file string) {
		k := Of(arg, id, file)
		if k < None || k > Exact {
			t.Fatalf("kind %d", k)
		}
		if k == Exact && Of(arg, id, file) != Exact {
			t.Fatal("not the same twice")
		}
	})
}
