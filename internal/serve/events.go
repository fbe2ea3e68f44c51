package serve

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// An event is what the server tells open pages: "sessions" (the list
// changed; data is how many sessions there are) or "session" (one
// changed; data is its key).
type event struct{ name, data string }

// broker fans events out to the open pages' streams. A stream too slow
// to take an event loses it rather than hold the others up: the next
// event brings it up to date, since every event means "look again".
type broker struct {
	mu   sync.Mutex
	subs map[chan event]struct{}
}

func (b *broker) subscribe() chan event {
	ch := make(chan event, 16)
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[chan event]struct{}{}
	}
	b.subs[ch] = struct{}{}
	b.mu.Unlock()
	return ch
}

func (b *broker) unsubscribe(ch chan event) {
	b.mu.Lock()
	delete(b.subs, ch)
	b.mu.Unlock()
}

func (b *broker) publish(e event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs {
		select {
		case ch <- e:
		default:
		}
	}
}

// keepAlive is how often an idle stream gets a comment, so that a page
// that went away is noticed (and the connection closed) within it.
const keepAlive = 30 * time.Second

// serveEvents is /events: a stream of server-sent events. ?s=KEY keeps
// only the "session" events of that session (and every "sessions").
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	if n := s.streams.Add(1); int(n) > s.cfg.Limits.MaxStreams {
		s.streams.Add(-1)
		http.Error(w, "too many open pages: close some, or reload this one later", http.StatusServiceUnavailable)
		return
	}
	defer s.streams.Add(-1)
	// A stream outlives the server's write timeout: each write gets a
	// deadline of its own, so a page that stopped reading is let go.
	rc := http.NewResponseController(w)
	extend := func() { rc.SetWriteDeadline(time.Now().Add(keepAlive + s.cfg.Limits.WriteTimeout)) }
	only := r.URL.Query().Get("s")
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	ch := s.events.subscribe()
	defer s.events.unsubscribe(ch)
	extend()
	fmt.Fprint(w, "retry: 2000\n\n")
	fl.Flush()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			extend()
			fmt.Fprint(w, ": still here\n\n")
		case e := <-ch:
			if e.name == "session" && only != "" && e.data != only {
				continue
			}
			extend()
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.name, e.data)
		}
		fl.Flush()
	}
}
