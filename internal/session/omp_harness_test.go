package session

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
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

// ompView is what scripts/context.ts prints for one file.
type ompView struct {
	File          string `json:"file"`
	Error         string `json:"error"`
	LeafID        string `json:"leafId"`
	Title         string `json:"title"`
	TitleSource   string `json:"titleSource"`
	Model         string `json:"model"`
	ThinkingLevel string `json:"thinkingLevel"`
	Messages      []any  `json:"messages"`
}

func ompContexts(t *testing.T, agentDir string, files ...string) map[string]ompView {
	t.Helper()
	var views []ompView
	if err := json.Unmarshal(runOmp(t, agentDir, "context.ts", files...), &views); err != nil {
		t.Fatal(err)
	}
	m := map[string]ompView{}
	for _, v := range views {
		m[v.File] = v
	}
	return m
}

// compareWithOmp opens file with xdev (windowed and full) and checks that
// the context, leaf, model, thinking level and title equal omp's.
func compareWithOmp(t *testing.T, file string, blobs *BlobStore, omp ompView) {
	t.Helper()
	if omp.Error != "" {
		t.Errorf("%s: omp refused the file: %s", file, omp.Error)
		return
	}
	for _, full := range []bool{false, true} {
		s, err := Open(file, &OpenOptions{Full: full, Blobs: blobs})
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		ctx := s.BuildContext()
		if ctx.MissingBlobs != 0 {
			t.Errorf("%s: %d image blobs did not resolve", file, ctx.MissingBlobs)
		}
		title, src := s.Title()
		wantSrc, _ := ParseTitleSource(omp.TitleSource)
		if ctx.LeafID != omp.LeafID || ctx.Model() != omp.Model || ctx.ThinkingLevel != omp.ThinkingLevel ||
			title != omp.Title || src != wantSrc {
			t.Errorf("%s (full=%v): xdev leaf %q model %q thinking %q title %q/%v; omp %q %q %q %q/%q", file, full,
				ctx.LeafID, ctx.Model(), ctx.ThinkingLevel, title, src,
				omp.LeafID, omp.Model, omp.ThinkingLevel, omp.Title, omp.TitleSource)
		}
		if len(ctx.Messages) != len(omp.Messages) {
			t.Errorf("%s (full=%v): xdev %d messages, omp %d", file, full, len(ctx.Messages), len(omp.Messages))
			continue
		}
		for i := range ctx.Messages {
			raw, _ := ctx.Messages[i].MarshalJSON()
			var got any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, omp.Messages[i]) {
				want, _ := json.Marshal(omp.Messages[i])
				t.Errorf("%s (full=%v): message %d differs\nxdev %s\nomp  %s", file, full, i, raw, want)
			}
		}
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
