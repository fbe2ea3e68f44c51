package session

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/ai"
)

var kills = flag.Int("kills", 200, "SIGKILLs in TestCrashAppends (the documented long run: -kills 2000)")

// The helper processes: this test binary, run again with one of these set.
const (
	crashHelperEnv  = "XDEV_CRASH_HELPER"  // append numbered entries until killed
	writerHelperEnv = "XDEV_WRITER_HELPER" // append N tagged entries, then exit
)

// TestHelperProcess is not a test: it is the body of the helper processes
// the crash and concurrency tests start.
func TestHelperProcess(t *testing.T) {
	switch {
	case os.Getenv(crashHelperEnv) != "":
		crashHelper(os.Getenv(crashHelperEnv))
	case os.Getenv(writerHelperEnv) != "":
		writerHelper(os.Getenv(writerHelperEnv))
	default:
		t.Skip("helper process for TestCrashAppends and TestMultiProcessAppends")
	}
	os.Exit(0)
}

// crashHelper appends "entry N" messages, continuing the file's numbering,
// and reports each completed append on stdout. One entry in eight is
// 512 KB, so that some kills land in the middle of a write.
func crashHelper(path string) {
	s, err := Open(path, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	next := 1
	if m := lastMessage(s); m != nil {
		n, _ := strconv.Atoi(strings.Fields(m.Text())[1])
		next = n + 1
	}
	r := rand.New(rand.NewPCG(uint64(os.Getpid()), 1))
	for n := next; ; n++ {
		text := "entry " + strconv.Itoa(n)
		if r.IntN(8) == 0 {
			text += " " + strings.Repeat("x", 512<<10)
		}
		if _, err := s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent(text), Timestamp: int64(n)}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Printf("ack %d\n", n)
	}
}

func lastMessage(s *Store) *ai.Message {
	es := s.Entries()
	for i := len(es) - 1; i >= 0; i-- {
		if m := es[i].Message(); m != nil {
			return m
		}
	}
	return nil
}

// writerHelper appends the entries "<tag> 0" .. "<tag> N-1", each as one
// append, as another process writing the same session would.
func writerHelper(spec string) {
	path, rest, _ := strings.Cut(spec, "|")
	tag, nText, _ := strings.Cut(rest, "|")
	n, _ := strconv.Atoi(nText)
	s, err := Open(path, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	for i := range n {
		if _, err := s.Append(&Custom{CustomType: "w", Data: []byte(`{"tag":"` + tag + `","i":` + strconv.Itoa(i) + `}`)}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
	}
	s.Close()
}

func helper(t *testing.T, env string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), env)
	return cmd
}

// TestCrashAppends kills a process that appends in a loop with SIGKILL at
// random moments, 200 times (-kills N for more). After every kill the file
// opens, holds every acknowledged entry in order, and loses at most the one
// being written; the next process appends after whatever torn tail the
// kill left, and the file stays valid. TestInteropCrash runs omp over the
// result.
func TestCrashAppends(t *testing.T) {
	path := crashRun(t, *kills)
	t.Logf("final file: %s", path)
}

// crashRun does the kills and returns the session file.
func crashRun(t *testing.T, kills int) string {
	if testing.Short() {
		kills = min(kills, 20)
	}
	s, path := newSession(t)
	s.Close()
	r := rand.New(rand.NewPCG(7, 7))
	torn, chopped, lastAck := 0, 0, 0
	var lastSize int64
	for k := range kills {
		cmd := helper(t, crashHelperEnv+"="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		acks := make(chan int, 1)
		go func() {
			last := 0
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "ack ")); err == nil {
					last = n
				}
			}
			acks <- last
		}()
		time.Sleep(time.Duration(5000+r.IntN(40000)) * time.Microsecond)
		cmd.Process.Signal(syscall.SIGKILL)
		err = cmd.Wait() // reaped: its lockfile is now stale
		if ack := <-acks; ack > 0 {
			lastAck = ack
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("kill %d: the helper exited by itself: %v\n%s", k, err, stderr.String())
		}
		if fi, _ := os.Stat(path); fi.Size() != lastSize && endsTorn(t, path) {
			torn++ // the kill landed mid-write
		}
		if k%10 == 9 && chopLastLine(t, path) {
			// A power cut mid-write, as an unsynced disk may show it: the
			// last entry is torn, acknowledged or not.
			chopped++
			lastAck--
		}
		st, err := Open(path, &OpenOptions{Full: true})
		if err != nil {
			t.Fatalf("kill %d: %v", k, err)
		}
		fi, _ := os.Stat(path)
		lastSize = fi.Size()
		if st.Malformed() > chopped+torn {
			t.Fatalf("kill %d: %d malformed lines, but only %d tails were torn", k, st.Malformed(), chopped+torn)
		}
		// Every message is "entry N", N = 1, 2, ... with none missing.
		n := 0
		for _, e := range st.Entries() {
			m := e.Message()
			if m == nil {
				t.Fatalf("kill %d: a non-message entry %s", k, e.Raw())
			}
			n++
			if f := strings.Fields(m.Text()); len(f) < 2 || f[1] != strconv.Itoa(n) {
				t.Fatalf("kill %d: message %d is %.40q", k, n, m.Text())
			}
		}
		if n < lastAck || n > lastAck+1 {
			t.Fatalf("kill %d: %d entries on disk, %d acknowledged", k, n, lastAck)
		}
		lastAck = n
		// The windowed load agrees.
		w, err := Open(path, nil)
		if err != nil || w.LeafID() != st.LeafID() {
			t.Fatalf("kill %d: windowed open: %v", k, err)
		}
	}
	st, _ := Open(path, &OpenOptions{Full: true})
	fi, _ := os.Stat(path)
	t.Logf("%d kills: %d entries; tails torn by a kill mid-write: %d, cut by the test: %d; %d malformed lines (torn tails later ended by a newline); %d MB",
		kills, len(st.Entries()), torn, chopped, st.Malformed(), fi.Size()>>20)
	if st.Malformed() != chopped+torn {
		t.Errorf("%d malformed lines, want one for each of the %d torn tails", st.Malformed(), chopped+torn)
	}
	return path
}

// TestMultiProcessAppends: four processes and eight goroutines append to
// one session at once while it is retitled over and over: every entry
// arrives whole, none interleaved, and the slot stays a valid slot.
func TestMultiProcessAppends(t *testing.T) {
	s, path := newSession(t)
	const procs, perProc = 4, 150
	var cmds []*exec.Cmd
	stderrs := make([]strings.Builder, procs)
	for p := range procs {
		cmd := helper(t, fmt.Sprintf("%s=%s|p%d|%d", writerHelperEnv, path, p, perProc))
		cmd.Stderr = &stderrs[p]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				if _, err := s.Append(&Custom{CustomType: "w", Data: []byte(`{"tag":"g` + itoa(g) + `","i":` + itoa(i) + `}`)}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 40 {
			if _, err := s.SetTitle("title "+itoa(i), TitleManual); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
	for p, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("writer %d: %v\n%s", p, err, stderrs[p].String())
		}
	}
	r, err := Open(path, &OpenOptions{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range r.Entries() {
		if c, ok := e.Body.(*Custom); ok {
			seen[string(c.Data)] = true
		}
	}
	if want := procs*perProc + 8*25; len(seen) != want || r.Malformed() != 0 {
		t.Errorf("%d distinct entries, want %d; %d malformed lines", len(seen), want, r.Malformed())
	}
	if slot, ok := r.Slot(); !ok || !slot.OmpAccepts || slot.Title != "title 39" {
		t.Errorf("slot = %+v", slot)
	}
	if b, _ := firstLine(path); len(b) != TitleSlotWidth {
		t.Errorf("slot is %d bytes", len(b))
	}
}



// chopLastLine cuts the file's last entry in half, as a crash of the
// machine might leave it. It reports false when there was nothing to cut.
func chopLastLine(t *testing.T, path string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	end := len(b) - 1 // the last newline
	if end < 0 || b[end] != '\n' {
		return false // already torn
	}
	start := strings.LastIndexByte(string(b[:end]), '\n') + 1
	if start < TitleSlotWidth+len(testHeader) || end-start < 20 || !strings.Contains(string(b[start:end]), `"type":"message"`) {
		return false
	}
	if err := os.Truncate(path, int64(start+(end-start)/2)); err != nil {
		t.Fatal(err)
	}
	return true
}

func endsTorn(t *testing.T, path string) bool {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	var last [1]byte
	f.ReadAt(last[:], fi.Size()-1)
	return last[0] != '\n'
}
