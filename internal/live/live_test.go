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
	if Fresh(path) {
		t.Fatal("no marker: fresh")
	}
	m, err := Hold(path)
	if err != nil {
		t.Fatal(err)
	}
	if Fresh(path) {
		t.Fatal("a new marker is dirty, not fresh")
	}
	if _, err := Hold(path); err != ErrHeld {
		t.Fatalf("second Hold: %v, want ErrHeld", err)
	}
	m.Clean()
	if !Fresh(path) {
		t.Fatal("clean and held: not fresh")
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("marker mode %v", fi.Mode().Perm())
	}
	m.Dirty()
	if Fresh(path) {
		t.Fatal("dirty: fresh")
	}
	m.Clean()
	m.Close()
	if Fresh(path) {
		t.Fatal("closed: fresh")
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
	if Fresh(path) {
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
	if !Fresh(path) {
		t.Fatal("running holder: not fresh")
	}
	syscall.Kill(pid, syscall.SIGSTOP)
	for range 100 {
		if !running(pid) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if Fresh(path) {
		t.Fatal("stopped holder: fresh")
	}
}

