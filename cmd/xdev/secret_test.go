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
