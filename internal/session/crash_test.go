package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/testscale"

	"github.com/xdev/xdev/internal/ai"
)

var kills = flag.Int("kills", 0, "SIGKILLs in TestCrashAppends (0: 60, or 200 with $XDEV_TEST_LONG; the documented long run: -kills 2000)")

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
// and reports each completed append on stdout. One entry in sixteen is
// 128 KB, so that some kills land in the middle of a write.
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
	fmt.Println("ready")
	for n := next; ; n++ {
		text := "entry " + strconv.Itoa(n)
		if r.IntN(16) == 0 {
			text += " " + strings.Repeat("x", 128<<10)
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
//
// A long run (-kills 2000) works in rounds of 200 kills on a fresh file
// each, so that no file grows past what one round writes.
func TestCrashAppends(t *testing.T) {
	n := *kills
	if n == 0 {
		n = testscale.N(60, 200)
	}
	for round := 0; round*200 < n; round++ {
		crashRun(t, min(200, n-round*200))
	}
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
	v := &lineCheck{off: int64(TitleSlotWidth + len(readLines(t, path)[1]) + 1)}
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
		acks, ready := make(chan int, 1), make(chan bool, 1)
		go func() {
			last := 0
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if sc.Text() == "ready" {
					ready <- true
				}
				if n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "ack ")); err == nil {
					last = n
				}
			}
			acks <- last
		}()
		// Kill at a random moment of the append loop (not of the start-up).
		select {
		case <-ready:
		case <-time.After(10 * time.Second):
			t.Fatalf("kill %d: the helper did not start:\n%s", k, stderr.String())
		}
		time.Sleep(time.Duration(r.IntN(6000)) * time.Microsecond)
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
		if k%10 == 9 {
			if start, ok := chopLastLine(t, path); ok {
				// A power cut mid-write, as an unsynced disk may show it: the
				// last entry is torn, acknowledged or not.
				chopped++
				lastAck--
				if start < v.off {
					v.off, v.entries = start, v.entries-1
				}
			}
		}
		fi, _ := os.Stat(path)
		lastSize = fi.Size()
		// What was appended since the last check: messages "entry N", N
		// going on from the last one, or lines torn by a kill or by us.
		v.check(t, k, path)
		if v.malformed > chopped+torn {
			t.Fatalf("kill %d: %d malformed lines, but only %d tails were torn", k, v.malformed, chopped+torn)
		}
		if v.entries < lastAck || v.entries > lastAck+1 {
			t.Fatalf("kill %d: %d entries on disk, %d acknowledged", k, v.entries, lastAck)
		}
		lastAck = v.entries
		if k%50 == 49 || k == kills-1 {
			// Both loads agree with the line-by-line check.
			st, err := Open(path, &OpenOptions{Full: true})
			tornNow := 0
			if st != nil && st.TornTail() {
				tornNow = 1 // Open counts the torn tail; the check waits for its newline
			}
			if err != nil || len(st.Entries()) != v.entries || st.Malformed() != v.malformed+tornNow {
				t.Fatalf("kill %d: full open: %v, %d entries, %d malformed; checked %d and %d", k, err, len(st.Entries()), st.Malformed(), v.entries, v.malformed)
			}
			if w, err := Open(path, nil); err != nil || w.LeafID() != st.LeafID() {
				t.Fatalf("kill %d: windowed open: %v", k, err)
			}
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

// lineCheck reads a crash-test session incrementally: every complete line
// after off must be the next "entry N" message or a malformed line.
type lineCheck struct {
	off                int64 // end of the last complete line checked
	entries, malformed int
}

func (c *lineCheck) check(t *testing.T, k int, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.NewSectionReader(f, c.off, 1<<40))
	if err != nil {
		t.Fatal(err)
	}
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return // a torn tail, checked once a newline ends it
		}
		line := data[:i]
		data = data[i+1:]
		c.off += int64(i + 1)
		var e struct {
			Type    string
			Message struct{ Content string }
		}
		if json.Unmarshal(line, &e) != nil {
			c.malformed++
			continue
		}
		if f := strings.Fields(e.Message.Content); e.Type != "message" || len(f) < 2 || f[1] != strconv.Itoa(c.entries+1) {
			t.Fatalf("kill %d: entry %d is %.60q", k, c.entries+1, line)
		}
		c.entries++
	}
}

// chopLastLine cuts the file's last entry in half, as a crash of the
// machine might leave it, and returns where that line starts. It reports
// false when there was nothing to cut.
func chopLastLine(t *testing.T, path string) (int64, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	end := len(b) - 1 // the last newline
	if end < 0 || b[end] != '\n' {
		return 0, false // already torn
	}
	start := bytes.LastIndexByte(b[:end], '\n') + 1
	if start < TitleSlotWidth+len(testHeader) || end-start < 20 || !bytes.Contains(b[start:end], []byte(`"type":"message"`)) {
		return 0, false
	}
	if err := os.Truncate(path, int64(start+(end-start)/2)); err != nil {
		t.Fatal(err)
	}
	return int64(start), true
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
