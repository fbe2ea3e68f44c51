package main

import (
	"bytes"

	"github.com/xdev/xdev/internal/secrets"
)

// Every text of a transcript a command prints for a person goes through
// shown, and every JSON text through shownJSON: each secret in it (a key,
// a token, a password) is masked as [REDACTED kind …fp] unless the
// person asked with --reveal (show, export). The plumbing commands
// (context --json, show --raw, new, append) print the bytes as they are:
// they are the contract with omp.

// shown is s with its secrets masked, unless reveal.
func shown(s string, reveal bool) string {
	if reveal {
		return s
	}
	return secrets.Mask(s)
}

// shownPrefix is shown of what a summary of n bytes keeps of s: masked
// on a few KiB past them, so that a secret that starts inside is seen
// whole, not the whole of a long text.
func shownPrefix(s string, n int, reveal bool) string {
	if reveal {
		return s
	}
	if len(s) > n+4<<10 {
		s = s[:n+4<<10]
	}
	return secrets.Mask(s)
}

// shownJSON is the JSON text raw with the secrets of its strings masked,
// unless reveal.
func shownJSON(raw []byte, reveal bool) []byte {
	if reveal {
		return raw
	}
	m, _ := secrets.Default().MaskJSON(raw)
	return m
}

// writeShownJSON is writeJSON with the secrets of its strings masked,
// unless reveal: for outputs of a bounded size (a window of entries).
func writeShownJSON(e *env, v any, reveal bool) error {
	if reveal {
		return writeJSON(e, v)
	}
	var b bytes.Buffer
	saved := e.RawOut
	e.RawOut = &b
	err := writeJSON(e, v)
	e.RawOut = saved
	if err != nil {
		return err
	}
	_, err = e.RawOut.Write(shownJSON(b.Bytes(), false))
	return err
}

// maskedLine is a line of output with its secrets masked: for the
// commands whose output names sessions (list, search, secrets), whose
// texts the catalog has masked already but whose paths and directories
// it keeps (a file is opened by its path), and which show them.
func maskedLine(line []byte) []byte {
	if m := secrets.Mask(string(line)); m != string(line) {
		return []byte(m)
	}
	return line
}
