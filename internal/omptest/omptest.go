// Package omptest runs the real omp 18.2.3 (from npm, on Bun) for tests:
// the interop harness in interop/omp, with omp's state kept in temp dirs.
package omptest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Dir returns the harness directory, interop/omp of the module the test
// runs in, found from the test's working directory.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "interop", "omp")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("omptest: no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Require returns the harness directory, installing omp when running in
// CI. Without an install, a developer's run skips with the command to run;
// CI never skips: a failed install fails the suite.
func Require(t testing.TB) string {
	t.Helper()
	dir := Dir(t)
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

// Run runs one of the harness's Bun scripts (interop/omp/scripts) with
// omp's state in temp dirs (HOME, and PI_CODING_AGENT_DIR = agentDir),
// never a real ~/.omp, and returns its standard output.
func Run(t testing.TB, agentDir, script string, args ...string) []byte {
	t.Helper()
	dir := Require(t)
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

// Ccusage returns the path of ccusage 20.0.24's native binary
// (@ccusage/ccusage-linux-x64, installed beside omp by install.sh), as
// Require does: installed in CI, skipped with the command to run
// elsewhere.
func Ccusage(t testing.TB) string {
	t.Helper()
	dir := Dir(t)
	bin := filepath.Join(dir, "node_modules/@ccusage/ccusage-linux-x64/bin/ccusage")
	if fi, err := os.Stat(bin); err == nil && fi.Mode()&0o111 != 0 {
		return bin
	}
	if os.Getenv("CI") == "" {
		t.Skipf("ccusage 20.0.24 is not installed; run %s/install.sh (needs npm access)", dir)
	}
	if out, err := exec.Command(filepath.Join(dir, "install.sh")).CombinedOutput(); err != nil {
		t.Fatalf("ccusage: install failed in CI: %v\n%s", err, out)
	}
	return bin
}

// RunCcusage runs ccusage with args and env (its harness dirs), HOME in a
// temp dir so that it reads nothing of the machine's, and returns its
// standard output.
func RunCcusage(t testing.TB, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(Ccusage(t), args...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ccusage %v: %v\n%s", args, err, stderr.Bytes())
	}
	return out
}
