package live

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func TestMarker(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db.live")
	if Held(path) {
		t.Fatal("no marker: fresh")
	}
	m, err := Hold(path)
	if err != nil {
		t.Fatal(err)
	}
	if !Held(path) {
		t.Fatal("a new marker (dirty) is not held")
	}
	if _, err := Hold(path); err != ErrHeld {
		t.Fatalf("second Hold: %v, want ErrHeld", err)
	}
	m.Clean()
	if !Held(path) {
		t.Fatal("clean: not held")
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("marker mode %v", fi.Mode().Perm())
	}
	m.Unwatched()
	if Held(path) {
		t.Fatal("unwatched: held")
	}
	m.Clean()
	if Held(path) {
		t.Fatal("unwatched is for good: a Clean after it vouches")
	}
	m.Close()
	if Held(path) {
		t.Fatal("closed: held")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("marker left after Close: %v", err)
	}
}

// TestMarkerUnheld: a marker whose holder is gone (a file left clean, no
// lock) vouches for nothing.
func TestMarkerUnheld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db.live")
	os.WriteFile(path, []byte("c 1\n"), 0o600)
	if Held(path) || Fresh(path, time.Second) {
		t.Fatal("clean marker nobody holds: fresh")
	}
}

// TestMarkerStoppedHolder: a held, clean marker whose pid is a stopped
// process is not fresh, and one whose pid runs is.
func TestMarkerStoppedHolder(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	path := filepath.Join(t.TempDir(), "x.db.live")
	m, err := Hold(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer cmd.Process.Kill()
	pid := cmd.Process.Pid
	m.f.WriteAt([]byte("c "+strconv.Itoa(pid)+"\n"), 0)
	m.state = 'c'
	if !Held(path) {
		t.Fatal("running holder: not held")
	}
	syscall.Kill(pid, syscall.SIGSTOP)
	for range 100 {
		if !running(pid) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if Held(path) {
		t.Fatal("stopped holder: held")
	}
}

// TestHandshake: Fresh is true only once the holder answers its request,
// false when nobody answers within the timeout; requests and answers are
// removed.
func TestHandshake(t *testing.T) {
	dir, path := held(t)
	start := time.Now()
	if Fresh(path, 50*time.Millisecond) {
		t.Fatal("fresh with nobody answering")
	}
	if time.Since(start) > 2*time.Second {
		t.Fatal("the wait did not end at its timeout")
	}
	answering(t, dir, path, true)
	for range 20 {
		if !Fresh(path, 5*time.Second) {
			t.Fatal("an answered request: not fresh")
		}
	}
	if left, _ := os.ReadDir(SyncDir(dir)); len(left) != 0 {
		t.Errorf("left in the sync dir: %v", left)
	}
	if _, ok := Request(filepath.Join(SyncDir(dir), "x.db.live.abc.nack")); ok {
		t.Error("a refusal read as a request")
	}
	if _, ok := Request(filepath.Join(SyncDir(dir), "x.db.live.abc.ack")); ok {
		t.Error("an answer read as a request")
	}
}

// TestHandshakeRefused: a refusal is not fresh, and ends the wait at once.
func TestHandshakeRefused(t *testing.T) {
	dir, path := held(t)
	answering(t, dir, path, false)
	start := time.Now()
	if Fresh(path, 10*time.Second) {
		t.Fatal("a refused request: fresh")
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("a refusal did not end the wait")
	}
}

// answering answers, as a server would (by polling here, not watching),
// every request about the marker at path in dir's sync directory, until
// the test ends.
func answering(t *testing.T, dir, path string, fresh bool) {
	stop := make(chan struct{})
	done := make(chan struct{})
	t.Cleanup(func() { close(stop); <-done })
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			names, _ := filepath.Glob(filepath.Join(SyncDir(dir), "*"))
			for _, n := range names {
				if marker, ok := Request(n); ok && marker == path {
					Answer(n, fresh)
				}
			}
			time.Sleep(time.Millisecond)
		}
	}()
}

// held is a marker held in a temp dir (released as the test ends), and
// that dir.
func held(t *testing.T) (dir, path string) {
	dir = t.TempDir()
	path = filepath.Join(dir, "x.db.live")
	m, err := Hold(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return dir, path
}
