package session

import (
	"strings"

	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/regularfile"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// HeadBytes is how much of a file List reads: enough for the 256-byte
// title slot and a header, never the entries.
const HeadBytes = 4096

// head is what the first HeadBytes of a session file say about it.
type head struct {
	preamble
	// partial: the header line did not end within HeadBytes, so only the
	// members that did are known.
	partial bool
	// firstMessage is the first user message's text, if it is in the head.
	firstMessage string
	// shortSummary is the shortSummary of the last compaction in the head,
	// which omp's listing shows for a session without a title.
	shortSummary string
}

// readHead reads at most HeadBytes from the start of f and decodes the slot
// and header the way Open does: blank lines are skipped, line 1 may be a
// title slot, and the next line must be a session header.
func readHead(f io.ReaderAt, path string) (head, error) {
	buf := make([]byte, HeadBytes)
	n, err := f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return head{}, err
	}
	return parseHead(buf[:n], n == HeadBytes, path)
}

func parseHead(buf []byte, truncated bool, path string) (head, error) {
	var h head
	num := 0
	for len(buf) > 0 {
		line, rest, complete := bytes.Cut(buf, []byte{'\n'})
		buf = rest
		num++
		if !complete && truncated {
			if h.header.ID == "" {
				hd, err := parsePartialHeader(line)
				if err != nil {
					return head{}, fmt.Errorf("%s: line %d: %w (%v)", path, num, ErrNoHeader, err)
				}
				h.header, h.partial = hd, true
				return h, nil
			}
		}
		kind, slot, hd, _, err := readPreambleLine(num, line)
		switch {
		case err != nil:
			return head{}, fmt.Errorf("%s: line %d: %w (%v)", path, num, ErrNoHeader, err)
		case kind == preSlot:
			h.slot, h.hasSlot = slot, true
			continue
		case kind != preHeader:
			continue
		}
		h.header = hd
		h.firstMessage, h.shortSummary = scanHeadEntries(rest)
		return h, nil
	}
	return head{}, fmt.Errorf("%s: %w", path, ErrNoHeader)
}

// scanHeadEntries reads the complete lines of buf (the entries in the
// head) for the text of the first user message, cut to 200 bytes, and the
// shortSummary of the last compaction, as omp's listing does.
func scanHeadEntries(buf []byte) (firstMessage, shortSummary string) {
	found := false
	for {
		line, rest, complete := bytes.Cut(buf, []byte{'\n'})
		if !complete {
			return firstMessage, shortSummary
		}
		buf = rest
		isUser := !found && bytes.Contains(line, []byte(`"user"`))
		isSummary := bytes.Contains(line, []byte(`"shortSummary"`))
		if !isUser && !isSummary {
			continue
		}
		// One pass over the line, the message's members read in it, as
		// JSON.parse reads them (the last of duplicates); a line that is
		// not JSON is skipped, as JSON.parse would throw on it.
		var typ, summary, role, content, curRole, curContent []byte
		end, err := jsonx.MembersWithin(line, "message", func(k, x []byte) {
			switch string(k) {
			case "role":
				curRole = x
			case "content":
				curContent = x
			}
		}, func(k, x []byte) {
			switch string(k) {
			case "type":
				typ = x
			case "shortSummary":
				summary = x
			case "message":
				role, content, curRole, curContent = curRole, curContent, nil, nil
			}
		})
		if err != nil || !jsonSpace(line[end:]) {
			continue
		}
		switch t := small(typ); {
		case t.Is(TypeCompaction):
			if s, ok := small(summary).Text(); ok && isSummary {
				shortSummary = s
			}
		case t.Is(TypeMessage):
			if !isUser || !small(role).Is("user") {
				continue
			}
			found = true
			// A lone surrogate (WTF-8, as JSON.parse keeps it) is shown as
			// U+FFFD: the listing's text is UTF-8 for every output.
			firstMessage = cutFirstMessage(strings.ToValidUTF8(firstText(content), "\uFFFD"))
		}
	}
}

// firstText is a message content's text: the string, or the first text
// block's text.
func firstText(content []byte) string {
	if len(content) == 0 {
		return ""
	}
	switch content[0] {
	case '"':
		s, _ := small(content).Text()
		return s
	case '[':
		text, done := "", false
		jsonx.Elements(content, func(b []byte) {
			if !done && len(b) > 0 && b[0] == '{' && small(memberOf(b, "type")).Is("text") {
				text, _ = small(memberOf(b, "text")).Text()
				done = true
			}
		})
		return text
	}
	return ""
}

// parsePartialHeader reads the members of a header line cut off by
// HeadBytes (a very long cwd or title), keeping those that are complete.
func parsePartialHeader(line []byte) (Header, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(line), jsonx.DecodeOptions)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return Header{}, errNotHeader
	}
	var h Header
	for {
		tok, err := dec.ReadToken()
		if err != nil || tok.Kind() != '"' {
			break
		}
		name := tok.String() // tokens are voided by the next read
		val, err := dec.ReadValue()
		if err != nil {
			break
		}
		var s string
		if val.Kind() == '"' {
			json.Unmarshal(val, &s, jsonx.DecodeOptions)
		}
		switch name {
		case "type":
			h.Type = s
		case "id":
			h.ID = s
		case "timestamp":
			h.Timestamp = s
		case "cwd":
			h.Cwd = s
		case "parentSession":
			h.ParentSession = s
		case "title":
			h.Title = s
		case "titleSource":
			h.TitleSource = s
		case "version":
			if val.Kind() == '0' {
				fmt.Sscan(string(val), &h.Version)
			}
		}
	}
	if h.Type != "session" || h.ID == "" {
		return Header{}, errors.New("header longer than the first 4 KiB, and its type and id are not within them")
	}
	return h, nil
}

// statHead opens path, stats it and reads its head, and with withStatus
// its last TailBytes for the Status, leaving it unchanged. A file small
// enough is read in one go.
func statHead(path string, withStatus bool) (head, tailFacts, os.FileInfo, error) {
	f, fi, err := regularfile.OpenRaw(path)
	if err != nil {
		return head{}, tailFacts{}, fi, err
	}
	defer f.Close()
	size := fi.Size()
	if !withStatus {
		h, err := readHead(f, path)
		if err != nil {
			return h, tailFacts{}, fi, err
		}
		var facts tailFacts
		if t, _ := h.title(); t == "" {
			// An untitled session may have a name in its tail (pi's
			// session_info): one more read, for these files only.
			bp := headTailBufs.Get().(*[]byte)
			defer headTailBufs.Put(bp)
			off := max(0, size-TailBytes)
			tail := (*bp)[:size-off]
			if n, err := f.ReadAt(tail, off); err == nil || err == io.EOF {
				facts.name = tailName(tail[:n])
			}
		}
		return h, facts, fi, err
	}
	bp := headTailBufs.Get().(*[]byte)
	defer headTailBufs.Put(bp)
	buf := (*bp)[:min(size, HeadBytes+TailBytes)]
	n, err := f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return head{}, tailFacts{}, fi, err
	}
	buf = buf[:n]
	h, err := parseHead(buf[:min(n, HeadBytes)], n >= HeadBytes, path)
	if err != nil {
		return head{}, tailFacts{}, fi, err
	}
	tail := buf[max(0, n-TailBytes):]
	if size > int64(len(buf)) {
		// The head is parsed (its strings copied): its bytes can go.
		tail = (*bp)[:TailBytes]
		if n, err = f.ReadAt(tail, size-TailBytes); err != nil && err != io.EOF {
			return head{}, tailFacts{}, fi, err
		}
		tail = tail[:n]
	}
	return h, readTail(h, tail), fi, nil
}

// headTailBufs are statHead's read buffers: List reads thousands of files,
// and a fresh 36 KiB buffer each would be most of its work (zeroing it,
// then collecting it).
var headTailBufs = sync.Pool{New: func() any { b := make([]byte, HeadBytes+TailBytes); return &b }}

// firstMessageBytes bounds the first message a listing keeps.
const firstMessageBytes = 200

// cutFirstMessage is s within firstMessageBytes, cut where a word ends:
// a word the cut would split is left out whole, so that no listing shows
// the start of a key its masking could no longer tell is one.
func cutFirstMessage(s string) string {
	if len(s) <= firstMessageBytes {
		return s
	}
	cut := s[:firstMessageBytes]
	if !isSpaceByte(s[firstMessageBytes]) {
		cut = cut[:strings.LastIndexAny(cut, " \t\r\n")+1]
	}
	return strings.ToValidUTF8(strings.TrimRight(cut, " \t\r\n"), "")
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
