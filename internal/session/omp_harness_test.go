package session

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/xdev/xdev/internal/jsonx"
)

// The real omp, installed from npm by interop/omp/install.sh.
const ompDir = "../../interop/omp"

// requireOmp returns the harness directory, installing omp when running in
// CI. Without an install, a developer's run skips with the command to run;
// CI never skips: a failed install fails the suite.
func requireOmp(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(ompDir)
	if err != nil {
		t.Fatal(err)
	}
	bun := filepath.Join(dir, "node_modules/@oven/bun-linux-x64/bin/bun")
	if _, err := os.Stat(bun); err == nil {
		return dir
	}
	if os.Getenv("CI") == "" {
		t.Skipf("omp interop: omp 18.2.3 is not installed; run %s/install.sh (needs npm access)", dir)
	}
	out, err := exec.Command(filepath.Join(dir, "install.sh")).CombinedOutput()
	if err != nil {
		t.Fatalf("omp interop: install failed in CI: %v\n%s", err, out)
	}
	return dir
}

// runOmp runs one of the harness's Bun scripts with omp's state in temp
// dirs (HOME and PI_CODING_AGENT_DIR), never a real ~/.omp.
func runOmp(t *testing.T, agentDir, script string, args ...string) []byte {
	t.Helper()
	dir := requireOmp(t)
	cmd := exec.Command(filepath.Join(dir, "run-bun.sh"), append([]string{"scripts/" + script}, args...)...)
	cmd.Env = append(os.Environ(), "OMP_TEST_HOME="+t.TempDir(), "PI_CODING_AGENT_DIR="+agentDir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("omp %s %v: %v\n%s", script, args, err, stderr.Bytes())
	}
	return out
}

// ompContexts runs omp's context.ts on files and returns its view of each,
// by path, values kept exactly as omp printed them.
func ompContexts(t *testing.T, agentDir string, files ...string) map[string]ompDiffView {
	t.Helper()
	all, err := jsonx.Parse(runOmp(t, agentDir, "context.ts", files...))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]ompDiffView{}
	for _, v := range all.Items() {
		m[v.Get("file").String()] = ompDiffViewOf(v)
	}
	return m
}

// compareWithOmp opens file with xdev (windowed and full) and checks that
// the context (every message byte for byte as JSON.stringify writes it),
// leaf, model, thinking level and title equal omp's, and that every image
// blob resolved.
func compareWithOmp(t *testing.T, file string, blobs *BlobStore, omp ompDiffView) {
	t.Helper()
	if omp.Error != "" {
		t.Errorf("%s: omp refused the file: %s", file, omp.Error)
		return
	}
	for _, d := range compareDiff(file, blobs, omp, &diffCase{}) {
		t.Errorf("%s: %s", file, d)
	}
	s, err := Open(file, &OpenOptions{Blobs: blobs})
	if err != nil {
		t.Fatal(err)
	}
	if n := s.BuildContext().MissingBlobs; n != 0 {
		t.Errorf("%s: %d image blobs did not resolve", file, n)
	}
}

// copyTree copies a directory, so tests never touch committed testdata.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}
