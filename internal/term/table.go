package term

import (
	"bufio"
	"fmt"
	"strings"
)

// A Table prints rows for a person on a terminal: aligned columns under a
// header, fitted to the terminal's width by cutting the columns marked
// flexible (never the others, such as an id), measured in display columns
// (a CJK character or an emoji takes two). For a script (stdout not a
// terminal) it prints tab-separated lines without a header, as the GitHub
// CLI does. Cells are escaped either way: a tab or newline in a title
// cannot break a row. Add the rows, then Print: for a script each row is
// written as it is added (a listing of 10,000 sessions is not held twice),
// through one buffer Print flushes.
type Table struct {
	IO     *IOStreams
	Header []string
	Flex   []bool // per column: may be cut to fit the width
	rows   [][]string
	out    *bufio.Writer // for a script: where rows go as they are added
}

// Add adds a row, each cell escaped (Escape).
func (t *Table) Add(cells ...string) {
	for i, c := range cells {
		cells[i] = Escape(c)
	}
	if t.IO.IsTTY {
		t.rows = append(t.rows, cells)
		return
	}
	if t.out == nil {
		t.out = bufio.NewWriterSize(t.IO.Out, 64<<10)
	}
	for i, c := range cells {
		if i > 0 {
			t.out.WriteByte('\t')
		}
		t.out.WriteString(c)
	}
	t.out.WriteByte('\n')
}

const columnGap = 2

// minFlexWidth is as narrow as a flexible column is cut.
const minFlexWidth = 12

// Print prints the rows: aligned under the header on a terminal, else
// tab-separated without one. A table without rows prints nothing.
func (t *Table) Print() {
	if t.out != nil {
		t.out.Flush()
		return
	}
	if len(t.rows) == 0 {
		return
	}
	w := bufio.NewWriterSize(t.IO.Out, 64<<10)
	defer w.Flush()
	widths := make([]int, len(t.Header))
	for _, r := range append([][]string{t.Header}, t.rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], DisplayWidth(c))
		}
	}
	// Cut the widest flexible column, one column at a time, until the row
	// fits or every flexible column is at its minimum.
	total := func() int {
		n := columnGap * (len(widths) - 1)
		for _, x := range widths {
			n += x
		}
		return n
	}
	for over := total() - t.IO.Width; over > 0; over-- {
		widest := -1
		for i, f := range t.Flex {
			if f && widths[i] > minFlexWidth && (widest < 0 || widths[i] > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		widths[widest]--
	}
	for _, r := range append([][]string{t.Header}, t.rows...) {
		var line strings.Builder
		for i, c := range r {
			c = Fit(c, widths[i])
			if i < len(r)-1 {
				c = Pad(c, widths[i]+columnGap)
			}
			line.WriteString(c)
		}
		fmt.Fprintln(w, strings.TrimRight(line.String(), " "))
	}
}
