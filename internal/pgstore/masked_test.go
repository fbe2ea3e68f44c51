package pgstore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/pgtest"
	"github.com/xdev/xdev/internal/secrets/secretstest"
	"github.com/xdev/xdev/internal/session"
)

// TestPushMasks: a push stores every planted secret masked, in sessions
// of every shape a line can take (a title slot, CRLF, a byte-order mark,
// a line that is not JSON, escapes), and says so per revision; what is
// read back with psql holds none of them, and every stored session is
// its file masked line by line, JSON where the file's line was. Appends
// mask only the new lines; a pull gives the masked session, and finds the
// file it was pushed from up to date; a pulled copy pushed from another
// machine is the same session; --raw stores the bytes as a new revision,
// and a masked push after it another.
func TestPushMasks(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDB(t)
	db, err := Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	all := secretstest.Secrets(t, 60)
	first, later := all[:40], all[40:]
	a := t.TempDir()
	files := plantShapes(t, a, first)
	var planted []string
	for _, s := range first {
		for _, f := range files {
			if b, _ := os.ReadFile(f); bytes.Contains(b, []byte(s)) {
				planted = append(planted, s)
				break
			}
		}
	}
	if len(planted) < 10 {
		t.Fatalf("%d secrets planted", len(planted))
	}

	st, err := db.Push(ctx, a, PushOptions{Origin: "a"})
	if err != nil || len(st.Failed) > 0 {
		t.Fatalf("push: %v %v", err, st.Failed)
	}
	if st.New != len(files) || st.Masked < len(planted) {
		t.Errorf("push: %+v, want %d new and at least %d masked", st, len(files), len(planted))
	}
	readBack := func(what string, secrets []string) {
		t.Helper()
		rows := pgtest.Psql(t, url, `SELECT convert_from(l.line, 'UTF8') FROM xdev.lines l JOIN xdev.sessions s ON s.key = l.session WHERE s.current ORDER BY l.session, l.off`)
		secretstest.Check(t, what+": psql's rows", rows, secrets)
		titles := pgtest.Psql(t, url, `SELECT title FROM xdev.sessions WHERE current`)
		secretstest.Check(t, what+": psql's titles", titles, secrets)
		if n := strings.TrimSpace(pgtest.Psql(t, url, `SELECT count(*) FROM xdev.sessions WHERE current AND NOT masked`)); n != "0" {
			t.Errorf("%s: %s current revisions not marked masked", what, n)
		}
	}
	readBack("first push", planted)
	storedIsMasked := func(what, dataDir string) {
		t.Helper()
		for rel, b := range sessionFiles(t, dataDir) {
			want, _, err := maskedBytes(rel, b)
			if err != nil {
				t.Fatal(err)
			}
			s, err := db.Find(ctx, rel)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := db.WriteSession(ctx, s, &got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s: %s: stored %d bytes, not its file masked (%d)", what, rel, got.Len(), len(want))
				continue
			}
			if !s.Masked {
				t.Errorf("%s: %s: not marked masked", what, rel)
			}
			sameShape(t, rel, b, want)
		}
	}
	storedIsMasked("first push", a)

	// Appends: new lines with new secrets, pushed without a new revision.
	for i, f := range files {
		appendLine(t, f, fmt.Sprintf(`{"type":"custom","customType":"note","id":"n%d","parentId":null,"timestamp":"2026-01-02T00:00:00.000Z","data":{"text":%q}}`,
			i, "later "+later[i%len(later)]))
	}
	st, err = db.Push(ctx, a, PushOptions{Origin: "a"})
	if err != nil || st.Appended != len(files) || st.Revised != 0 || st.Masked < len(files) {
		t.Errorf("push of appends: %+v, %v; want %d appended, none revised", st, err, len(files))
	}
	readBack("appends", append(planted, later...))
	storedIsMasked("appends", a)

	// A pull gives the masked session; the file it came from is up to date.
	b := t.TempDir()
	pl, err := db.Pull(ctx, b, PullOptions{})
	if err != nil || pl.Written != len(files) {
		t.Fatalf("pull: %+v, %v", pl, err)
	}
	for rel, data := range sessionFiles(t, b) {
		secretstest.Check(t, "pulled "+rel, string(data), append(planted, later...))
	}
	if pl, err = db.Pull(ctx, a, PullOptions{}); err != nil || pl.UpToDate != len(files) || pl.Conflicts != 0 {
		t.Errorf("pull into the data dir pushed from: %+v, %v, want all up to date", pl, err)
	}
	// The pulled copy pushed from another machine is the same session.
	if st, err = db.Push(ctx, b, PushOptions{Origin: "b"}); err != nil || st.Same != len(files) || st.Revised != 0 {
		t.Errorf("push of the pulled copy: %+v, %v, want all the same", st, err)
	}
	// Grown where it was pushed from, and pulled again: appended there.
	for _, f := range files {
		appendLine(t, f, `{"type":"custom","customType":"note","id":"m","parentId":null,"timestamp":"2026-01-03T00:00:00.000Z","data":{"text":"and `+later[0]+`"}}`)
	}
	if st, err = db.Push(ctx, a, PushOptions{Origin: "a"}); err != nil || st.Appended != len(files) {
		t.Errorf("second append: %+v, %v", st, err)
	}
	if pl, err = db.Pull(ctx, b, PullOptions{}); err != nil || pl.Appended != len(files) {
		t.Errorf("pull of the appends: %+v, %v", pl, err)
	}
	storedIsMasked("second append", a)
	for rel, data := range sessionFiles(t, b) {
		want, _, _ := maskedBytes(rel, sessionFiles(t, a)[rel])
		if !bytes.Equal(data, want) {
			t.Errorf("pulled %s: not its file masked", rel)
		}
	}

	// --raw stores the bytes as a new revision; masked again, another.
	if st, err = db.Push(ctx, a, PushOptions{Origin: "a", Raw: true}); err != nil || st.Revised != len(files) || st.Masked != 0 {
		t.Errorf("raw push: %+v, %v, want every file a new revision", st, err)
	}
	for rel, want := range sessionFiles(t, a) {
		s, _ := db.Find(ctx, rel)
		var got bytes.Buffer
		db.WriteSession(ctx, s, &got)
		if !bytes.Equal(got.Bytes(), want) || s.Masked {
			t.Errorf("raw push: %s stored %d bytes (masked %v), want its %d as they are", rel, got.Len(), s.Masked, len(want))
		}
	}
	if st, err = db.Push(ctx, a, PushOptions{Origin: "a"}); err != nil || st.Revised != len(files) {
		t.Errorf("masked push after a raw one: %+v, %v", st, err)
	}
	storedIsMasked("masked again", a)

	// A title slot retitled in place with a secret: the stored slot is
	// masked, still a slot.
	slotted := files[0]
	retitle(t, slotted, "rotate "+later[1])
	if st, err = db.Push(ctx, a, PushOptions{Origin: "a"}); err != nil || st.Retitled != 1 {
		t.Errorf("retitle: %+v, %v", st, err)
	}
	readBack("retitle", append(planted, later...))
	storedIsMasked("retitle", a)
}

// plantShapes plants secrets into xdev sessions in dataDir and gives them
// the shapes a line can take: the first a title slot holding a secret,
// one CRLF line ends, one a byte-order mark before its header, one a line
// that is not JSON holding a secret, one a secret written with escapes.
func plantShapes(t *testing.T, dataDir string, secrets []string) []string {
	t.Helper()
	// Plant with no other harness's root writes xdev's format alone: a
	// round a rotation of the secrets, each round's sessions a project of
	// their own.
	var files []string
	for round := range 3 {
		tmp := t.TempDir()
		order := append(append([]string(nil), secrets[round*6%len(secrets):]...), secrets[:round*6%len(secrets)]...)
		for _, f := range secretstest.Plant(t, tmp, map[string]string(nil), order) {
			if !strings.HasPrefix(f, tmp) {
				continue
			}
			dst := filepath.Join(session.SessionsDir(dataDir), fmt.Sprintf("--w-app-%d--", round), filepath.Base(f))
			os.MkdirAll(filepath.Dir(dst), 0o700)
			if err := os.Rename(f, dst); err != nil {
				t.Fatal(err)
			}
			files = append(files, dst)
		}
	}
	if len(files) < 5 {
		t.Fatalf("%d sessions planted", len(files))
	}
	edit := func(f string, fn func([]byte) []byte) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, fn(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	edit(files[0], func(b []byte) []byte {
		slot, err := session.MarshalTitleSlot("deploy "+secrets[0], session.TitleManual, "2026-01-01T00:00:00.000Z")
		if err != nil {
			t.Fatal(err)
		}
		return append(slot, b...)
	})
	edit(files[1], func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) })
	edit(files[2], func(b []byte) []byte { return append([]byte("\xef\xbb\xbf"), b...) })
	edit(files[3], func(b []byte) []byte { return append(b, []byte("not json: password="+secrets[1]+"\n")...) })
	edit(files[4], func(b []byte) []byte {
		s := secrets[2]
		esc := `\u00` + fmt.Sprintf("%02x", s[0]) + s[1:]
		return append(b, []byte(`{"type":"custom","customType":"note","id":"x","parentId":null,"timestamp":"2026-01-01T00:00:09.000Z","data":{"text":"key `+esc+`"}}`+"\n")...)
	})
	return files
}

// sameShape fails t unless every line of masked is JSON where the line
// of file is, and a title slot stays one.
func sameShape(t *testing.T, name string, file, masked []byte) {
	t.Helper()
	fl, ml := bytes.Split(file, []byte("\n")), bytes.Split(masked, []byte("\n"))
	if len(fl) != len(ml) {
		t.Errorf("%s: %d lines masked, %d in the file", name, len(ml), len(fl))
		return
	}
	for i := range fl {
		trim := func(b []byte) []byte { return bytes.TrimSpace(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))) }
		_, ferr := jsonx.Parse(trim(fl[i]))
		_, merr := jsonx.Parse(trim(ml[i]))
		if (ferr == nil) != (merr == nil) {
			t.Errorf("%s: line %d: JSON %v in the file, %v masked", name, i+1, ferr == nil, merr == nil)
		}
	}
	if session.SlotLine(append(bytes.Clone(fl[0]), '\n')) != nil && session.SlotLine(append(bytes.Clone(ml[0]), '\n')) == nil {
		t.Errorf("%s: the masked title slot is no slot: %q", name, ml[0])
	}
}

func appendLine(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

// retitle writes a newer title slot over path's, in place.
func retitle(t *testing.T, path, title string) {
	t.Helper()
	slot, err := session.MarshalTitleSlot(title, session.TitleManual, time.Now().UTC().Format("2006-01-02T15:04:05.000Z"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(slot, 0); err != nil {
		t.Fatal(err)
	}
}
