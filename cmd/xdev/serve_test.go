package main

import (
	"bufio"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeCommand runs `xdev serve` as a process on the bundled
// samples: it prints a URL with its token, the URL opens the sessions
// list (the token becomes a cookie), `xdev search` from another process
// answers the same while it runs, and an interrupt stops it with exit 0,
// leaving no live marker behind.
func TestServeCommand(t *testing.T) {
	corpus, _ := filepath.Abs("../../internal/session/testdata/omp")
	root := t.TempDir()
	data := filepath.Join(root, "agent")
	if err := os.CopyFS(data, os.DirFS(corpus)); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(root, "cache")
	env := []string{"HOME=" + filepath.Join(root, "home"), "XDG_CACHE_HOME=" + cache, "XDEV_DATA_DIR=" + data, "XDEV_FORCE_TTY=0"}

	search := func() string {
		t.Helper()
		out, err := xdevCommand(t, env, "search", "-l", "the").Output()
		if err != nil {
			t.Fatalf("xdev search: %v", err)
		}
		return string(out)
	}
	without := search()

	cmd := xdevCommand(t, env, "serve", "--addr", "127.0.0.1:0")
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL: %v\n%s", err, stderr.String())
	}
	url := strings.TrimSpace(line)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(url, "/?token=") {
		t.Fatalf("printed %q", url)
	}
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	base := url[:strings.Index(url, "/?token=")]
	if resp, err := http.Get(base + "/"); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("without the token: %v %v", resp, err)
	}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `<table class="sessions">`) {
		t.Fatalf("%d: %.300s", resp.StatusCode, body)
	}
	// The server indexes in the background; once its marker is there the
	// search answers from its index, and the same.
	deadline := time.Now().Add(30 * time.Second)
	for {
		m, _ := filepath.Glob(filepath.Join(cache, "xdev", "search", "*.live"))
		if len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no live marker in 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if with := search(); with != without {
		t.Errorf("search with serve running:\n%s\nwithout:\n%s", with, without)
	}
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after an interrupt: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop within 10 s of an interrupt")
	}
	if m, _ := filepath.Glob(filepath.Join(cache, "xdev", "search", "*.live")); len(m) != 0 {
		t.Errorf("markers left: %v", m)
	}
}
