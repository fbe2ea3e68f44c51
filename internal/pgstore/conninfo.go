package pgstore

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// A connection string holds a password more often than it should, and
// people mistype them: no error, warning or listing of xdev may carry any
// part of one. These are the rules, in one place:
//
//   - The string is never printed as given. What is printed (DB.URL and
//     every message) is built here from what was parsed: scheme, user,
//     host, port, database and the parameters that are not secrets, with
//     every secret written xxxxx.
//   - A string that does not parse (no scheme, a one-slash typo, an
//     unclosed quote) is described, never quoted: which of its forms it
//     fails and how.
//   - Every error pgx returns is scrubbed of each spelling of each secret
//     the string holds (as given, percent-decoded, unquoted), and of the
//     string itself, before it goes anywhere.
//   - Secrets are the password in the user info, any parameter whose name
//     holds "password" (password, sslpassword), and whatever sits where a
//     password would in a string typed wrong: after a user name's colon
//     before the last '@', after any "password=".

// connInfo is what xdev reads of a connection string for itself.
type connInfo struct {
	// shown is the string with its secrets replaced: safe to print.
	shown string
	// secrets are the string's secrets in every spelling it holds them,
	// longest first, so a replacement never leaves a part of one.
	secrets []string
	// password: the string itself carries a password (then a password
	// file is not consulted).
	password bool
	// passfile is the password file the string names, if any.
	passfile string
	// problem says why the string does not parse, "" if it does.
	problem string
}

// parseConnInfo reads s, a postgres:// URL or libpq key=value pairs.
func parseConnInfo(s string) connInfo {
	var c connInfo
	switch {
	case strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://"):
		c.parseURL(s)
	case strings.Contains(s, "://"):
		c.problem = "its scheme is not postgres:// or postgresql://"
	case looksLikeKeyValues(s):
		c.parseKeyValues(s)
	case strings.HasPrefix(s, "postgres:") || strings.HasPrefix(s, "postgresql:"):
		c.problem = "it lacks the // after postgres: (want postgres://user@host/db)"
	default:
		c.problem = "it is neither a postgres:// URL nor key=value pairs (want postgres://user@host/db)"
	}
	if c.problem != "" {
		// Typed wrong: what sits where a password would is a secret.
		for _, g := range guessSecrets(s) {
			c.addSecret(g)
		}
		c.shown = "(a connection string that does not parse)"
	}
	if len(c.secrets) > 0 {
		c.addSecret(s) // the whole string, should an error quote it
	}
	slices.SortFunc(c.secrets, func(a, b string) int { return len(b) - len(a) })
	c.secrets = slices.Compact(c.secrets)
	return c
}

func (c *connInfo) addSecret(s string) {
	if s == "" {
		return
	}
	c.secrets = append(c.secrets, s)
	if d, err := url.PathUnescape(s); err == nil && d != s {
		c.secrets = append(c.secrets, d)
	}
	if d, err := url.QueryUnescape(s); err == nil && d != s {
		c.secrets = append(c.secrets, d)
	}
	if e := url.QueryEscape(s); e != s {
		c.secrets = append(c.secrets, e)
	}
}

// isSecretParam reports whether a parameter's value is a secret.
func isSecretParam(name string) bool {
	return strings.Contains(strings.ToLower(name), "password")
}

func (c *connInfo) parseURL(s string) {
	// Shapes Go's url.Parse and pgx read differently (pgx ends the user
	// info at the first '@', Go at the last), or that hold what is no part
	// of a connection: refused before either reads them, so neither can
	// print or resolve a piece of a password.
	rest := s[strings.Index(s, "://")+3:]
	authority := rest
	if k := strings.IndexAny(rest, "/?#"); k >= 0 {
		authority = rest[:k]
	}
	if strings.Count(authority, "@") > 1 {
		c.problem = "its user info holds an '@' that is not percent-encoded (write an '@' in a password as %40)"
		return
	}
	if k := strings.IndexByte(s, '#'); k >= 0 {
		c.addSecret(s[k+1:])
		c.problem = "it holds a '#', which starts a URL fragment PostgreSQL has no use for (write a '#' in a password or a name as %23)"
		return
	}
	u, err := url.Parse(s)
	switch {
	case err != nil && strings.Contains(err.Error(), "invalid port"):
		c.problem = "its port is not a number"
		return
	case err != nil:
		c.problem = "it does not parse as a URL (a character that must be %-escaped, a stray bracket?)"
		return
	}
	var b strings.Builder
	b.WriteString(u.Scheme + "://")
	if u.User != nil {
		b.WriteString(url.PathEscape(u.User.Username()))
		if p, ok := u.User.Password(); ok {
			c.password = true
			c.addSecret(p)
			b.WriteString(":xxxxx")
		}
		b.WriteString("@")
	}
	if at := strings.LastIndexByte(u.Host, '@'); at >= 0 {
		// url.Parse takes the last '@' as the end of the user info;
		// anything odd left in the host is not printed.
		c.problem = "its host holds an '@'"
		return
	}
	if strings.ContainsAny(u.Path, "@") {
		c.problem = "its database name holds an '@' (a user before the host goes after the //: postgres://user@host/db)"
		return
	}
	b.WriteString(u.Host)
	b.WriteString(u.EscapedPath())
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		c.problem = "its parameters (after ?) do not parse"
		return
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	sep := "?"
	for _, k := range keys {
		for _, v := range q[k] {
			if !knownParams[k] {
				// What no connection takes may be the rest of a password
				// that held a '&': neither its name nor its value is shown.
				c.addSecret(k)
				c.addSecret(v)
				k = "xxxxx"
				v = "xxxxx"
			}
			if isSecretParam(k) {
				if strings.EqualFold(k, "password") {
					c.password = true
				}
				c.addSecret(v)
				v = "xxxxx"
			}
			if strings.EqualFold(k, "passfile") {
				c.passfile = v
			}
			b.WriteString(sep + url.QueryEscape(k) + "=" + url.QueryEscape(v))
			sep = "&"
		}
	}
	// Secrets also in the raw spelling of the query, whatever escaping
	// the user chose.
	for _, kv := range strings.Split(u.RawQuery, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if isSecretParam(k) || !knownParams[k] {
			c.addSecret(v)
		}
		if !knownParams[k] {
			c.addSecret(k)
		}
	}
	c.shown = b.String()
}

// knownParams are the parameters a connection string may carry: libpq's
// (PostgreSQL 17's connection keywords) and pgx's own. Any other is shown
// masked, for it may be part of a password that held an '&'.
var knownParams = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`host hostaddr port dbname user password passfile require_auth
		channel_binding connect_timeout client_encoding options application_name fallback_application_name
		keepalives keepalives_idle keepalives_interval keepalives_count tcp_user_timeout replication gssencmode
		sslmode requiressl sslnegotiation sslcompression sslcert sslkey sslpassword sslcertmode sslrootcert
		sslcrl sslcrldir sslsni requirepeer ssl_min_protocol_version ssl_max_protocol_version krbsrvname gsslib
		gssdelegation service servicefile target_session_attrs load_balance_hosts min_read_buffer_size
		statement_cache_capacity description_cache_capacity default_query_exec_mode
		pool_max_conns pool_min_conns pool_min_idle_conns pool_max_conn_lifetime pool_max_conn_idle_time
		pool_health_check_period pool_max_conn_lifetime_jitter search_path timezone`) {
		knownParams[k] = true
	}
}

// looksLikeKeyValues reports whether s is meant as libpq's key=value form:
// its first word is a name followed by '='.
func looksLikeKeyValues(s string) bool {
	s = strings.TrimLeft(s, " \t\n\r")
	i := strings.IndexAny(s, "= \t\n\r")
	if i <= 0 {
		return false
	}
	rest := strings.TrimLeft(s[i:], " \t\n\r")
	return strings.HasPrefix(rest, "=") && !strings.ContainsAny(s[:i], ":/@")
}

// parseKeyValues reads libpq's key=value pairs: a value is a run of
// non-space characters or a single-quoted string in which \' and \\ are
// escapes.
func (c *connInfo) parseKeyValues(s string) {
	var parts []string
	for i := 0; ; {
		for i < len(s) && strings.IndexByte(" \t\n\r", s[i]) >= 0 {
			i++
		}
		if i == len(s) {
			break
		}
		j := i
		for j < len(s) && s[j] != '=' && strings.IndexByte(" \t\n\r", s[j]) < 0 {
			j++
		}
		key := s[i:j]
		for j < len(s) && strings.IndexByte(" \t\n\r", s[j]) >= 0 {
			j++
		}
		if key == "" || j == len(s) || s[j] != '=' {
			c.problem = "a word of its key=value pairs has no '='"
			return
		}
		j++
		for j < len(s) && strings.IndexByte(" \t\n\r", s[j]) >= 0 {
			j++
		}
		var val strings.Builder
		raw := j
		if j < len(s) && s[j] == '\'' {
			j++
			closed := false
			for j < len(s) {
				switch {
				case s[j] == '\\' && j+1 < len(s):
					val.WriteByte(s[j+1])
					j += 2
					continue
				case s[j] == '\'':
					closed = true
				default:
					val.WriteByte(s[j])
					j++
					continue
				}
				break
			}
			if !closed {
				c.problem = "a quoted value is not closed"
				c.addSecret(s[raw:])
				return
			}
			j++
		} else {
			for j < len(s) && strings.IndexByte(" \t\n\r", s[j]) < 0 {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				val.WriteByte(s[j])
				j++
			}
		}
		v := val.String()
		if isSecretParam(key) {
			if key == "password" {
				c.password = true
			}
			c.addSecret(v)
			c.addSecret(s[raw:j])
			v = "xxxxx"
		}
		if key == "passfile" {
			c.passfile = v
		}
		if strings.ContainsAny(v, " \t'\\") || v == "" {
			v = "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
		}
		parts = append(parts, key+"="+v)
		i = j
	}
	if len(parts) == 0 {
		c.problem = "it holds no key=value pair"
		return
	}
	c.shown = strings.Join(parts, " ")
}

// guessSecrets finds what may be a password in a string that does not
// parse: the part after the user name's ':' before the last '@', and the
// value after each "password=", as far as a separator, and as far as the
// end.
func guessSecrets(s string) []string {
	var out []string
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		info := s[:at]
		if k := strings.LastIndex(info, "//"); k >= 0 {
			info = info[k+2:]
		} else if k := strings.LastIndexByte(info, '/'); k >= 0 {
			info = info[k+1:]
		}
		if _, p, ok := strings.Cut(info, ":"); ok && p != "" {
			out = append(out, p)
		}
	}
	lower := strings.ToLower(s)
	for i := 0; ; {
		k := strings.Index(lower[i:], "password")
		if k < 0 {
			break
		}
		i += k + len("password")
		rest := strings.TrimLeft(s[i:], " \t=")
		rest = strings.TrimPrefix(rest, "'")
		if rest == "" {
			continue
		}
		out = append(out, rest)
		if end := strings.IndexAny(rest, "& \t'"); end > 0 {
			out = append(out, rest[:end])
		}
		for _, f := range strings.FieldsFunc(rest, func(r rune) bool { return strings.ContainsRune("& \t'", r) }) {
			out = append(out, f)
			if len(out) > 64 {
				break
			}
		}
	}
	return out
}

// scrub takes every secret out of msg.
func (c *connInfo) scrub(msg string) string {
	for _, s := range c.secrets {
		msg = strings.ReplaceAll(msg, s, "xxxxx")
	}
	return msg
}

// scrubbed is an error whose message has the secrets taken out; Unwrap
// still reaches the cause (a *pgconn.PgError, say) for errors.As.
type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// scrubErr is err with c's secrets taken out of its message.
func (c *connInfo) scrubErr(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := c.scrub(msg)
	if clean == msg {
		return err
	}
	return &scrubbed{msg: clean, err: err}
}

// parseError describes pgx's refusal of a string that parsed here (an
// invalid port, an unknown sslmode): pgx's reason, without its quote of
// the string, scrubbed.
func (c *connInfo) parseError(err error) error {
	reason := err.Error()
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		// "cannot parse `<string>`: <reason>": drop the quote.
		if k := strings.Index(reason, "`: "); k >= 0 {
			reason = reason[k+3:]
		}
	}
	return fmt.Errorf("database %s does not parse: %s", c.shown, c.scrub(reason))
}

// passfileWarning says why a password file is not used, as libpq does: a
// file that others may read is ignored. It returns "" when the file is
// fine, missing or not consulted (the string has a password, or
// PGPASSWORD is set).
func (c *connInfo) passfileWarning() string {
	if c.password || os.Getenv("PGPASSWORD") != "" {
		return ""
	}
	path := c.passfile
	if path == "" {
		path = os.Getenv("PGPASSFILE")
	}
	if path == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		path = filepath.Join(home, ".pgpass")
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 == 0 {
		return ""
	}
	return fmt.Sprintf("password file %q has group or world access (%v); it is not used, as libpq does not use it: chmod 0600 %s",
		path, fi.Mode().Perm(), path)
}
