package session

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/xdev/xdev/internal/jsonx"
)

// omp's snapcompact compaction keeps the compacted history as an archive in
// the compaction's preserveData: plain text at both ends and, between
// them, pages rendered as images ("frames", usually blob references). On
// every context rebuild omp turns the archive back into blocks of the
// compaction summary message (@oh-my-pi/snapcompact historyBlocks); this
// file is that rebuild, resolving the frames from the blob store within
// omp's per-request byte budget.

const (
	snapcompactKey                   = "snapcompact"
	snapcompactFrameBudget           = 3_000_000 // FRAME_DATA_BYTES_BUDGET
	snapcompactLegacyFrameGuard      = 16
	snapcompactLegacyTextGuard       = 250_000
	snapcompactLegacyTruncatedGuard  = 1_000_000
	snapcompactNewlineGlyph          = "\u2588"
	persistenceTruncationNotice      = "\n\n[Session persistence truncated large content]"
	snapcompactImagedMiddleBelow     = "\n-------------- imaged middle below\n"
	snapcompactImagedMiddleAbove     = "-------------- imaged middle above\n"
	snapcompactMiddleOmittedAbove    = "\n-------------- middle history omitted above\n"
	snapcompactOmittedMiddleHeadline = "-------------- snapcompact image middle omitted"
)

// archive is snapcompact's getPreservedArchive: the valid frames and the
// text regions of a compaction's preserved archive.
type archive struct {
	frames                    []jsonx.Value
	truncatedChars            float64
	text, textHead, textTail  string
	hasText, hasHead, hasTail bool
}

func preservedArchive(preserveData jsonx.Value) (archive, bool) {
	cand := preserveData.Get(snapcompactKey)
	if cand.Kind() != jsonx.Object && cand.Kind() != jsonx.Array {
		return archive{}, false
	}
	var a archive
	for _, f := range cand.Get("frames").Items() {
		data, ok := f.Get("data").Text()
		_, mimeOK := f.Get("mimeType").Text()
		_, cols := f.Get("cols").Float()
		_, rows := f.Get("rows").Float()
		_, chars := f.Get("chars").Float()
		if f.Truthy() && ok && data != "" && mimeOK && cols && rows && chars {
			a.frames = append(a.frames, f)
		}
	}
	nonEmpty := func(name string) (string, bool) {
		s, ok := cand.Get(name).Text()
		return s, ok && s != ""
	}
	a.text, a.hasText = nonEmpty("text")
	a.textHead, a.hasHead = nonEmpty("textHead")
	a.textTail, a.hasTail = nonEmpty("textTail")
	a.truncatedChars, _ = cand.Get("truncatedChars").Float()
	if len(a.frames) == 0 && !a.hasText && !a.hasHead && !a.hasTail {
		return archive{}, false
	}
	return a, true
}

// repairTruncatedFrames is omp's repairTruncatedSnapcompactFrames, run on
// every compaction as a session loads: frames an older build cut short are
// dropped, or the archive falls back to its source text.
func repairTruncatedFrames(v jsonx.Value) jsonx.Value {
	pd := v.Get("preserveData")
	a, ok := preservedArchive(pd)
	if !ok {
		return v
	}
	truncated := func(f jsonx.Value) bool {
		return strings.HasSuffix(f.Get("data").String(), persistenceTruncationNotice)
	}
	any := false
	for _, f := range a.frames {
		any = any || truncated(f)
	}
	slot := pd.Get(snapcompactKey)
	if !any || slot.Kind() != jsonx.Object {
		return v
	}
	if a.hasText {
		slot = slot.With("frames", jsonx.ArrayOf()).With("textHead", jsonx.Str(a.text)).With("textTail", jsonx.Str(""))
	} else {
		var kept []jsonx.Value
		for _, f := range a.frames {
			if !truncated(f) {
				kept = append(kept, f)
			}
		}
		slot = slot.With("frames", jsonx.ArrayOf(kept...))
	}
	return v.With("preserveData", pd.With(snapcompactKey, slot))
}

// historyBlocks rebuilds the archive's blocks for the model context:
// historyBlocks with snapcompactHistoryBlockOptions and omp's
// lazyImageDataSync resolver.
func (r *blobResolver) historyBlocks(a archive) []jsonx.Value {
	budget := float64(snapcompactFrameBudget)
	if r.legacyCrashRisk(a) {
		budget = 0
	}
	// Price the frames newest first; keep what fits.
	type slot struct {
		frame       jsonx.Value
		unavailable bool
		omitted     float64
		ok          bool
	}
	slots := make([]slot, len(a.frames))
	used := 0.0
	for i := len(a.frames) - 1; i >= 0; i-- {
		f := a.frames[i]
		bytes, read, ok := r.lazyFrame(f.Get("data").String())
		switch {
		case !ok:
			slots[i] = slot{unavailable: true}
		case used+bytes > budget:
			slots[i] = slot{omitted: bytes}
		default:
			used += bytes
			slots[i] = slot{frame: f.With("data", jsonx.Str(read())), ok: true}
		}
	}
	var middle []jsonx.Value
	gap, gapFrames, gapBytes := "", 0, 0.0
	flush := func() {
		switch gap {
		case "unavailable":
			middle = append(middle, textBlock(fmt.Sprintf("-------------- %s archived image frame%s unavailable here --------------", localeInt(gapFrames), plural(gapFrames))))
		case "budget":
			note := ""
			if gapBytes > 0 {
				note = " " + formatFrameBytes(gapBytes) + " of base64 exceeded the per-request snapcompact payload budget."
			}
			middle = append(middle, textBlock(snapcompactOmittedMiddleHeadline+"\n"+
				fmt.Sprintf("%s archived image frame%s could not be included.%s The compacted summary and visible text edges remain available.", localeInt(gapFrames), plural(gapFrames), note)+
				"\n--------------"))
		}
		gap, gapFrames, gapBytes = "", 0, 0
	}
	for _, s := range slots {
		if s.ok {
			flush()
			img := object("type", jsonx.Str("image"), "data", s.frame.Get("data"), "mimeType", s.frame.Get("mimeType"))
			if d := s.frame.Get("detail"); d.Truthy() {
				img = img.With("detail", d)
			}
			middle = append(middle, img)
			continue
		}
		kind := "budget"
		if s.unavailable {
			kind = "unavailable"
		}
		if gap != "" && gap != kind {
			flush()
		}
		gap = kind
		gapFrames++
		gapBytes += s.omitted
	}
	flush()
	hasImages, hasOmitted := false, false
	for _, b := range middle {
		hasImages = hasImages || b.Get("type").Is("image")
		hasOmitted = hasOmitted || b.Get("type").Is("text")
	}
	var blocks []jsonx.Value
	if a.hasHead {
		suffix := ""
		if hasImages {
			suffix = snapcompactImagedMiddleBelow
		}
		blocks = append(blocks, textBlock(elideDataURLs(plainArchiveText(a.textHead))+suffix))
	}
	blocks = append(blocks, middle...)
	if a.hasTail {
		prefix := ""
		switch {
		case hasImages:
			prefix = snapcompactImagedMiddleAbove
		case a.truncatedChars > 0 || hasOmitted:
			prefix = snapcompactMiddleOmittedAbove
		}
		tail := prefix + elideDataURLs(plainArchiveText(a.textTail))
		if n := len(blocks); n > 0 && blocks[n-1].Get("type").Is("text") {
			blocks[n-1] = blocks[n-1].With("text", jsonx.Str(blocks[n-1].Get("text").String()+tail))
		} else {
			blocks = append(blocks, textBlock(tail))
		}
	}
	return blocks
}

// lazyFrame is omp's lazyImageDataSync: the base64 size of a frame and a
// reader of its data; ok=false when a blob it names is missing.
func (r *blobResolver) lazyFrame(data string) (float64, func() string, bool) {
	if !IsBlobRef(data) {
		return float64(utf16Len(data)), func() string { return data }, true
	}
	// Priced by the blob's size, read only if it fits the budget, as omp's
	// lazyImageDataSync does.
	n, err := r.blobs().size(data)
	if err != nil {
		r.missing++
		return 0, nil, false
	}
	read := func() string {
		if b, ok := r.load(data); ok {
			return encodeBase64(b)
		}
		return data // gone since: the reference stays, as in omp
	}
	return math.Ceil(float64(n)/3) * 4, read, true
}

// legacyCrashRisk is omp's isCrashRiskLegacySnapcompactArchive: an archive
// of frames without shape metadata that is large enough to have crashed
// older builds gets no frames at all.
func (r *blobResolver) legacyCrashRisk(a archive) bool {
	legacy := false
	for _, f := range a.frames {
		legacy = legacy || !f.Get("font").Defined() && !f.Get("variant").Defined()
	}
	if !legacy {
		return false
	}
	payload := len(a.frames) >= snapcompactLegacyFrameGuard
	if !payload {
		total := 0.0
		for _, f := range a.frames {
			if n, _, ok := r.lazyFrameSize(f.Get("data").String()); ok {
				total += n
			} else {
				total += float64(utf16Len(f.Get("data").String()))
			}
		}
		payload = total >= snapcompactFrameBudget
	}
	if !payload {
		return false
	}
	source := a.text
	if !a.hasText {
		var parts []string
		if a.hasHead {
			parts = append(parts, a.textHead)
		}
		if a.hasTail {
			parts = append(parts, a.textTail)
		}
		source = strings.Join(parts, snapcompactNewlineGlyph)
	}
	if source != "" {
		source = elideDataURLs(plainArchiveText(source))
	}
	return len(a.frames) >= snapcompactLegacyFrameGuard || a.truncatedChars >= snapcompactLegacyTruncatedGuard ||
		utf16Len(source) >= snapcompactLegacyTextGuard
}

// lazyFrameSize prices a frame without counting a missing blob.
func (r *blobResolver) lazyFrameSize(data string) (float64, func() string, bool) {
	missing := r.missing
	n, read, ok := r.lazyFrame(data)
	r.missing = missing
	return n, read, ok
}

func textBlock(s string) jsonx.Value {
	return object("type", jsonx.Str("text"), "text", jsonx.Str(s))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// localeInt is Number.prototype.toLocaleString in en-US for an integer.
func localeInt(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func formatFrameBytes(n float64) string {
	switch {
	case n >= 1_000_000:
		return strconv.FormatFloat(n/1_000_000, 'f', 1, 64) + " MB"
	case n >= 1_000:
		return strconv.FormatFloat(n/1_000, 'f', 1, 64) + " KB"
	}
	return jsonx.FormatNumber(n) + " B"
}

// plainArchiveText is snapcompact's toPlainText: dim toggles dropped, the
// newline glyph printed as a newline.
func plainArchiveText(s string) string {
	return archiveText.Replace(s)
}

var archiveText = strings.NewReplacer("\u000e", "", "\u000f", "", snapcompactNewlineGlyph, "\n")

// jsSpace is JavaScript's \s (without the u flag) as a Go class body.
const jsSpace = `\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`

const (
	elidedMarker    = `\[(?:…|\.{3})\d+ch elided(?:…|\.{3})\]`
	mediaTypeToken  = `[\w!#$%&'*+.^|~-]+`
	dataURLAtomExpr = `(?i)data:([A-Za-z][\w.+-]*/[\w.+-]+(?:;` + mediaTypeToken + `=` + mediaTypeToken + `)*);base64,` +
		`([A-Za-z0-9+/=]*(?:[` + jsSpace + `]*` + elidedMarker + `[` + jsSpace + `]*[A-Za-z0-9+/=]*)?)` +
		`([` + jsSpace + `]*\))?`
)

var (
	dataURLAtom  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(dataURLAtomExpr) })
	elidedMarkRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`[` + jsSpace + `]*` + elidedMarker + `[` + jsSpace + `]*`)
	})
	base64Marker  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i);base64,`) })
	digitsRE      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\d+`) })
	markdownSpace = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[` + jsSpace + `]$`) })
)

// elideDataURLs is snapcompact's elideDataUrls for archive text: every
// inline base64 data URL (with its Markdown image wrapper, when both
// halves are there) becomes "[data URL omitted: MIME, N base64 chars]".
func elideDataURLs(text string) string {
	if !base64Marker().MatchString(text) {
		return text
	}
	matches := dataURLAtom().FindAllStringSubmatchIndex(text, -1)
	if matches == nil {
		return text
	}
	var out strings.Builder
	cursor := 0
	for _, m := range matches {
		urlStart, urlEnd := m[0], m[1]
		mime := text[m[2]:m[3]]
		payload := text[m[4]:m[5]]
		closer, hasCloser := "", m[6] >= 0
		if hasCloser {
			closer = text[m[6]:m[7]]
		}
		b64 := utf16Len(payload)
		if mk := elidedMarkRE().FindString(payload); mk != "" {
			n, _ := strconv.Atoi(digitsRE().FindString(mk))
			b64 = utf16Len(payload) - utf16Len(mk) + n
		}
		placeholder := fmt.Sprintf("[data URL omitted: %s, %d base64 chars]", mime, b64)
		opener, found := markdownOpener(text, urlStart, cursor)
		emitStart := urlStart
		if found {
			emitStart = opener
		}
		out.WriteString(text[cursor:emitStart])
		if found && hasCloser {
			out.WriteString(placeholder)
		} else {
			if found {
				out.WriteString(text[opener:urlStart])
			}
			out.WriteString(placeholder)
			out.WriteString(closer)
		}
		cursor = urlEnd
	}
	out.WriteString(text[cursor:])
	return out.String()
}

// markdownOpener is snapcompact's adjacentMarkdownOpenerStart: the start
// of "![label](" (or "[label](") right before a data URL at dataIndex,
// within [cursor, dataIndex).
func markdownOpener(text string, dataIndex, cursor int) (int, bool) {
	i := dataIndex
	for i > cursor {
		r, size := utf8.DecodeLastRuneInString(text[:i])
		if !markdownSpace().MatchString(string(r)) {
			break
		}
		i -= size
	}
	if i-2 < cursor || text[i-1] != '(' || text[i-2] != ']' {
		return 0, false
	}
	opener := -1
	for j := i - 3; j >= cursor; j-- {
		c := text[j]
		if c == ']' || c == '\n' {
			break
		}
		if c == '[' {
			opener = j
		}
	}
	if opener < 0 {
		return 0, false
	}
	if opener > cursor && text[opener-1] == '!' {
		return opener - 1, true
	}
	return opener, true
}
