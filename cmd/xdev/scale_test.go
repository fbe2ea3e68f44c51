package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/testscale"
)

// The memory bounds docs/performance.md ("The ceiling") states, which
// TestSearchEverywhereMatchesRg checks on its small home: every CLI
// command, and serve and mcp. The test binary runs as xdev, so its own
// packages (the tests' oracles among them) count against the bound too.
const (
	cliRSSBound    = 64 << 10  // KiB
	serverRSSBound = 100 << 10 // KiB
)

// TestSearchEverywhereMatchesRg: on a generated home of omp, Claude Code
// and Codex sessions of real shapes (corpus.WriteHome), for words of the
// vocabulary from the most common to rare, every way to search finds
// exactly the sessions `rg -l -F` finds in the files: `search -l
// --thinking` with and without serve running, serve's search page (for
// the words whose hits fit on it) and mcp's search_sessions (for those
// whose hits fit in a page of 100). Without --thinking a search finds a
// subset: the words also in the model's thinking alone drop out. And no
// process goes over its memory bound, read from the kernel: a command's
// peak RSS (through the launcher, rssLauncherEnv), the server's and mcp's
// VmHWM while they run (not under the race detector, whose shadow
// memory multiplies it). The processes are xdev as users build it
// (productBinary).
func TestSearchEverywhereMatchesRg(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("rg is not installed (CI installs Debian's ripgrep)")
		}
		t.Skip("rg is not installed")
	}
	root := t.TempDir()
	home := filepath.Join(root, "home")
	opts := corpus.HomeOptions{Sessions: 60, Bytes: 12 << 20, Seed: 11, Projects: 9}
	if testscale.Long() && !raceEnabled {
		// Not under the race detector, which would take minutes over it:
		// the race run checks the small home, .ci/run this one alone.
		opts = corpus.HomeOptions{Sessions: 400, Bytes: 120 << 20, Seed: 11, Projects: 30}
	}
	if _, err := corpus.WriteHome(home, opts); err != nil {
		t.Fatal(err)
	}
	dirs := []string{filepath.Join(home, ".omp", "agent", "sessions"), filepath.Join(home, ".claude", "projects"), filepath.Join(home, ".codex", "sessions")}
	env := []string{"HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(root, "cache"), "XDEV_DATA_DIR=" + filepath.Join(root, "agent"), "XDEV_FORCE_TTY=0"}
	for _, name := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "XDEV_PROJECTS"} {
		env = append(env, name+"=") // the home's, not the machine's
	}
	var words []string
	for _, k := range []int{0, 3, 30, 300, 1000, 3000, 10000, 30000} {
		words = append(words, corpus.Vocabulary(k))
	}
	found := map[string][]string{}
	for _, w := range words {
		out, err := exec.Command(rg, append([]string{"-l", "-F", w}, dirs...)...).Output()
		if err != nil && len(out) > 0 {
			t.Fatalf("rg %s: %v", w, err)
		}
		found[w] = lines(string(out))
	}
	t.Logf("sessions holding each word (rg): %v", counts(words, found))

	bin := productBinary(t)
	var cliPeak int64
	search := func(label, w string, thinking bool) []string {
		t.Helper()
		args := []string{"search", "-l", w}
		if thinking {
			args = append(args, "--thinking")
		}
		out, rss := runMeasured(t, bin, env, args...)
		cliPeak = max(cliPeak, rss)
		if rss > cliRSSBound && !raceEnabled {
			t.Errorf("%s: xdev %s: peak RSS %d KiB, bound %d", label, strings.Join(args, " "), rss, cliRSSBound)
		}
		return lines(out)
	}
	for _, w := range words {
		if got := search("without serve", w, true); !slices.Equal(got, found[w]) {
			t.Errorf("without serve, %s: %s", w, setDiff(got, found[w]))
		}
		if got := search("without serve", w, false); !isSubset(got, found[w]) {
			t.Errorf("without serve or thinking, %s: sessions rg does not find: %s", w, setDiff(got, found[w]))
		}
	}
	_, rss := runMeasured(t, bin, env, "list", "--all", "--json")
	if rss > cliRSSBound && !raceEnabled {
		t.Errorf("xdev list --all --json: peak RSS %d KiB, bound %d", rss, cliRSSBound)
	}

	srv := startServe(t, bin, env)
	for _, w := range words {
		if got := search("serve running", w, true); !slices.Equal(got, found[w]) {
			t.Errorf("serve running, %s: %s", w, setDiff(got, found[w]))
		}
		if len(found[w]) > 0 && len(found[w]) <= 8 {
			if keys := srv.searchPage(t, w); len(keys) != len(found[w]) {
				t.Errorf("serve's page for %s shows %d sessions, rg finds %d", w, len(keys), len(found[w]))
			}
		}
	}
	if hwm := vmHWM(t, srv.cmd.Process.Pid); hwm > serverRSSBound && !raceEnabled {
		t.Errorf("serve: VmHWM %d KiB, bound %d", hwm, serverRSSBound)
	} else {
		t.Logf("peak RSS: commands %d KiB, serve %d KiB", cliPeak, hwm)
	}
	srv.stop(t)

	m := startMCP(t, bin, env)
	for _, w := range words {
		if len(found[w]) > 30 {
			continue // pages and pages of hits
		}
		if got := m.searchPaths(t, w); !slices.Equal(got, found[w]) {
			t.Errorf("mcp search_sessions %s: %s", w, setDiff(got, found[w]))
		}
	}
	if hwm := vmHWM(t, m.cmd.Process.Pid); hwm > serverRSSBound && !raceEnabled {
		t.Errorf("mcp: VmHWM %d KiB, bound %d", hwm, serverRSSBound)
	} else {
		t.Logf("peak RSS: mcp %d KiB", hwm)
	}
	m.stop()
}

// productBinary is the path of xdev built as `go install` builds it,
// where the memory bounds are measured: the test binary that runs as xdev
// elsewhere (xdevCommand) also holds the tests and their oracles, 5 MiB
// more of code, much of it paged in by the time a first index is done.
// Under the race detector, where no bound is checked, it is the test
// binary.
func productBinary(t *testing.T) string {
	t.Helper()
	if raceEnabled {
		return xdevCommand(t, nil).Path
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "xdev")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as the README installs it
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// binCommand is the command that runs the xdev at bin with args, in this
// process's environment and env.
func binCommand(bin string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// runMeasured runs xdev with args through the launcher and returns its
// output and peak RSS in KiB; a non-zero exit fails the test.
func runMeasured(t *testing.T, bin string, env []string, args ...string) (string, int64) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	// The shell puts the output in a file (the launcher discards it) and
	// unsets the launcher's variable, which would make the test binary
	// that runs as xdev a launcher too.
	cmd := exec.Command(os.Args[0], append([]string{"sh", "-c", "unset " + rssLauncherEnv + `; exec "$0" "$@" >` + out, bin}, args...)...)
	cmd.Env = append(append(os.Environ(), env...), rssLauncherEnv+"=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("xdev %v: %v\n%s", args, err, stderr.String())
	}
	var rss, code int64
	if _, err := fmt.Sscan(stdout.String(), &rss, &code); err != nil || code != 0 {
		t.Fatalf("xdev %v: exit %d (%q, %v)\n%s", args, code, stdout.String(), err, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), rss
}

// served is an `xdev serve` process and a client holding its token.
type served struct {
	cmd    *exec.Cmd
	base   string
	client *http.Client
}

func startServe(t *testing.T, bin string, env []string) *served {
	t.Helper()
	cmd := binCommand(bin, env, "serve", "--addr", "127.0.0.1:0")
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL: %v\n%s", err, stderr.String())
	}
	url := strings.TrimSpace(line)
	jar, _ := cookiejar.New(nil)
	s := &served{cmd: cmd, base: url[:strings.Index(url, "/?token=")], client: &http.Client{Jar: jar, Timeout: time.Minute}}
	if _, err := s.get(url); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		body, err := s.get(s.base + "/api/status")
		if err == nil && regexp.MustCompile(`"ready":true.*"usage":true`).MatchString(body) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve not ready: %s %v\n%s", body, err, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *served) get(url string) (string, error) {
	resp, err := s.client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("%s: %s", url, resp.Status)
	}
	return string(b), err
}

// searchPage returns the sessions serve's search page links for w (with
// thinking), having checked that each link's page holds w.
func (s *served) searchPage(t *testing.T, w string) []string {
	t.Helper()
	body, err := s.get(s.base + "/search?thinking=1&q=" + w)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, m := range regexp.MustCompile(`href="(/s/[0-9a-f]+)(\?at=[^"#]*)?`).FindAllStringSubmatch(body, -1) {
		if slices.Contains(keys, m[1]) {
			continue
		}
		keys = append(keys, m[1])
		page, err := s.get(s.base + m[1] + strings.ReplaceAll(m[2], "&amp;", "&"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(page, w) {
			t.Errorf("%s is linked from the search for %s but does not show it", m[1], w)
		}
	}
	return keys
}

func (s *served) stop(t *testing.T) {
	s.cmd.Process.Signal(os.Interrupt)
	s.cmd.Wait()
}

// mcpProcess is an `xdev mcp` process spoken to on its stdin and stdout.
type mcpProcess struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func startMCP(t *testing.T, bin string, env []string) *mcpProcess {
	t.Helper()
	cmd := binCommand(bin, env, "mcp")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	m := &mcpProcess{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	m.call(t, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}`)
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return m
}

// call sends one request and returns its result.
func (m *mcpProcess) call(t *testing.T, method, params string) json.RawMessage {
	t.Helper()
	m.id++
	fmt.Fprintf(m.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", m.id, method, params)
	for {
		line, err := m.out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("mcp %s: %v", method, err)
		}
		var r struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &r) != nil || r.ID != m.id {
			continue
		}
		if r.Error != nil {
			t.Fatalf("mcp %s: %s", method, r.Error)
		}
		return r.Result
	}
}

// searchPaths returns the sessions search_sessions finds holding w
// (with thinking), page after page.
func (m *mcpProcess) searchPaths(t *testing.T, w string) []string {
	t.Helper()
	var paths []string
	cursor := ""
	for range 100 {
		res := m.call(t, "tools/call", `{"name":"search_sessions","arguments":{"query":"`+w+`","thinking":true,"limit":100,"max_tokens":20000,"cursor":"`+cursor+`"}}`)
		var r struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Hits []struct {
					Path string `json:"path"`
				} `json:"hits"`
				Indexing []string `json:"indexing"`
				Budget   struct {
					NextCursor string `json:"next_cursor"`
				} `json:"budget"`
			} `json:"structuredContent"`
		}
		if err := json.Unmarshal(res, &r); err != nil || r.IsError {
			t.Fatalf("search_sessions %s: %v %s", w, err, res)
		}
		if len(r.StructuredContent.Indexing) > 0 {
			t.Fatalf("search_sessions %s: still indexing %v", w, r.StructuredContent.Indexing)
		}
		for _, h := range r.StructuredContent.Hits {
			if !slices.Contains(paths, h.Path) {
				paths = append(paths, h.Path)
			}
		}
		if cursor = r.StructuredContent.Budget.NextCursor; cursor == "" {
			break
		}
	}
	slices.Sort(paths)
	return paths
}

func (m *mcpProcess) stop() {
	m.in.Close()
	m.cmd.Wait()
}

// vmHWM is a running process's peak RSS in KiB.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`VmHWM:\s*(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no VmHWM in /proc/%d/status", pid)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}

// lines returns the non-empty lines of s, sorted.
func lines(s string) []string {
	var out []string
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

func counts(words []string, found map[string][]string) string {
	var b strings.Builder
	for _, w := range words {
		fmt.Fprintf(&b, "%s %d; ", w, len(found[w]))
	}
	return b.String()
}

func isSubset(a, b []string) bool {
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			return false
		}
	}
	return true
}

// setDiff says what got has that want lacks, and the reverse.
func setDiff(got, want []string) string {
	var extra, missing []string
	for _, x := range got {
		if _, ok := slices.BinarySearch(want, x); !ok {
			extra = append(extra, x)
		}
	}
	for _, x := range want {
		if _, ok := slices.BinarySearch(got, x); !ok {
			missing = append(missing, x)
		}
	}
	return fmt.Sprintf("%d found, rg %d; found only by xdev %v; only by rg %v", len(got), len(want), extra, missing)
}
