package catalog

import (
	"context"
	"time"

	"github.com/xdev/xdev/internal/searchtext"
	"github.com/xdev/xdev/internal/secrets"
)

// A Secret is a key, token or password found in a session, as
// `xdev secrets` reports it: where, what kind, and its mask (never the
// value itself).
type Secret struct {
	Harness     Harness
	SessionID   string
	Path        string // the session as a person is shown it
	Entry       string // the entry's id, "title" for the session's title
	Line        int    // the entry's line in Path; 0 for the title
	Time        time.Time
	Kind        string // the rule that found it (internal/secrets)
	Masked      string // [REDACTED kind …fp]
	Fingerprint string
}

// Secrets calls fn with every secret in the sessions of rows, read as
// search reads them (the title, and each entry's searchable text and
// thinking: searchtext.Of). A session that cannot be read is passed to
// failed and the others are read on; ctx stops the scan between entries.
func (c *Catalog) Secrets(ctx context.Context, rows []Row, fn func(Secret), failed func(Row, error)) error {
	d := secrets.Default()
	for _, row := range rows {
		if row.Err != nil {
			continue // not a session: verify says why
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := c.secretsOf(ctx, d, row, fn); err != nil {
			failed(row, err)
		}
	}
	return nil
}

func (c *Catalog) secretsOf(ctx context.Context, d *secrets.Detector, row Row, fn func(Secret)) error {
	ref, err := c.RefOf(row)
	if err != nil {
		return err
	}
	rd, err := c.Open(ctx, ref)
	if err != nil {
		return err
	}
	x, err := rd.OpenIndex()
	if err != nil {
		return err
	}
	defer x.Close()
	base := Secret{Harness: row.Harness, SessionID: row.ID, Path: rd.Shown}
	report := func(s Secret, text string) {
		seen := map[string]bool{}
		for _, f := range d.Find(text) {
			v := text[f.Start:f.End]
			if seen[f.Rule+"\x00"+v] {
				continue
			}
			seen[f.Rule+"\x00"+v] = true
			s.Kind, s.Masked, s.Fingerprint = f.Rule, secrets.Redaction(f.Rule, v), secrets.Fingerprint(v)
			fn(s)
		}
	}
	if title, _ := x.Title(); title != "" {
		s := base
		s.Entry = "title"
		report(s, title)
	}
	for i := range x.Len() {
		if i%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		e, err := x.Entry(i)
		if err != nil || e == nil {
			continue // unreadable: verify says so
		}
		doc := searchtext.Of(e)
		text := doc.Text
		if doc.Thinking != "" {
			text += "\n" + doc.Thinking
		}
		if text == "" {
			continue
		}
		s := base
		s.Entry, s.Line = e.ID, rd.Line(x, i)
		if doc.TS != 0 {
			s.Time = time.UnixMilli(doc.TS)
		}
		report(s, text)
	}
	return nil
}
