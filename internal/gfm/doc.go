// Package gfm is GitHub's Markdown for goldmark, as xdev renders it: the
// extensions of goldmark's extension package that GitHub's dialect adds
// (tables, autolinks, strikethrough, task lists), copied from it
// (goldmark v1.8.7, MIT; LICENSE beside) with one change: their regular
// expressions are compiled when a text is first rendered, not when a
// process starts.
//
// goldmark/extension compiles its autolinks' two expressions (a URL's
// host of up to 256 characters, each a state) in its package
// initialization, which every process that links it runs: 2.5 ms, the
// stack grown to compile them, and about 200 page faults, a fifth of
// what `xdev --version` costs, in every command that never renders a
// page. What is copied is only what xdev uses (no options: autolinks of
// http, https, ftp, www. and e-mail addresses as GitHub's, table cells
// aligned by the align attribute); TestSameAsGoldmark renders the same
// HTML as goldmark's own extensions, which the tests alone link, over
// their edge cases and 5,000 generated texts (FuzzSameAsGoldmark over
// any), and internal/export's tests run the hostile corpus through it.
package gfm

import (
	"github.com/yuin/goldmark"
)

// Extensions are GitHub's dialect: tables aligned by attribute, autolinks,
// strikethrough and task lists (goldmark's extension.GFM, but for the
// tables' alignment).
var Extensions = []goldmark.Extender{Linkify, Strikethrough, TaskList, Table}
