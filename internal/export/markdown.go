package export

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Markdown writes d as a Markdown document. Images are described, not
// embedded (most Markdown viewers will not show a large data: URI).
func Markdown(w io.Writer, d Doc) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# %s\n\n", orUntitled(d.Title))
	fmt.Fprintf(bw, "- Session: `%s`\n- Directory: `%s`\n- Started: %s\n- %s\n\n", d.ID, d.Cwd, when(d.Created), plural(len(d.Items), "entry", "entries"))
	for _, it := range d.Items {
		if h := it.heading(); h != "" {
			fmt.Fprintf(bw, "## %s", h)
			if it.Label != "" {
				fmt.Fprintf(bw, " · %s", it.Label)
			}
			fmt.Fprintf(bw, "\n\n<sub>%s · %s</sub>\n\n", when(it.Time), it.ID)
		} else {
			fmt.Fprintf(bw, "*%s*\n\n", strings.TrimSpace(it.Text))
			continue
		}
		for _, t := range it.Thinking {
			fmt.Fprintf(bw, "<details><summary>Thinking</summary>\n\n%s\n\n</details>\n\n", t)
		}
		if it.Text != "" {
			if it.Kind == "bashExecution" || it.Kind == "pythonExecution" {
				f := fence(it.Text)
				fmt.Fprintf(bw, "%s\n%s\n%s\n\n", f, it.Text, f)
			} else if it.Kind == "compaction" || it.Kind == "branch" {
				for _, line := range strings.Split(it.Text, "\n") {
					fmt.Fprintf(bw, "> %s\n", line)
				}
				bw.WriteString("\n")
			} else {
				fmt.Fprintf(bw, "%s\n\n", it.Text)
			}
		}
		for _, c := range it.Calls {
			f := fence(c.Args)
			fmt.Fprintf(bw, "**→ %s**\n\n%sjson\n%s\n%s\n\n", c.Name, f, c.Args, f)
		}
		if it.Output != "" {
			f := fence(it.Output)
			fmt.Fprintf(bw, "%s\n%s\n%s\n\n", f, strings.TrimRight(it.Output, "\n"), f)
		}
		for _, img := range it.Images {
			if img.Data == "" {
				fmt.Fprintf(bw, "*[image %s: blob missing]*\n\n", img.MimeType)
			} else {
				fmt.Fprintf(bw, "*[image %s, %d bytes]*\n\n", img.MimeType, img.Bytes)
			}
		}
	}
	return bw.Flush()
}
