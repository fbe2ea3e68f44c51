package session

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/ai"
)

// TestPermissions: whatever the umask, every file the store creates is
// 0600 and every directory 0700: transcripts and images hold secrets.
func TestPermissions(t *testing.T) {
	for _, mask := range []int{0o000, 0o022, 0o077} {
		old := syscallUmask(mask)
		data := t.TempDir()
		proj := filepath.Join(SessionsDir(data), "-proj")
		s, err := Create(filepath.Join(proj, "a.jsonl"), NewOptions{Cwd: "/proj", Blobs: NewBlobStore(BlobsDir(data))})
		if err != nil {
			t.Fatal(err)
		}
		big := strings.Repeat("QUJD", 400)
		mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.BlockContent(ai.Image(big, "image/png")), Timestamp: 1}))
		mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleAssistant, Content: ai.BlockContent(ai.Text("ok")), StopReason: ai.StopEnd, Timestamp: 2}))
		mustOK(t)(s.SetTitle("t", TitleManual))
		s.Close()
		fork, err := ForkSession(s.Path(), "", "")
		if err != nil {
			t.Fatal(err)
		}
		branch, err := ForkBranch(s.Path(), "", s.LeafID())
		if err != nil {
			t.Fatal(err)
		}
		sub, err := CreateSubagent(fork.Path(), "Scout", &SessionInit{}, NewOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fork.Close()
		branch.Close()
		sub.Close()
		noSlot := writeFile(t, proj, "noslot.jsonl", testHeader+testUser("00000001", "", "x")+"{torn")
		os.Chmod(noSlot, 0o600)
		ns, _ := Open(noSlot, nil)
		mustOK(t)(ns.SetTitle("rewritten", TitleManual)) // the atomic rewrite path
		// Closed, so that its lock lingers no more: the timer that lets it
		// go had removed the lockfile during the walk below.
		ns.Close()
		if _, err := Repair(noSlot, ""); err != nil {
			t.Fatal(err)
		}
		syscallUmask(old)
		n := 0
		filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == data {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				t.Errorf("umask %03o: %s: %v", mask, strings.TrimPrefix(p, data), err)
				return nil
			}
			want := os.FileMode(0o600)
			if d.IsDir() {
				want = 0o700
			}
			if fi.Mode().Perm() != want {
				t.Errorf("umask %03o: %s is %v, want %v", mask, strings.TrimPrefix(p, data), fi.Mode().Perm(), want)
			}
			n++
			return nil
		})
		if n < 10 {
			t.Errorf("only %d paths checked", n)
		}
	}
}
