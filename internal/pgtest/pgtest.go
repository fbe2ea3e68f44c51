// Package pgtest runs a real PostgreSQL server for tests: Debian's server
// binaries, a throwaway cluster made by initdb in a temp dir, listening on
// a Unix socket in that dir and on a free port of 127.0.0.1, stopped and
// removed when the test binary ends. Never a mock.
//
// A package's TestMain calls Main; each test calls NewDB for a database
// of its own on the shared server. Without the server binaries a
// developer's run skips, saying how to install them; under CI (CI set)
// it fails instead, since .ci/run installs them.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is a running throwaway cluster.
type Server struct {
	Dir  string // the cluster's data dir, and the socket's
	Port int    // its port on 127.0.0.1
	cmd  *exec.Cmd
	done chan error
}

var (
	once    sync.Once
	shared  *Server
	started error
	dbs     atomic.Int64
)

// Superuser is the cluster's superuser role; the cluster trusts every
// local connection.
const Superuser = "xdev"

// InstallHint says how to get the server binaries.
const InstallHint = "apt-get install postgresql (Debian's server: initdb and postgres under /usr/lib/postgresql/*/bin)"

// Main runs a package's tests and stops the server, if one was started.
func Main(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		shared.Stop()
	}
	return code
}

// Require returns the shared server, starting it on first use.
func Require(t testing.TB) *Server {
	t.Helper()
	s, err := Shared()
	if err != nil {
		if errors.Is(err, ErrNoServer) {
			t.Skipf("pgtest: %v; to run these tests: %s", err, InstallHint)
		}
		t.Fatalf("pgtest: %v", err)
	}
	return s
}

// ErrNoServer is Shared's error when there are no server binaries and
// the tests may skip (CI is not set).
var ErrNoServer = errors.New("no PostgreSQL server binaries (initdb, postgres)")

// Shared returns the shared server, starting it on first use.
func Shared() (*Server, error) {
	once.Do(func() { shared, started = start() })
	if errors.Is(started, errNoBinaries) && os.Getenv("CI") == "" {
		return nil, ErrNoServer
	}
	return shared, started
}

// NewDB creates an empty database on the shared server for t and returns
// its URL (over TCP on 127.0.0.1, as a team's server is reached).
func NewDB(t testing.TB) string {
	t.Helper()
	Require(t)
	url, err := NewDatabase()
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// NewDatabase creates an empty database on the shared server, starting
// it on first use, and returns its URL.
func NewDatabase() (string, error) {
	s, err := Shared()
	if err != nil {
		return "", err
	}
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbs.Add(1))
	if err := s.Exec(context.Background(), "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	return s.URL(name), nil
}

// URL is the connection URL of database db.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", Superuser, s.Port, db)
}

// Exec runs sql as the superuser in the postgres database.
func (s *Server) Exec(ctx context.Context, sql string, args ...any) error {
	c, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, sql, args...)
	return err
}

var errNoBinaries = errors.New("no PostgreSQL server binaries: CI installs them (.ci/run)")

// binDir finds initdb and postgres: on PATH, else the newest of Debian's
// /usr/lib/postgresql/*/bin.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("postgres"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return va - vb
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "postgres")); err == nil {
			return dirs[i], nil
		}
	}
	return "", errNoBinaries
}

// start makes and starts a cluster. PostgreSQL refuses to run as root, so
// under root the cluster is the postgres user's (Debian's package makes
// it), else nobody's.
func start() (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	reap()
	dir, err := os.MkdirTemp("", "xdev-pg-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", Superuser, "--auth=trust",
		"--encoding=UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	args := []string{"-D", data, "-k", dir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200",
		"-c", "shared_buffers=128MB", "-c", "logging_collector=off"}
	if os.Getenv("XDEV_PG_FSYNC") != "on" {
		// Tests need no durability across a power cut; benchmarks set
		// XDEV_PG_FSYNC=on to measure a server as it is run.
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	cmd.Dir = dir
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Server{Dir: dir, Port: port, cmd: cmd, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait(); logf.Close() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := pgx.Connect(ctx, s.URL("postgres"))
		cancel()
		if err == nil {
			c.Close(context.Background())
			return s, nil
		}
		select {
		case werr := <-s.done:
			log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			os.RemoveAll(dir)
			return nil, fmt.Errorf("postgres exited: %v\n%s", werr, log)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("postgres did not accept connections in 30 s: %v", err)
		}
	}
}

// Stop stops the server (a fast shutdown) and removes its files.
func (s *Server) Stop() {
	if s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			s.cmd.Process.Kill()
			<-s.done
		}
	}
	os.RemoveAll(s.Dir)
}

// ownerFile, in a cluster's dir, holds the pid of the test process that
// started it.
const ownerFile = "owner.pid"

// reap stops and removes the clusters of test processes that died
// without stopping theirs (a test binary killed by a timeout): each is
// stopped at once (SIGQUIT, PostgreSQL's immediate shutdown).
func reap() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "xdev-pg-*"))
	for _, dir := range dirs {
		owner, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(owner)))
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) == nil || !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			continue // its owner is alive, or it is not ours to judge
		}
		if pm, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid")); err == nil {
			if line, _, _ := strings.Cut(string(pm), "\n"); line != "" {
				if p, err := strconv.Atoi(strings.TrimSpace(line)); err == nil && p > 0 {
					syscall.Kill(p, syscall.SIGQUIT)
					for i := 0; i < 100 && syscall.Kill(p, 0) == nil; i++ {
						time.Sleep(50 * time.Millisecond)
					}
				}
			}
		}
		os.RemoveAll(dir)
	}
}

// credential is who the server runs as: nil (this process's user) unless
// that is root.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root, and no postgres or nobody user to run the server as")
}

// freePort returns a port of 127.0.0.1 nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Psql runs sql through the psql client beside the server's binaries, as
// a person reading the store would, and returns its unaligned output.
func Psql(t testing.TB, url, sql string) string {
	t.Helper()
	bin, err := binDir()
	if err != nil {
		t.Fatal(err)
	}
	psql := filepath.Join(bin, "psql")
	if _, err := os.Stat(psql); err != nil {
		if psql, err = exec.LookPath("psql"); err != nil {
			t.Fatalf("no psql beside %s or on PATH: %s", bin, InstallHint)
		}
	}
	out, err := exec.Command(psql, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql).CombinedOutput()
	if err != nil {
		t.Fatalf("psql %q: %v\n%s", sql, err, out)
	}
	return string(out)
}
