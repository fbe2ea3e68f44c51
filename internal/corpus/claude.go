package corpus

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// WriteClaude writes a Claude Code projects dir at dir (which must not
// exist) of n sessions in n/100+1 projects, for the usage benchmarks:
// each session 10 to 40 responses, each streamed as 1 to 3 assistant
// lines of one message and request id (the last with the final usage) and
// answered by a tool result, of a few models; a tenth of them resumed
// (their file begins with a copy of another session's lines). The same
// seed writes the same bytes.
func WriteClaude(dir string, n int, seed uint64) error {
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("%s exists", dir)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	r := rand.New(rand.NewPCG(seed, 0xc1a0de))
	models := []string{"claude-sonnet-4-20250514", "claude-opus-4-1-20250805", "claude-haiku-4-5-20251001", "claude-sonnet-4-5-20250929"}
	base := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	var prev []string // the last session's lines, for a resume to copy
	for i := range n {
		project := filepath.Join(dir, "projects", "-work-project-"+strconv.Itoa(i%(n/100+1)))
		if err := os.MkdirAll(project, 0o700); err != nil {
			return err
		}
		id := fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", r.Uint32(), r.IntN(1<<16), r.IntN(1<<12), r.IntN(1<<12), r.Uint64()>>16)
		now := base.Add(time.Duration(i) * 7 * time.Minute)
		var lines []string
		if prev != nil && r.IntN(10) == 0 {
			lines = append(lines, prev...)
		}
		cwd := "/work/project-" + strconv.Itoa(i%(n/100+1))
		parent := "null"
		model := models[r.IntN(len(models))]
		for k := range 10 + r.IntN(31) {
			now = now.Add(time.Duration(2+r.IntN(40)) * time.Second)
			ts := now.Format("2006-01-02T15:04:05.000Z")
			u := fmt.Sprintf("%s-u%d", id[:8], k)
			lines = append(lines, fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"userType":"external","cwd":%q,"sessionId":%q,"version":"2.0.28","gitBranch":"main","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_%s%d","type":"tool_result","content":"%s"}]},"uuid":%q,"timestamp":%q}`,
				parent, cwd, id, id[:8], k, Vocabulary(r.IntN(VocabularySize))+" "+Vocabulary(r.IntN(VocabularySize)), u, ts))
			parent = strconv.Quote(u)
			in, cr, cw, out := 1+r.IntN(20), r.IntN(120000), r.IntN(8000), 20+r.IntN(1500)
			msg, req := fmt.Sprintf("msg_%s%04d", id[:8], k), fmt.Sprintf("req_%s%04d", id[:8], k)
			parts := 1 + r.IntN(3)
			for p := range parts {
				o := out
				if p < parts-1 {
					o = 1 + p
				}
				a := fmt.Sprintf("%s-a%d-%d", id[:8], k, p)
				lines = append(lines, fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"userType":"external","cwd":%q,"sessionId":%q,"version":"2.0.28","gitBranch":"main","message":{"id":%q,"type":"message","role":"assistant","model":%q,"content":[{"type":"text","text":"%s"}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":%d,"service_tier":"standard"}},"requestId":%q,"type":"assistant","uuid":%q,"timestamp":%q}`,
					parent, cwd, id, msg, model, Vocabulary(r.IntN(VocabularySize)), in, cw, cr, o, req, a, ts))
				parent = strconv.Quote(a)
			}
		}
		prev = lines
		f, err := os.OpenFile(filepath.Join(project, id+".jsonl"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		w := bufio.NewWriter(f)
		for _, l := range lines {
			w.WriteString(l)
			w.WriteByte('\n')
		}
		if err := w.Flush(); err != nil {
			f.Close()
			return err
		}
		os.Chtimes(f.Name(), now, now)
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}
