package main

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/pgtest"
)

// TestDatabaseSecretNeverPrinted runs every command that takes a
// database, the URL given by --db and by $XDEV_DATABASE_URL, with
// connection strings that carry a password, well-formed and mistyped,
// the server up and down: nothing on stdout or stderr holds any run of
// four characters of the password.
func TestDatabaseSecretNeverPrinted(t *testing.T) {
	const secret = "Pw9xQk37Zr"
	up, err := url.Parse(pgtest.NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	os.MkdirAll(filepath.Join(data, "sessions"), 0o700)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	var urls []string
	for _, host := range []string{up.Host, "127.0.0.1:1"} {
		db := strings.TrimPrefix(up.Path, "/")
		urls = append(urls,
			"postgres://"+up.User.Username()+"@"+host+"/"+db+"?password="+secret+"&connect_timeout=3",
			"postgres://"+up.User.Username()+":"+secret+"@"+host+"/"+db+"?connect_timeout=3",
			up.User.Username()+":"+secret+"@"+host+"/"+db,
			"postgresql:/"+up.User.Username()+":"+secret+"@"+host+"/"+db,
			"host="+strings.Split(host, ":")[0]+" port="+strings.Split(host, ":")[1]+" user="+up.User.Username()+" dbname="+db+" password='pw "+secret+"' connect_timeout=3",
			"host="+strings.Split(host, ":")[0]+" password='"+secret,
		)
	}
	commands := [][]string{
		{"list", "--all"}, {"search", "hello"}, {"show", "x"}, {"context", "x"}, {"export", "x"},
		{"sync", "--data-dir", data}, {"sync", "--pull", "--data-dir", data}, {"sync", "--json", "--data-dir", data},
		{"list", "--all", "--omp-table"},
	}
	for _, u := range urls {
		for _, c := range commands {
			for _, byEnv := range []bool{false, true} {
				args := append([]string(nil), c...)
				if byEnv {
					t.Setenv("XDEV_DATABASE_URL", u)
				} else {
					t.Setenv("XDEV_DATABASE_URL", "")
					args = append(args[:1], append([]string{"--db", u}, args[1:]...)...)
				}
				if c[0] != "sync" && byEnv && !contains(args, "--omp-table") {
					continue // the read commands take the URL by --db only
				}
				out, errs, _ := xdev(t, "", args...)
				for n := len(secret); n >= 4; n-- {
					for i := 0; i+n <= len(secret); i++ {
						if part := secret[i : i+n]; strings.Contains(out+errs, part) {
							t.Errorf("xdev %q (URL by env: %v): the output holds %q of the password:\n%s%s", args, byEnv, part, out, errs)
							n = 0
							break
						}
					}
				}
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestDatabaseSecretEveryShape generates connection strings of every shape
// people write (URLs with the password in the user info, in ?password=,
// after a '#'; URLs typed without the scheme or with one slash; key=value
// pairs quoted, unquoted and unclosed; several hosts, IPv6) around a
// password holding each character that has a meaning in one of them, and
// runs the commands that take a database on each, the server down (so
// that every error path a connection takes is walked): no output holds a
// run of four characters of the password.
func TestDatabaseSecretEveryShape(t *testing.T) {
	data := t.TempDir()
	os.MkdirAll(filepath.Join(data, "sessions"), 0o700)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("PGPASSWORD", "")
	forms := []func(pw string) string{
		func(pw string) string { return "postgres://me:" + pw + "@127.0.0.1:1/db" },
		func(pw string) string { return "postgres://me:" + pw + "@127.0.0.1:1/db?connect_timeout=3" },
		func(pw string) string {
			return "postgresql://me:" + pw + "@127.0.0.1:1/db?sslmode=disable&application_name=a"
		},
		func(pw string) string { return "postgres://me:" + pw + "@127.0.0.1:1" },
		func(pw string) string { return "postgres://me:" + pw + "@[::1]:1/db" },
		func(pw string) string { return "postgres://me:" + pw + "@127.0.0.1:1,127.0.0.1:2/db" },
		func(pw string) string { return "postgres://me@127.0.0.1:1/db?password=" + pw },
		func(pw string) string { return "postgres://me@127.0.0.1:1/db?password=" + pw + "&connect_timeout=3" },
		func(pw string) string { return "postgres://me@127.0.0.1:1/db?sslmode=disable&password=" + pw },
		func(pw string) string { return "postgres://me@127.0.0.1:1/db?sslpassword=" + pw },
		func(pw string) string { return "postgres://me:pw@127.0.0.1:1/db#" + pw },
		func(pw string) string { return "me:" + pw + "@127.0.0.1:1/db" },
		func(pw string) string { return "postgresql:/me:" + pw + "@127.0.0.1:1/db" },
		func(pw string) string { return "postgres:me:" + pw + "@127.0.0.1:1/db" },
		func(pw string) string { return "mysql://me:" + pw + "@127.0.0.1:1/db" },
		func(pw string) string { return "host=127.0.0.1 port=1 user=me dbname=db password=" + pw },
		func(pw string) string {
			return "host=127.0.0.1 port=1 user=me dbname=db password='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw) + "'"
		},
		func(pw string) string { return "host=127.0.0.1 password='" + pw },
		func(pw string) string { return "password=" + pw + " host=127.0.0.1 port=1" },
		func(pw string) string { return "host = 127.0.0.1 port = 1 password = " + pw },
	}
	specials := []string{"", "@", "&", "#", "?", "/", ":", "%", "%40", "=", "'", `"`, `\`, " ", "+", ";", "[", "]", ",", "é", "@@"}
	commands := [][]string{
		{"list", "--all"}, {"search", "hello"}, {"show", "x"}, {"context", "x"}, {"export", "x"},
		{"sync", "--data-dir", data}, {"sync", "--pull", "--data-dir", data}, {"sync", "--json", "--data-dir", data},
		{"list", "--all", "--omp-table"},
	}
	runs := 0
	for fi, form := range forms {
		for si, sp := range specials {
			secret := "Head" + sp + "Tail77"
			u := form(secret)
			// Every shape under the first command, and under one more, the
			// commands taking turns; sync takes the URL from the environment.
			for _, c := range [][]string{commands[0], commands[1+(fi*len(specials)+si)%(len(commands)-1)]} {
				args := append([]string(nil), c...)
				if c[0] == "sync" {
					t.Setenv("XDEV_DATABASE_URL", u)
				} else {
					t.Setenv("XDEV_DATABASE_URL", "")
					args = append(args[:1], append([]string{"--db", u}, args[1:]...)...)
				}
				out, errs, _ := xdev(t, "", args...)
				runs++
				for _, part := range []string{"Head", "Tail", "ail77"} {
					if strings.Contains(out+errs, part) {
						t.Errorf("xdev %q with %q: the output holds %q of the password:\n%s%s", c, u, part, out, errs)
						break
					}
				}
			}
		}
	}
	t.Logf("%d connection strings, %d runs", len(forms)*len(specials), runs)
}
