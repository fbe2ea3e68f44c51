package regularfile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestReadFile: a file of any size reads back whole, to its last byte,
// with no bound or within one; past its bound it is an error.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 511, 512, 513, 4096, 1 << 20, 5<<20 + 3} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i * 7)
		}
		path := filepath.Join(dir, fmt.Sprint(size))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, max := range []int64{0, int64(size), int64(size) + 1, int64(size) - 1} {
			got, err := ReadFile(path, max)
			switch {
			case max > 0 && int64(size) > max:
				if err == nil {
					t.Errorf("%d bytes, max %d: no error", size, max)
				}
			case err != nil || !bytes.Equal(got, data):
				t.Errorf("%d bytes, max %d: %d bytes read, %v", size, max, len(got), err)
			}
		}
	}
}
