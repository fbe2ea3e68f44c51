package jsonx_test

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/realfixtures"
)

// realLines is every line of the real fixtures' JSON Lines transcripts:
// what a scan of a user's sessions validates, escapes and all.
func realLines(b *testing.B) [][]byte {
	dir := realfixtures.Dir(b)
	var lines [][]byte
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			lines = append(lines, bytes.Clone(sc.Bytes()))
		}
		return nil
	})
	return lines
}

// BenchmarkValidReal is Valid over every line of the real transcripts, in
// bytes a second: a usage scan validates each line it does not decode.
func BenchmarkValidReal(b *testing.B) {
	lines := realLines(b)
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	b.SetBytes(int64(n))
	b.ResetTimer()
	for b.Loop() {
		for _, l := range lines {
			jsonx.Valid(l)
		}
	}
}
