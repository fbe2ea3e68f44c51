// Package chromium drives Debian's headless Chromium for tests: Find
// locates the browser (CI installs it; elsewhere a test without it is
// skipped), Launch starts one and speaks the Chrome DevTools Protocol to
// it over --remote-debugging-pipe (file descriptors 3 and 4, messages
// ending in a NUL byte), which needs no WebSocket and no port. It holds
// the few commands the tests use: navigate, evaluate, wait for, type,
// press a key, screenshot, and the console and security messages the
// page logged.
package chromium

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Find returns Debian's chromium, which CI installs; a developer without
// it gets a skip, CI a failure.
func Find(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed (CI installs Debian's chromium package)")
	}
	t.Skip("chromium not installed: apt-get install chromium")
	return ""
}

// A Browser is one headless Chromium with one page attached.
type Browser struct {
	t       testing.TB
	cmd     *exec.Cmd
	out     *os.File // what Chromium reads (its fd 3)
	mu      sync.Mutex
	next    int
	pending map[int]chan reply
	session string
	logMu   sync.Mutex
	logs    []string
	done    chan struct{}
}

type reply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

type message struct {
	ID        int             `json:"id"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params"`
	SessionID string          `json:"sessionId"`
	reply
}

// Launch starts Chromium and attaches to a blank page; the test's
// cleanup stops it.
func Launch(t testing.TB) *Browser {
	t.Helper()
	bin := Find(t)
	toChrome, ours, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	theirs, fromChrome, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-features=Translate,MediaRouter", "--window-size=1280,900",
		"--user-data-dir="+t.TempDir(), "--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{toChrome, fromChrome}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	toChrome.Close()
	fromChrome.Close()
	b := &Browser{t: t, cmd: cmd, out: ours, pending: map[int]chan reply{}, done: make(chan struct{})}
	go b.read(theirs)
	t.Cleanup(b.close)

	var targets struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
		} `json:"targetInfos"`
	}
	b.callInto("", "Target.getTargets", nil, &targets)
	target := ""
	for _, ti := range targets.TargetInfos {
		if ti.Type == "page" {
			target = ti.TargetID
			break
		}
	}
	if target == "" {
		var created struct {
			TargetID string `json:"targetId"`
		}
		b.callInto("", "Target.createTarget", map[string]any{"url": "about:blank"}, &created)
		target = created.TargetID
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	b.callInto("", "Target.attachToTarget", map[string]any{"targetId": target, "flatten": true}, &attached)
	b.session = attached.SessionID
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable"} {
		b.Call(m, nil)
	}
	return b
}

func (b *Browser) close() {
	b.out.Close()
	select {
	case <-b.done:
	case <-time.After(5 * time.Second):
		b.cmd.Process.Kill()
	}
	b.cmd.Wait()
}

// read reads Chromium's messages: replies to the calls, and the events
// kept as the page's log.
func (b *Browser) read(f *os.File) {
	defer close(b.done)
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		raw, err := r.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			for id, ch := range b.pending {
				close(ch)
				delete(b.pending, id)
			}
			b.mu.Unlock()
			return
		}
		var m message
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		if m.ID != 0 {
			b.mu.Lock()
			ch := b.pending[m.ID]
			delete(b.pending, m.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- m.reply
			}
			continue
		}
		switch m.Method {
		case "Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded":
			b.logMu.Lock()
			b.logs = append(b.logs, m.Method+" "+string(m.Params))
			b.logMu.Unlock()
		}
	}
}

// Call calls a method of the page's session and returns its result; an
// error fails the test.
func (b *Browser) Call(method string, params any) json.RawMessage {
	b.t.Helper()
	var out json.RawMessage
	b.callInto(b.session, method, params, &out)
	return out
}

func (b *Browser) callInto(session, method string, params any, out any) {
	b.t.Helper()
	res, err := b.call(session, method, params)
	if err != nil {
		b.t.Fatalf("chromium %s: %v", method, err)
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			b.t.Fatalf("chromium %s: %v", method, err)
		}
	}
}

func (b *Browser) call(session, method string, params any) (json.RawMessage, error) {
	if params == nil {
		params = map[string]any{}
	}
	b.mu.Lock()
	b.next++
	id := b.next
	ch := make(chan reply, 1)
	b.pending[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	raw, _ := json.Marshal(msg)
	if _, err := b.out.Write(append(raw, 0)); err != nil {
		return nil, err
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, errors.New("chromium exited")
		}
		if r.Error != nil {
			return nil, errors.New(r.Error.Message)
		}
		return r.Result, nil
	case <-time.After(30 * time.Second):
		return nil, errors.New("no answer in 30 s")
	}
}

// Navigate loads url and waits until the document is complete.
func (b *Browser) Navigate(url string) {
	b.t.Helper()
	// The old document may still be there for a moment after the call:
	// it is marked, and the wait is for a complete document without the
	// mark.
	b.eval("window.__xdevOld = true")
	b.Call("Page.navigate", map[string]any{"url": url})
	b.WaitFor(`!window.__xdevOld && document.readyState === "complete"`, 10*time.Second)
}

// Eval evaluates expr in the page (awaiting a promise) and returns its
// value as JSON decodes it.
func (b *Browser) Eval(expr string) any {
	b.t.Helper()
	v, err := b.eval(expr)
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

func (b *Browser) eval(expr string) (any, error) {
	res, err := b.call(b.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	if err != nil {
		return nil, err
	}
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, err
	}
	if e := r.ExceptionDetails; e != nil {
		return nil, fmt.Errorf("%s %s", e.Text, e.Exception.Description)
	}
	return r.Result.Value, nil
}

// String evaluates expr to a string.
func (b *Browser) String(expr string) string {
	b.t.Helper()
	s, _ := b.Eval(expr).(string)
	return s
}

// WaitFor waits until expr is true in the page, failing the test past
// timeout.
func (b *Browser) WaitFor(expr string, timeout time.Duration) {
	b.t.Helper()
	end := time.Now().Add(timeout)
	for {
		v, err := b.eval(expr)
		if err == nil && v == true {
			return
		}
		if time.Now().After(end) {
			b.t.Fatalf("waited %v for %s (last: %v, %v); page at %s", timeout, expr, v, err, b.String("location.href"))
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// Type types text into the focused element, as key presses' input.
func (b *Browser) Type(text string) {
	b.t.Helper()
	for _, r := range text {
		b.Call("Input.insertText", map[string]any{"text": string(r)})
	}
}

// keyCodes are the Windows virtual key codes of the keys Press knows.
var keyCodes = map[string]int{"Enter": 13, "Escape": 27, "ArrowDown": 40, "ArrowUp": 38, "Tab": 9, "/": 191, "j": 74, "k": 75}

// Press presses and releases one key (a name of keyCodes).
func (b *Browser) Press(key string) {
	b.t.Helper()
	code := keyCodes[key]
	down := map[string]any{"type": "keyDown", "key": key, "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code}
	if len(key) == 1 {
		down["text"] = key
	}
	if key == "Enter" {
		down["text"] = "\r"
	}
	b.Call("Input.dispatchKeyEvent", down)
	b.Call("Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": key, "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code})
}

// Screenshot is a PNG of the page as it shows.
func (b *Browser) Screenshot() []byte {
	b.t.Helper()
	var r struct {
		Data string `json:"data"`
	}
	raw := b.Call("Page.captureScreenshot", map[string]any{"format": "png"})
	json.Unmarshal(raw, &r)
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		b.t.Fatal(err)
	}
	return png
}

// Logs are what the page logged (console calls, exceptions, the
// browser's own messages such as a refused fetch), and are cleared.
func (b *Browser) Logs() []string {
	b.logMu.Lock()
	defer b.logMu.Unlock()
	out := b.logs
	b.logs = nil
	return out
}

// Quote is s as a JavaScript string literal.
func Quote(s string) string {
	b, _ := json.Marshal(s)
	return strings.ReplaceAll(string(b), "\u2028", `\u2028`)
}
