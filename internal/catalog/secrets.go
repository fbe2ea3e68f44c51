package catalog

import (
	"context"
	"sync"
	"sync/atomic"
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
	Path        string    // the session as a person is shown it, masked
	Entry       string    // the entry's id; "title", "path" or "cwd" for the session's own
	Line        int       // the entry's line in Path; 0 for the title
	Time        time.Time // the entry's; the session's start for its title
	Kind        string    // the rule that found it (internal/secrets)
	Masked      string    // [REDACTED kind …fp]
	Fingerprint string
}

// SecretsOptions choose what Secrets reports, and how it reads.
type SecretsOptions struct {
	// Since and Until keep only the secrets of entries in [Since, Until)
	// (either zero for no bound); a title's time is its session's start.
	Since, Until time.Time
	// Kind keeps only the secrets found by this rule ("" for all).
	Kind string
	// Cache keeps what each session holds in xdev's cache dir by the
	// session's stamp (secretscache.go), so that the next scan opens only
	// the sessions that changed. CachePath, when set, is its file.
	Cache     bool
	CachePath string
	// Whole says rows are every session there is: cached entries of the
	// others are dropped.
	Whole bool
}

// SecretsStats say what a scan read.
type SecretsStats struct {
	Sessions int // sessions scanned
	Read     int // of them, opened and read (not answered by the cache)
}

// Secrets calls fn with every secret in the sessions of rows, in their
// order, read as search reads them (the title, and each entry's
// searchable text and thinking: searchtext.Of), two sessions at a time.
// A session that cannot be read is passed to failed and the others are
// read on; ctx stops the scan between entries.
func (c *Catalog) Secrets(ctx context.Context, rows []Row, opts SecretsOptions, fn func(Secret), failed func(Row, error)) (SecretsStats, error) {
	var st SecretsStats
	var cache *secretsCache
	if opts.Cache {
		path := opts.CachePath
		if path == "" {
			path = secretsCachePath()
		}
		cache = openSecretsCache(path)
	}
	type result struct {
		found []Secret
		err   error
		done  chan struct{}
	}
	results := make([]result, len(rows))
	for i := range results {
		results[i].done = make(chan struct{})
	}
	var todo []int
	for i, row := range rows {
		switch {
		case row.Err != nil: // not a session: verify says why
		case !opts.Since.IsZero() && !row.Modified.IsZero() && row.Modified.Before(opts.Since):
		default:
			todo = append(todo, i)
			continue
		}
		close(results[i].done)
	}
	st.Sessions = len(todo)
	var read atomic.Int64
	work := make(chan int)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			d := secrets.Default()
			for i := range work {
				r := &results[i]
				if r.err = ctx.Err(); r.err != nil {
					close(r.done) // stopped: the rest are passed over
					continue
				}
				var fresh bool
				r.found, fresh, r.err = c.sessionSecrets(ctx, d, cache, rows[i])
				if fresh {
					read.Add(1)
				}
				close(r.done)
			}
		})
	}
	go func() {
		defer close(work)
		for _, i := range todo {
			work <- i
		}
	}()
	for i := range results {
		<-results[i].done
		if err := results[i].err; err != nil && ctx.Err() == nil {
			failed(rows[i], err)
		}
		for _, s := range results[i].found {
			if opts.Kind != "" && s.Kind != opts.Kind {
				continue
			}
			if t := s.Time; !opts.Since.IsZero() && t.Before(opts.Since) || !opts.Until.IsZero() && !t.Before(opts.Until) {
				continue
			}
			fn(s)
		}
		results[i].found = nil
	}
	wg.Wait()
	st.Read = int(read.Load())
	if err := ctx.Err(); err != nil {
		return st, err
	}
	if cache != nil {
		if err := cache.save(opts.Whole); err != nil {
			return st, err
		}
	}
	return st, nil
}

// sessionSecrets is every secret in row's session: from the cache when
// its stamp is as cached, else read (fresh).
func (c *Catalog) sessionSecrets(ctx context.Context, d *secrets.Detector, cache *secretsCache, row Row) (found []Secret, fresh bool, err error) {
	base := Secret{Harness: row.Harness, SessionID: row.ID}
	var key string
	var stamp sessionStamp
	if cache != nil {
		key, stamp = secretsKey(row), stampOf(row)
		if e, ok := cache.get(key, stamp); ok {
			base.Path = e.Shown
			for _, f := range e.Found {
				s := base
				s.Entry, s.Line, s.Kind, s.Masked, s.Fingerprint = f.Entry, f.Line, f.Kind, f.Masked, f.Fingerprint
				if f.TS != 0 {
					s.Time = time.UnixMilli(f.TS)
				}
				found = append(found, s)
			}
			return found, false, nil
		}
	}
	shown, err := c.secretsOf(ctx, d, row, func(s Secret) { found = append(found, s) })
	if err != nil {
		return nil, true, err
	}
	if cache != nil {
		e := &secretsEntry{Stamp: stamp, Shown: shown}
		for _, s := range found {
			f := cachedSecret{Entry: s.Entry, Line: s.Line, Kind: s.Kind, Masked: s.Masked, Fingerprint: s.Fingerprint}
			if !s.Time.IsZero() {
				f.TS = s.Time.UnixMilli()
			}
			e.Found = append(e.Found, f)
		}
		cache.put(key, e)
	}
	return found, true, nil
}

// secretsOf reads row's session and calls fn with each secret in it (its
// path's and working directory's, its title's, its entries'); it returns
// the session's path as a person is shown it, masked.
func (c *Catalog) secretsOf(ctx context.Context, d *secrets.Detector, row Row, fn func(Secret)) (string, error) {
	ref, err := c.RefOf(row)
	if err != nil {
		return "", err
	}
	rd, err := c.Open(ctx, ref)
	if err != nil {
		return "", err
	}
	x, err := rd.OpenIndex()
	if err != nil {
		return "", err
	}
	defer x.Close()
	shown := secrets.Mask(rd.Shown)
	base := Secret{Harness: row.Harness, SessionID: row.ID, Path: shown}
	report := func(s Secret, text string) {
		seen := map[string]bool{}
		for _, f := range d.Find(text) {
			if f.Placeholder {
				continue // masked where it is shown, but no key
			}
			v := text[f.Start:f.End]
			if seen[f.Rule+"\x00"+v] {
				continue
			}
			seen[f.Rule+"\x00"+v] = true
			s.Kind, s.Masked, s.Fingerprint = f.Rule, secrets.Redaction(f.Rule, v), secrets.Fingerprint(v)
			fn(s)
		}
	}
	// What names the session: its file's path and its working directory
	// (a project named by a key names its sessions' files too).
	for _, named := range []struct{ entry, text string }{{"path", rd.Shown}, {"cwd", x.Header().Cwd}} {
		s := base
		s.Entry, s.Time = named.entry, row.Created
		report(s, named.text)
	}
	if title, _ := x.Title(); title != "" {
		s := base
		s.Entry, s.Time = "title", row.Created
		report(s, title)
	}
	for i := range x.Len() {
		if i%256 == 0 && ctx.Err() != nil {
			return "", ctx.Err()
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
	return shown, nil
}
