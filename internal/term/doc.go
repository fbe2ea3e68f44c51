// Package term is how xdev's commands print for a person, and what they
// may touch of the world to do it.
//
// # The world
//
// IOStreams holds a command's standard streams, whether each is a
// terminal (IsTerminal: a device that answers a terminal's ioctl, not
// /dev/null; XDEV_FORCE_TTY forces the answer) and how wide ($COLUMNS,
// else the terminal, else 100), the clock, the working directory and
// $NO_COLOR. System gives the process's; New another, for a test.
//
// # Escaping
//
// Session content is untrusted. Everything printed for a person goes
// through an EscapeWriter, which shows as escapes what a terminal would
// obey: C0 controls but newline and tab, DEL, C1 controls, bidirectional
// overrides and marks, bytes that are not UTF-8, lone surrogates. Escape
// does the same for one value on one line, tab and newline spelled out.
// Data (JSON, entries as stored) goes to RawOut, byte for byte.
//
// # Tables and widths
//
// A Table prints aligned columns under a header on a terminal, cutting
// the flexible columns to the width, measured in display columns
// (DisplayWidth: two for a wide character, one for a grapheme cluster);
// for a script, tab-separated lines and no header; nothing for no rows.
// Fit and Pad cut and pad by the same measure.
//
// # For a person
//
// Ago ("3 hours ago"), Plural, Size ("4.7 KB"), OneLine, Truncate and
// HomePath ("~/src") are how values read; Progress (done of total) and
// Meter (a fraction) report long work on stderr, only when stderr is a
// terminal.
package term
