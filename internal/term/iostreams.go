package term

import (
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// IOStreams is what a command may touch of the world it runs in, as the
// GitHub CLI's iostreams is: its standard streams, whether they are
// terminals and how wide, the clock, the working directory and whether
// color is wanted. A command reads these from here and nowhere else, so
// a test hands it another world (New) and gets the same behaviour.
type IOStreams struct {
	In io.Reader
	// Out and ErrOut are for a person: control characters from session
	// content are escaped on the way (EscapeWriter).
	Out, ErrOut io.Writer
	// RawOut is stdout unfiltered, for data: JSON and entries as stored.
	// RawErr is stderr unfiltered, for a progress line's own escapes.
	RawOut, RawErr io.Writer
	// IsTTY: stdout is a terminal, so print for a person (aligned tables,
	// relative times) rather than for a script. ErrIsTTY: stderr is one,
	// so long work may show progress there.
	IsTTY, ErrIsTTY bool
	// Width is the terminal's width in columns, when IsTTY.
	Width int
	// NoColor: $NO_COLOR is set (no-color.org), so no bold or dim.
	NoColor bool
	// Now is the clock; Getwd the working directory.
	Now   func() time.Time
	Getwd func() (string, error)

	flushers []*EscapeWriter
	filters  []*lineFilter // Filter's, flushed first
}

// New returns the streams of a command reading in and writing to out and
// errOut, both terminals of width columns or neither, on the system's
// clock and working directory.
func New(in io.Reader, out, errOut io.Writer, tty bool, width int) *IOStreams {
	o, e := NewEscapeWriter(out), NewEscapeWriter(errOut)
	return &IOStreams{In: in, Out: o, ErrOut: e, RawOut: out, RawErr: errOut, IsTTY: tty, ErrIsTTY: tty, Width: width,
		Now: time.Now, Getwd: os.Getwd, flushers: []*EscapeWriter{o, e}}
}

// System returns the process's streams: os.Stdin, os.Stdout and
// os.Stderr, each a terminal or not as IsTerminal says, $COLUMNS or the
// terminal's width, $NO_COLOR.
func System() *IOStreams {
	s := New(os.Stdin, os.Stdout, os.Stderr, IsTerminal(os.Stdout), TerminalWidth(os.Stdout))
	s.ErrIsTTY = IsTerminal(os.Stderr)
	s.NoColor = os.Getenv("NO_COLOR") != ""
	return s
}

// Flush writes out what the filters (Filter) and the escaping writers
// hold back (a line not ended, a character cut between two writes).
func (s *IOStreams) Flush() {
	for _, f := range s.filters {
		f.Flush()
	}
	for _, f := range s.flushers {
		f.Flush()
	}
}

// IsTerminal reports whether f is a terminal: a device that answers a
// terminal's ioctl (not merely a character device, as /dev/null is);
// XDEV_FORCE_TTY=1 says yes (for tests and pagers), XDEV_FORCE_TTY=0 says
// no.
func IsTerminal(f *os.File) bool {
	switch os.Getenv("XDEV_FORCE_TTY") {
	case "1", "true":
		return true
	case "0", "false":
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
