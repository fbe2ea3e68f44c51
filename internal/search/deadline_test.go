package search

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/xdev/xdev/internal/testctx"
)

// TestRefreshStoppedGoesOn stops refreshes at every point of their work
// (between files and inside one, every entry a possible stop) and goes
// on with refreshes stopped as often until one finishes: what the index
// then holds is what one uninterrupted refresh makes, and each stopped
// refresh kept what it read (the next one does not start again).
func TestRefreshStoppedGoesOn(t *testing.T) {
	defer func(n int) { ctxEvery = n }(ctxEvery)
	ctxEvery = 1
	dir := writeDir(t, 12, 7)
	whole := openTemp(t, dir)
	refresh(t, whole, RefreshOptions{})
	want := dump(t, whole)

	// Out of time from its start, a refresh still reads an entry.
	db := openTemp(t, dir)
	if _, err := db.Refresh(testctx.StopAfter(context.Background(), 0), RefreshOptions{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a refresh out of time: %v", err)
	}
	all, _ := whole.int(`SELECT count(*) FROM entries`)
	if n, _ := db.int(`SELECT count(*) FROM entries`); n == 0 || n > 2 {
		t.Errorf("a refresh out of time indexed %d rows of %d, not its first entry (and its title)", n, all)
	}
	for _, after := range []int{0, 1, 2, 3, 5, 8, 13, 40, 100, 300} {
		t.Run(fmt.Sprint(after), func(t *testing.T) {
			db := openTemp(t, dir)
			rounds, read := 0, int64(0)
			for ; ; rounds++ {
				if rounds > 5000 {
					t.Fatal("refreshes stopped early never finish")
				}
				st, err := db.Refresh(testctx.StopAfter(context.Background(), after), RefreshOptions{})
				read += st.Bytes
				if err == nil {
					break
				}
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("round %d: %v", rounds, err)
				}
				if len(st.Errors) > 0 {
					t.Fatalf("round %d: a stop counted as a file's error: %v", rounds, st.Errors)
				}
			}
			if after <= 13 && rounds < 10 {
				t.Errorf("stopped at %d looks, refreshes stopped only %d times: the stops did not fall inside files", after, rounds)
			}
			if got := dump(t, db); got != want {
				t.Errorf("after %d rounds stopped at %d looks, the index differs from one refresh's:\n%s\nwant\n%s", rounds, after, got, want)
			}
			if st := refresh(t, db, RefreshOptions{}); st.Indexed+st.Grown != 0 {
				t.Errorf("a refresh after the finished one read %d files again", st.Indexed+st.Grown)
			}
		})
	}
}
