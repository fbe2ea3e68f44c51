package main

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// TestParseOptions parses command lines into each command's options
// without running the command: flags before and after arguments, the
// store flags, and a wrong flag as a usage error.
func TestParseOptions(t *testing.T) {
	e := newEnv(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, false, 80)
	tests := []struct {
		c    *command
		args []string
		want options
	}{
		{listCommand, []string{"--all", "--limit", "5", "--json"},
			&listOptions{all: true, limit: 5, asJSON: true}},
		{showCommand, []string{"abc", "--tree", "--full"}, &showOptions{tree: true, full: true, around: 3, args: []string{"abc"}}},
		{showCommand, []string{"abc", "--at", "e1", "--around", "5"}, &showOptions{at: "e1", around: 5, args: []string{"abc"}}},
		{exportCommand, []string{"--format", "html", "-o", "x.html", "s1"},
			&exportOptions{format: "html", out: "x.html", args: []string{"s1"}}},
		{forkCommand, []string{"--at", "1a2b3c4d", "--title", "T", "s1"}, &forkOptions{at: "1a2b3c4d", title: "T", args: []string{"s1"}}},
		{verifyCommand, []string{"--repair", "a", "b"}, &verifyOptions{repair: true, args: []string{"a", "b"}}},
		{titleCommand, []string{"f.jsonl", "New title", "--auto"}, &titleOptions{auto: true, args: []string{"f.jsonl", "New title"}}},
		{contextCommand, []string{"--json", "f.jsonl"}, &contextOptions{asJSON: true, args: []string{"f.jsonl"}}},
		{blobsCommand, []string{"--delete", "--omp"}, &blobsOptions{del: true}},
	}
	for _, tt := range tests {
		o, err := parseOptions(e, tt.c, tt.args)
		if err != nil {
			t.Errorf("%s %q: %v", tt.c.name, tt.args, err)
			continue
		}
		// The store, source and database flags are pointers, checked apart below:
		// compare the rest.
		for _, name := range []string{"store", "sources", "db"} {
			if f := reflect.ValueOf(o).Elem().FieldByName(name); f.IsValid() {
				reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().SetZero()
			}
		}
		if !reflect.DeepEqual(o, tt.want) {
			t.Errorf("%s %q:\n got %+v\nwant %+v", tt.c.name, tt.args, o, tt.want)
		}
	}
	if o, _ := parseOptions(e, blobsCommand, []string{"--omp"}); !o.(*blobsOptions).store.omp {
		t.Error("--omp not parsed into the store flags")
	}
	if o, _ := parseOptions(e, syncCommand, []string{"--db", "postgres://h/d", "--omp-table", "--pull", "s1"}); o == nil ||
		o.(*syncOptions).db.url != "postgres://h/d" || !o.(*syncOptions).db.ompTable || !o.(*syncOptions).pull {
		t.Error("sync's flags not parsed")
	}
	var ue usageError
	if _, err := parseOptions(e, listCommand, []string{"--bogus"}); !errors.As(err, &ue) {
		t.Errorf("unknown flag: err = %v, want a usage error", err)
	}
	for _, g := range commandGroups {
		for _, c := range g.commands {
			if lookup(c.name) != c || c.options == nil {
				t.Errorf("command %q is not in the table as itself", c.name)
			}
		}
	}
}
