package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/pgtest"
)

// secret is the password the connection strings below carry. No message
// may hold any part of it: no run of 4 of its characters.
const secret = "Pw9xSecret37"

// leaks reports the first part of the secret msg holds.
func leaks(msg string) string {
	for n := len(secret); n >= 4; n-- {
		for i := 0; i+n <= len(secret); i++ {
			if strings.Contains(msg, secret[i:i+n]) {
				return secret[i : i+n]
			}
		}
	}
	return ""
}

// connStrings are connection strings that carry the secret, in every
// spelling and every mistake this test can make of them: well-formed
// URLs with the password as user info or parameter, key=value pairs
// quoted and not, and each of those broken (no scheme, one slash, an
// unclosed quote, a bad port, a stray character), around host.
func connStrings(host string) []string {
	enc := url.QueryEscape(secret)
	spaced := "pw " + secret
	out := []string{
		"postgres://alice:" + secret + "@" + host + "/team",
		"postgresql://alice:" + secret + "@" + host + "/team?sslmode=disable",
		"postgres://alice@" + host + "/team?password=" + secret,
		"postgres://alice@" + host + "/team?sslmode=disable&password=" + enc + "&connect_timeout=2",
		"postgres://alice:" + url.PathEscape(spaced) + "@" + host + "/team",
		"postgres://alice@" + host + "/team?password=" + url.QueryEscape(spaced),
		"postgres://alice@" + host + "/team?sslpassword=" + secret,
		"host=" + hostOnly(host) + " port=" + portOnly(host) + " user=alice password=" + secret + " dbname=team",
		"host=" + hostOnly(host) + " port=" + portOnly(host) + " user=alice password='" + spaced + "' dbname=team",
		"host=" + hostOnly(host) + " port=" + portOnly(host) + " password = '" + spaced + "' user=alice",
	}
	broken := []string{
		"alice:" + secret + "@" + host + "/team",
		"postgresql:/alice:" + secret + "@" + host + "/team",
		"postgres:alice:" + secret + "@" + host + "/team",
		"postgres:///alice:" + secret + "@" + host + "/team",
		"postgres://alice:" + secret + "@" + host + ":notaport/team",
		"postgres://alice:" + secret + "@" + host + "/team?sslmode=bogus",
		"postgres://alice:" + secret + "@@" + host + "/team",
		"postgres://alice:" + secret + "@" + host + "/team?password=%zz",
		"postgres://alice:" + secret + "%@" + host + "/team",
		"mysql://alice:" + secret + "@" + host + "/team",
		"host=" + hostOnly(host) + " password='" + spaced + " user=alice",
		"host=" + hostOnly(host) + " password=" + secret + " port=",
		"host=" + hostOnly(host) + " user alice password=" + secret,
		"password='" + secret,
		"password=" + secret,
		secret,
		" " + secret + " ",
		"postgres://alice:" + secret + "@[" + host + "/team",
		"postgres://alice:" + secret + "@" + host + "/team\x00",
		"postgres://alice:" + secret + " @" + host + "/team",
	}
	return append(out, broken...)
}

func hostOnly(h string) string { x, _, _ := strings.Cut(h, ":"); return x }
func portOnly(h string) string {
	_, p, ok := strings.Cut(h, ":")
	if !ok {
		return "5432"
	}
	return p
}

// TestSecretNeverPrinted: whatever connection string carries the
// password, parseable or not, the server up (with a role that takes no
// password) or down, no error and no printed URL holds any part of it.
func TestSecretNeverPrinted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	up, err := url.Parse(pgtest.NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{up.Host, "127.0.0.1:1"} {
		for _, s := range connStrings(host) {
			for _, open := range []func(context.Context, string, *Options) (*DB, error){Connect, OpenRead, Open} {
				var warned []string
				db, err := open(ctx, s, &Options{Warn: func(m string) { warned = append(warned, m) }})
				msgs := append(warned, fmt.Sprint(err))
				if db != nil {
					msgs = append(msgs, db.URL())
					db.Close()
				}
				for _, m := range msgs {
					if part := leaks(m); part != "" {
						t.Errorf("%q: a message holds %q of the password: %s", s, part, m)
					}
				}
			}
		}
	}
}

// TestPassfileModes: a ~/.pgpass that others may read is not used, and
// the caller is told so, as libpq warns; a 0600 one is used silently.
func TestPassfileModes(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("PGPASSFILE", "")
	t.Setenv("PGPASSWORD", "")
	pass := filepath.Join(home, ".pgpass")
	if err := os.WriteFile(pass, []byte("*:*:*:*:"+secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tt := range []struct {
		mode   os.FileMode
		warned bool
	}{{0o644, true}, {0o640, true}, {0o600, false}, {0o400, false}} {
		os.Chmod(pass, tt.mode)
		var warned []string
		_, err := Connect(ctx, "postgres://alice@127.0.0.1:1/team?connect_timeout=1", &Options{Warn: func(m string) { warned = append(warned, m) }})
		if err == nil {
			t.Fatal("connected to port 1")
		}
		if got := len(warned) > 0; got != tt.warned {
			t.Errorf("mode %v: warned %v (%q), want %v", tt.mode, got, warned, tt.warned)
		}
		for _, w := range warned {
			if !strings.Contains(w, pass) || !strings.Contains(w, "chmod 0600") || leaks(w) != "" {
				t.Errorf("mode %v: warning %q", tt.mode, w)
			}
		}
	}
	// Not consulted at all when the URL has a password of its own.
	os.Chmod(pass, 0o644)
	var warned []string
	Connect(ctx, "postgres://alice:x@127.0.0.1:1/team?connect_timeout=1", &Options{Warn: func(m string) { warned = append(warned, m) }})
	if len(warned) > 0 {
		t.Errorf("warned of a password file a URL with a password never reads: %q", warned)
	}
}

// TestReadNeverCreatesSchema: OpenRead of a schema that is not there
// (a mistyped --schema) fails naming it, and leaves no schema behind; of
// an older one, says to sync; of the current one, reads.
func TestReadNeverCreatesSchema(t *testing.T) {
	ctx := context.Background()
	u := pgtest.NewDB(t)
	if _, err := OpenRead(ctx, u, &Options{Schema: "xdevv"}); !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), `"xdevv"`) {
		t.Errorf("a missing schema: %v", err)
	}
	db, err := Connect(ctx, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'xdev%'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("after a read of a missing schema, %d xdev schemas (%v)", n, err)
	}
	w, err := Open(ctx, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if r, err := OpenRead(ctx, u, nil); err != nil {
		t.Errorf("the current schema: %v", err)
	} else {
		r.Close()
	}
	if _, err := w.pool.Exec(ctx, `UPDATE xdev.schema_version SET version = 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRead(ctx, u, nil); err == nil || !strings.Contains(err.Error(), "run xdev sync once") {
		t.Errorf("an older schema: %v", err)
	}
	var v int
	w.pool.QueryRow(ctx, `SELECT version FROM xdev.schema_version`).Scan(&v)
	if v != 1 {
		t.Errorf("a read migrated the schema to %d", v)
	}
}
