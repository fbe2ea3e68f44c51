package export

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/session"
)

// corpus returns omp's sample sessions, copied with their blob store.
func corpus(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../session/testdata/omp")); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "sessions", "-proj", "*.jsonl"))
	if len(files) < 8 {
		t.Fatalf("corpus: %v", files)
	}
	return files
}

func build(t *testing.T, path string) Doc {
	t.Helper()
	s, err := session.Open(path, &session.OpenOptions{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	return Build(s)
}

func TestMarkdownHasEveryEntry(t *testing.T) {
	for _, f := range corpus(t) {
		d := build(t, f)
		var b bytes.Buffer
		if err := Markdown(&b, d); err != nil {
			t.Fatal(err)
		}
		for _, it := range d.Items {
			if it.heading() != "" && !strings.Contains(b.String(), it.ID) {
				t.Errorf("%s: entry %s (%s) missing from the Markdown", filepath.Base(f), it.ID, it.Kind)
			}
		}
	}
}

func TestFence(t *testing.T) {
	for in, want := range map[string]string{"": "```", "a ``` b": "````", "`````": "``````"} {
		if got := fence(in); got != want {
			t.Errorf("fence(%q) = %q, want %q", in, got, want)
		}
	}
}

// chromium returns Debian's chromium, which CI installs; a developer
// without it gets a skip.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed (CI installs Debian's chromium package)")
	}
	t.Skip("chromium not installed: apt-get install chromium")
	return ""
}

// TestHTMLInChromium renders every exported page in headless Chromium: it
// loads, every entry is in the DOM, images render from data: URIs, and the
// console stays silent (the page's CSP would log any attempted fetch).
func TestHTMLInChromium(t *testing.T) {
	bin := chromium(t)
	out := t.TempDir()
	for _, f := range corpus(t) {
		d := build(t, f)
		page := filepath.Join(out, strings.TrimSuffix(filepath.Base(f), ".jsonl")+".html")
		var b bytes.Buffer
		if err := HTML(&b, d); err != nil {
			t.Fatal(err)
		}
		if regexp.MustCompile(`(?i)(src|href)="(https?:)?//`).Match(b.Bytes()) {
			t.Errorf("%s: the page links to the network", page)
		}
		os.WriteFile(page, b.Bytes(), 0o600)
		cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
			"--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0",
			"--virtual-time-budget=2000", "--dump-dom", "file://"+page)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium on %s: %v\n%s", page, err, stderr.Bytes())
		}
		dom := stdout.String()
		if !strings.Contains(dom, "<main>") {
			t.Fatalf("%s: no DOM:\n%s", page, stderr.Bytes())
		}
		for _, it := range d.Items {
			if !strings.Contains(dom, `id="e-`+it.ID+`"`) {
				t.Errorf("%s: entry %s (%s) is not in the rendered page", page, it.ID, it.Kind)
			}
		}
		want := 0
		for _, it := range d.Items {
			for _, img := range it.Images {
				if imgSrc(img) != "" {
					want++
				}
			}
		}
		if got := strings.Count(dom, `<img alt="image" src="data:`); got != want {
			t.Errorf("%s: %d images rendered, want %d", page, got, want)
		}
		for _, line := range strings.Split(stderr.String(), "\n") {
			if strings.Contains(line, "CONSOLE") || strings.Contains(line, "Refused to") {
				t.Errorf("%s: console: %s", page, line)
			}
		}
	}
}
