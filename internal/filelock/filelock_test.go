package filelock

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestHolderNamed: whoever holds the lock (flock(1), which writes
// nothing; this package in another process; after a holder that wrote
// its pid and is gone), the wait names the process that holds it, never
// the pid a file left behind.
func TestHolderNamed(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock(1)")
	}
	path := filepath.Join(t.TempDir(), "x.lock")
	for _, stale := range []string{"", strconv.Itoa(os.Getpid()), "1", "99999999", "garbage"} {
		os.WriteFile(path, []byte(stale+"\n"), 0o600)
		holder := exec.Command("flock", "-o", path, "sleep", "30") // -o: flock itself holds it, and lets go as it dies
		if err := holder.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until the kernel says it holds the lock.
		for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(10 * time.Millisecond) {
			f, _ := os.Open(path)
			pid := kernelHolder(f)
			f.Close()
			if pid == holder.Process.Pid {
				break
			}
		}
		var said []int
		_, err := Lock(context.Background(), path, &Options{Waiting: func(h int) { said = append(said, h) }, Timeout: 1200 * time.Millisecond})
		var busy *BusyError
		if !errors.As(err, &busy) || busy.Holder != holder.Process.Pid || len(said) != 1 || said[0] != holder.Process.Pid {
			t.Errorf("file holding %q: %v (holder %d), said %v; flock(1) is pid %d", stale, err, busy.Holder, said, holder.Process.Pid)
		}
		holder.Process.Kill()
		holder.Wait()
	}
}
