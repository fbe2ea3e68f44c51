// Package pick is xdev's session picker: one list of every harness's
// sessions, filtered as a person types, a preview of the selected one's
// last exchanges, and the command that resumes it where it was made.
//
// # The list
//
// The rows are the catalog's (each place's List, subagents' too). A
// listing of 25,000 sessions takes a second, so the first frame shows
// the rows the last one gave (Options.Rows, a screen's worth of a
// snapshot, catalog.OpenSnapshot; Options.MoreRows the rest, after the
// first frame), and the places are listed again behind it, one at a
// time: each place's rows take its harness's place as they come
// (merge), and once every place is listed Options.Listed keeps them for
// the next start. They are ordered the current project's first (the
// directory the picker runs in, one under it, or one it is under but the
// home directory), then newest first; a filter keeps that order within
// each tier of its matches. An item keeps of a row what is shown,
// filtered and resumed, no more.
//
// # Typing
//
// What is typed is a query (Query). Plain words filter the rows at once,
// in memory, never touching a file: each word must be in the row's title,
// first message, project directory, id or harness, as written
// (case-insensitively), or else, for a word of three letters or more, as
// a subsequence of its letters close together (a fuzzy match, ranked
// after the exact ones). A query that begins with "/" or
// holds a quoted phrase is a full-text search of the sessions' index
// (catalog.Indexes.Sessions): it runs in the background, after typing
// pauses, and its sessions replace the list when it answers. Words that
// match no row are searched in the index too, so that a word from the
// middle of a conversation finds it.
//
// # Keys
//
// Enter chooses the selected session (Choice), Esc clears the query or
// quits, Ctrl-C quits; ↑ ↓ PgUp PgDn Home End move; Tab and Shift-Tab
// cycle the harness shown, Ctrl-P keeps the selected session's project
// only (again: every project), Ctrl-S shows subagents' transcripts too;
// Ctrl-O opens the session in a pager, Ctrl-F forks it into the data
// dir, Ctrl-E exports it to a Markdown file, Ctrl-Y copies its path (an
// OSC 52 clipboard sequence). Keys and what they do are in keys.go.
//
// # The preview
//
// The selected session's last messages, as a resume sends them
// (catalog.Readable.ReadContext, whose windowed load reads only the
// lines it shows once a long file has a checkpoint), read in the
// background: the list moves while a preview loads, and a preview that
// arrives for a row no longer selected is kept for when it is.
//
// # Safety
//
// Every text shown is a session's, so untrusted: titles, messages and
// paths are escaped (term.Escape: escape sequences, controls and
// bidirectional overrides show as escapes, never act) and cut by display
// columns (term.Fit: wide and combining characters keep the layout), and
// messages are masked (secrets.Mask) before they are shown.
package pick
