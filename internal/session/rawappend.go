package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrMoved is returned by AppendRaw when the file is no longer the size
// the caller knew: another writer appended or rewrote it meanwhile.
var ErrMoved = errors.New("session file changed since it was read")

// AppendRaw appends the complete lines r holds, byte for byte, to the
// session file at path, which must still be size bytes long: the lines
// another copy of the session has beyond this one (a pull from a shared
// store). The lines are written under omp's lockfile, in writes of whole
// lines, and the file is synced before the lock is dropped. If r does not
// end in a newline, or a write or the read of r fails, the file is cut
// back to size: nothing of the append remains. A file of another size
// fails with ErrMoved, untouched. It returns the bytes appended.
func AppendRaw(path string, size int64, r io.Reader, opts LockOptions) (int64, error) {
	lock, err := acquireLock(path, opts.timeout())
	if err != nil {
		return 0, err
	}
	defer lock.release()
	f, fi, err := openRegular(path, os.O_WRONLY|os.O_APPEND)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if fi.Size() != size {
		return 0, fmt.Errorf("%s: %w: %d bytes, was %d", path, ErrMoved, fi.Size(), size)
	}
	undo := func(cause error) (int64, error) {
		if terr := diskTruncate(f, size); terr != nil {
			cause = errors.Join(cause, fmt.Errorf("cutting the append back: %w", terr))
		}
		return 0, fmt.Errorf("%s: append: %w", path, cause)
	}
	buf := make([]byte, 1<<20)
	var n int64
	var held []byte // the read's last, unfinished line, written with the next
	for {
		k, rerr := r.Read(buf)
		chunk := append(held, buf[:k]...)
		held = held[:0]
		cut := len(chunk)
		for cut > 0 && chunk[cut-1] != '\n' {
			cut--
		}
		if cut > 0 {
			w, err := diskWrite(f, chunk[:cut])
			n += int64(w)
			if err == nil && w != cut {
				err = io.ErrShortWrite
			}
			if err != nil {
				return undo(err)
			}
		}
		held = append(held, chunk[cut:]...)
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return undo(rerr)
		}
	}
	if len(held) > 0 {
		return undo(errors.New("the lines end without a newline"))
	}
	if err := fdatasync(f); err != nil {
		return undo(err)
	}
	return n, nil
}

// ReplaceSlot overwrites the title slot of the session file at path with
// slot, in place, under omp's lockfile, as a retitle does: the slot
// another copy of the session holds (a pull). Line 1 must still be old,
// a slot of the same width as slot, else the file is left alone and
// ErrMoved returned.
func ReplaceSlot(path string, old, slot []byte, opts LockOptions) error {
	if len(old) != TitleSlotWidth || len(slot) != TitleSlotWidth || slot[len(slot)-1] != '\n' {
		return fmt.Errorf("%s: a title slot is %d bytes with its newline", path, TitleSlotWidth)
	}
	if _, ok := ParseTitleSlot(slot); !ok {
		return fmt.Errorf("%s: not a title slot: %q", path, slot)
	}
	lock, err := acquireLock(path, opts.timeout())
	if err != nil {
		return err
	}
	defer lock.release()
	f, _, err := openRegular(path, os.O_RDWR)
	if err != nil {
		return err
	}
	defer f.Close()
	cur := make([]byte, TitleSlotWidth)
	if _, err := f.ReadAt(cur, 0); err != nil || !bytes.Equal(cur, old) {
		return fmt.Errorf("%s: %w: line 1 is not the slot it was", path, ErrMoved)
	}
	if _, err := diskWriteAt(f, slot, 0); err != nil {
		if _, rerr := diskWriteAt(f, old, 0); rerr != nil {
			err = errors.Join(err, fmt.Errorf("restoring the old slot: %w", rerr))
		}
		return fmt.Errorf("%s: writing the slot: %w", path, err)
	}
	return fdatasync(f)
}
