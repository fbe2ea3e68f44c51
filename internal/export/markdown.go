package export

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/xdev/xdev/internal/session"
)

// Markdown writes the transcript of the session x indexes as a Markdown
// document, one entry at a time. What people typed is escaped, so that it
// reads as typed ("<in>" stays "<in>"); what the model wrote is Markdown
// and left as such. Images are described, not embedded (most Markdown
// viewers will not show a large data: URI).
func Markdown(w io.Writer, x *session.Index, opts *Options) error {
	t := newTranscript(x, opts)
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# %s\n\n", escapeMarkdown(orUntitled(t.Title)))
	fmt.Fprintf(bw, "- Session: `%s`\n- Directory: `%s`\n- Started: %s\n- %s on this branch\n\n",
		codeSpan(t.ID), codeSpan(t.Cwd), when(t.Created), plural(t.Entries, "entry", "entries"))
	err := t.each(func(it *Item) error {
		writeMarkdownItem(bw, it)
		return nil
	}, func() error {
		fmt.Fprintf(bw, "> **%s**\n\n", escapeMarkdown(t.Omitted.note()))
		return nil
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

func writeMarkdownItem(bw *bufio.Writer, it *Item) {
	h := it.heading()
	if h == "" {
		put(bw, "*", escapeMarkdown(strings.TrimSpace(it.Text)), "*\n\n")
		return
	}
	fmt.Fprintf(bw, "## %s", escapeMarkdown(h))
	if it.Label != "" {
		fmt.Fprintf(bw, " · %s", escapeMarkdown(it.Label))
	}
	fmt.Fprintf(bw, "\n\n<sub>%s · %s</sub>\n\n", escapeMarkdown(when(it.Time)), escapeMarkdown(it.ID))
	for _, th := range it.Thinking {
		f := fence(th)
		put(bw, "<details><summary>Thinking</summary>\n\n", f, "\n", th, "\n", f, "\n\n</details>\n\n")
	}
	if it.Text != "" {
		switch {
		case it.Kind == "bashExecution" || it.Kind == "pythonExecution":
			f := fence(it.Text)
			put(bw, f, "\n", it.Text, "\n", f, "\n\n")
		case it.Kind == "compaction" || it.Kind == "branch":
			for _, line := range strings.Split(it.Text, "\n") {
				put(bw, "> ", line, "\n")
			}
			bw.WriteString("\n")
		case it.MarkdownKind():
			put(bw, it.Text, "\n\n")
		default:
			put(bw, escapeMarkdown(it.Text), "\n\n")
		}
	}
	for _, c := range it.Calls {
		f := fence(c.Args)
		put(bw, "**→ ", escapeMarkdown(c.Name), "**\n\n", f, "json\n", c.Args, "\n", f, "\n\n")
	}
	if it.Output != "" {
		f := fence(it.Output)
		put(bw, f, "\n", strings.TrimRight(it.Output, "\n"), "\n", f, "\n\n")
	}
	if it.Cut > 0 {
		fmt.Fprintf(bw, "*(%s more cut; `xdev export --full` has everything)*\n\n", sizeText(int64(it.Cut)))
	}
	for _, img := range it.Images {
		if img.Data == "" {
			fmt.Fprintf(bw, "*[image %s: blob missing]*\n\n", escapeMarkdown(img.MimeType))
		} else {
			fmt.Fprintf(bw, "*[image %s, %d bytes]*\n\n", escapeMarkdown(img.MimeType), img.Bytes)
		}
	}
}

// put writes parts as they are, without fmt's copy of each: an item's
// text can be tens of MB.
func put(bw *bufio.Writer, parts ...string) {
	for _, p := range parts {
		bw.WriteString(p)
	}
}

// escapeMarkdown makes s read as itself in Markdown (CommonMark with
// GitHub's extensions): the characters that make markup anywhere
// (\ ` * _ [ ] < > & | ~) are backslash-escaped, and those that do only at
// the start of a line (# - + = :, and the dot or parenthesis after a
// number) are escaped there; indentation that would make a code block
// becomes character references, and each line break is kept as a hard
// break (two trailing spaces). FuzzEscapeMarkdown checks it by rendering.
func escapeMarkdown(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines := strings.Split(s, "\n")
	var b strings.Builder
	for k, line := range lines {
		i := 0
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			if line[i] == ' ' {
				b.WriteString("&#32;")
			} else {
				b.WriteString("&#9;")
			}
			i++
		}
		rest := line[i:]
		if i == 0 && rest != "" && strings.ContainsRune("#-+=:", rune(rest[0])) {
			b.WriteByte('\\')
		}
		digits := 0
		if i == 0 {
			for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
				digits++
			}
		}
		for j, r := range rest {
			if r < 0x80 && strings.ContainsRune("\\`*_[]<>&|~", r) ||
				digits > 0 && j == digits && (r == '.' || r == ')') {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		if k < len(lines)-1 {
			if strings.TrimSpace(line) != "" && strings.TrimSpace(lines[k+1]) != "" {
				// A hard line break. Two spaces, not a backslash: after an
				// escaped backslash, goldmark reads `\\\` at a line end wrong.
				b.WriteString("  ")
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// codeSpan makes s safe inside a single-backtick code span.
func codeSpan(s string) string { return strings.ReplaceAll(s, "`", "'") }
