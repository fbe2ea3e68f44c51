package corpus

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// transcript writes one foreign session's lines, counting their bytes,
// with a gen for their content (the same prose, code and outputs as an
// omp session's).
type transcript struct {
	g     *gen
	w     *bufio.Writer
	n     int64
	err   error
	now   time.Time
	calls int
}

func newTranscript(w io.Writer, s homeSession) *transcript {
	return &transcript{
		g:   &gen{r: rand.New(rand.NewPCG(s.seed, 0x7a5c))},
		w:   bufio.NewWriterSize(w, 1<<20),
		now: s.created,
	}
}

// line writes one line of parts: JSON text as it is, strings quoted.
func (t *transcript) line(parts ...any) {
	if t.err != nil {
		return
	}
	var b []byte
	for _, p := range parts {
		switch p := p.(type) {
		case raw:
			b = append(b, p...)
		case string:
			b, _ = jsontext.AppendQuote(b, p)
		case int:
			b = strconv.AppendInt(b, int64(p), 10)
		}
	}
	b = append(b, '\n')
	n, err := t.w.Write(b)
	t.n += int64(n)
	t.err = err
}

// raw is JSON text written as it is by line.
type raw string

// tick moves the clock on and returns it as the harnesses write it.
func (t *transcript) tick() string {
	t.now = t.now.Add(time.Duration(200+t.g.r.IntN(5000)) * time.Millisecond)
	return t.now.Format("2006-01-02T15:04:05.000Z")
}

func (t *transcript) finish() (int64, error) {
	if err := t.w.Flush(); err != nil && t.err == nil {
		t.err = err
	}
	return t.n, t.err
}

// writeClaudeTranscript writes a Claude Code transcript of about s.size
// bytes: turns of a user prompt, one to four tool rounds (an assistant
// message of thinking, text and tool_use blocks with its usage, then a
// user line of tool_results) and an answer, each line linked to the one
// before by parentUuid, as Claude Code 2.0 writes them.
func writeClaudeTranscript(w io.Writer, s homeSession, id string) (int64, error) {
	t := newTranscript(w, s)
	g := t.g
	parent := raw("null")
	k := 0
	head := func(typ string) []any {
		k++
		uuid := fmt.Sprintf("%s-%04x-4000-8000-%012x", id[:8], k>>16&0xffff, k)
		p := parent
		parent = raw(`"` + uuid + `"`)
		return []any{raw(`{"parentUuid":`), p, raw(`,"isSidechain":false,"userType":"external","cwd":`), s.cwd,
			raw(`,"sessionId":`), id, raw(`,"version":"2.0.28","gitBranch":"main","type":`), typ,
			raw(`,"uuid":"`), raw(uuid), raw(`","timestamp":`), t.tick()}
	}
	model := "claude-sonnet-4-5-20250929"
	assistant := func(content ...any) {
		in, out, cr, cw := 1+g.r.IntN(20), 50+g.r.IntN(2000), g.r.IntN(100000), g.r.IntN(8000)
		t.calls++
		msg := fmt.Sprintf("msg_%s%06d", id[:8], t.calls)
		parts := append(head("assistant"), raw(`,"requestId":"req_`+msg[4:]+`","message":{"id":"`+msg+`","type":"message","role":"assistant","model":"`+model+`","content":[`))
		parts = append(parts, content...)
		parts = append(parts, raw(`],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`), in,
			raw(`,"cache_creation_input_tokens":`), cw, raw(`,"cache_read_input_tokens":`), cr,
			raw(`,"output_tokens":`), out, raw(`,"service_tier":"standard"}}}`))
		t.line(parts...)
	}
	for t.n < s.size && t.err == nil {
		t.line(append(head("user"), raw(`,"message":{"role":"user","content":`), g.prose(40+g.r.IntN(400)), raw(`}}`))...)
		for range 1 + g.r.IntN(4) {
			call := fmt.Sprintf("toolu_%s%04d", g.hex(12), t.calls)
			tool := toolNames[g.r.IntN(len(toolNames))]
			assistant(raw(`{"type":"thinking","thinking":`), g.prose(100+g.r.IntN(600)), raw(`,"signature":"`+g.hex(48)+`"},`),
				raw(`{"type":"text","text":`), g.prose(30+g.r.IntN(200)), raw(`},`),
				raw(`{"type":"tool_use","id":"`+call+`","name":`), tool, raw(`,"input":{"file_path":`), filePaths[g.r.IntN(len(filePaths))], raw(`}}`))
			t.line(append(head("user"), raw(`,"message":{"role":"user","content":[{"tool_use_id":"`+call+`","type":"tool_result","content":`),
				g.output(), raw(`}]}}`))...)
		}
		assistant(raw(`{"type":"text","text":`), g.prose(80+g.r.IntN(800)), raw(`}`))
	}
	return t.finish()
}

// writeCodexRollout writes a Codex rollout of about s.size bytes, as
// Codex 0.104 does: session_meta, then turns of a turn_context, the user
// message (as an event and as a response item), reasoning, function calls
// with their outputs and token counts, and the answer, again twice.
func writeCodexRollout(w io.Writer, s homeSession, id string) (int64, error) {
	t := newTranscript(w, s)
	g := t.g
	start := t.tick()
	t.line(raw(`{"timestamp":"`+start+`","type":"session_meta","payload":{"id":"`+id+`","timestamp":"`+start+`","cwd":`), s.cwd,
		raw(`,"originator":"codex_cli_rs","cli_version":"0.104.0","source":"cli","model_provider":"openai"}}`))
	var total [3]int
	for t.n < s.size && t.err == nil {
		turn := fmt.Sprintf("%s-%d", id[:8], t.calls)
		t.line(raw(`{"timestamp":"`+t.tick()+`","type":"turn_context","payload":{"turn_id":"`+turn+`","cwd":`), s.cwd,
			raw(`,"approval_policy":"on-request","model":"gpt-5.3-codex","effort":"high"}}`))
		prompt := g.prose(40 + g.r.IntN(400))
		ts := t.tick()
		t.line(raw(`{"timestamp":"`+ts+`","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":`), prompt, raw(`}]}}`))
		t.line(raw(`{"timestamp":"`+ts+`","type":"event_msg","payload":{"type":"user_message","message":`), prompt, raw(`,"images":[]}}`))
		for range 1 + g.r.IntN(4) {
			t.calls++
			call := fmt.Sprintf("call_%s%04d", g.hex(20), t.calls)
			t.line(raw(`{"timestamp":"`+t.tick()+`","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":`),
				g.prose(100+g.r.IntN(600)), raw(`}],"content":null,"encrypted_content":"`+g.hex(200)+`"}}`))
			args, _ := jsontext.AppendQuote([]byte(`{"cmd":`), "cat "+filePaths[g.r.IntN(len(filePaths))])
			t.line(raw(`{"timestamp":"`+t.tick()+`","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":`),
				string(append(args, '}')), raw(`,"call_id":"`+call+`"}}`))
			t.line(raw(`{"timestamp":"`+t.tick()+`","type":"response_item","payload":{"type":"function_call_output","call_id":"`+call+`","output":`),
				g.output(), raw(`}}`))
			in, cached, out := 2000+g.r.IntN(60000), g.r.IntN(2000), 50+g.r.IntN(2000)
			total[0], total[1], total[2] = total[0]+in, total[1]+cached, total[2]+out
			t.line(raw(`{"timestamp":"`+t.tick()+`","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":`), total[0],
				raw(`,"cached_input_tokens":`), total[1], raw(`,"output_tokens":`), total[2], raw(`,"reasoning_output_tokens":0,"total_tokens":`), total[0]+total[2],
				raw(`},"last_token_usage":{"input_tokens":`), in, raw(`,"cached_input_tokens":`), cached, raw(`,"output_tokens":`), out,
				raw(`,"reasoning_output_tokens":0,"total_tokens":`), in+out, raw(`},"model_context_window":258400}}}`))
		}
		answer := g.prose(80 + g.r.IntN(800))
		ts = t.tick()
		t.line(raw(`{"timestamp":"`+ts+`","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":`), answer, raw(`}]}}`))
		t.line(raw(`{"timestamp":"`+ts+`","type":"event_msg","payload":{"type":"agent_message","message":`), answer, raw(`}}`))
	}
	return t.finish()
}
