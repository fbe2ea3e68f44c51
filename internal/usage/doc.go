// Package usage counts the model calls sessions record, once along the
// session tree, and prices them: what `xdev usage` reports.
//
// # Calls
//
// A Call is one model call: its time, its model (a ModelRef: provider, id,
// API), its Tokens (input not read from the cache, output, cache reads,
// cache writes, of those one-hour writes, of the output the reasoning),
// the cost the session recorded, and the keys a copy of it keeps: Entry,
// an omp entry's id and time (EntryKey), and Request, a provider
// response's id (ResponseKey). A counter that is not a finite number of
// at least 0 counts as 0 and is counted (MalformedUsageCounters). Calls
// hold no pointer, so that the collector never scans a ledger's hundreds
// of thousands of them.
//
// ReadSession reads an omp-format session's calls (calls.go), rule for
// rule as omp-stats' parser reads them; another harness's readers are in
// internal/foreign (Usage), each giving a Session: an id, the session it
// descends from (Parent), whether it is a subagent's, the origin of an
// import (ImportOf; the calls before its provenance entry are Imported),
// its project, title and calls.
//
// # Counting once
//
// A Ledger (ledger.go) holds sessions and counts each call once: by its
// Entry (a fork's, a branch's or an import's copy of an omp entry is the
// same call, in the session nearest its lineage's root, as omp-stats'
// database keeps the first row of one entry id and time), by its Request
// (a response's streamed lines and their copies, the one of most tokens
// kept), and an import's Imported calls not at all while the ledger has
// its source. Calls gives every call counted, with the session it is
// counted in and the session a report by session rolls it into (a
// subagent's parent).
//
// A session may be added by its digest alone (AddDigest): its calls
// counted once among themselves and summed into Buckets, one per quarter
// hour and model (digest.go), priced in every Mode. Groups gives the
// ledger's calls as such groups: a digested session's buckets where none
// of its calls may be counted elsewhere, the rest counted one by one and
// digested, so that a report of 250,000 calls adds some tens of
// thousands of buckets. Whether a call may be counted elsewhere is the
// ledger's to know for lineages and imports, and its caller's (Involve)
// for shared keys: the catalog's cache keeps an index of every session's
// keys.
//
// # Reports
//
// NewReport (report.go) groups the groups by a View (daily, weekly from
// Monday, monthly, session, model, project, harness), within days in a
// zone, priced in a Mode: Auto as omp-stats' resolveStoredCost (the
// recorded cost unless zero, else computed), Calculate, Display. A call
// whose cost is not known in the mode is Unpriced, never $0. Blocks finds
// the five-hour billing windows, as ccusage's blocks report does.
//
// # Prices
//
// The price table is omp's own model catalog, @oh-my-pi/pi-catalog's
// src/models.json (5,109 models of 69 providers in 18.2.3), built into
// the binary (prices.json.gz, written by genprices; Source says its
// version and date, CacheVersion names it and the rules that price calls
// with it, without reading it) and read
// only when a price is asked for: nothing is fetched at run time. A
// model's Price is its rates in dollars per million tokens, with the
// catalog's refinements: a long-context tier, whose rates apply to a call
// whose prompt (input, cache reads and cache writes) is over the tier's
// threshold; a time-based schedule (a multiplier outside peak UTC
// windows, rates effective from a date); one-hour cache writes at twice
// the input rate. Price.Cost computes a call's cost rule for rule as
// pi-catalog's calculateUsageCost does (TestCostMatchesOmp holds the two
// to each other on every model of the table). A model the table does not
// have has no price (Lookup's ok is false).
package usage
