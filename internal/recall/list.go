package recall

import (
	"context"
	"fmt"
	"strings"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/secrets"
	"github.com/xdev/xdev/internal/when"
)

// ListArgs are list_sessions' arguments.
type ListArgs struct {
	Harness   string `json:"harness,omitempty" jsonschema:"only this harness's sessions (the enum, from catalog.Every)"`
	Project   string `json:"project,omitempty" jsonschema:"only sessions of this project: its directory, as the session's cwd"`
	Since     string `json:"since,omitempty" jsonschema:"only sessions written to from this time on: 30m, 12h, 7d, 2w, 2026-11-01 or an RFC 3339 time"`
	Until     string `json:"until,omitempty" jsonschema:"only sessions last written before this time, in since's forms"`
	Title     string `json:"title,omitempty" jsonschema:"only sessions whose title or first message holds this (any case)"`
	Subagents bool   `json:"subagents,omitempty" jsonschema:"list subagents' transcripts too"`
	Paging
}

// ListResult is list_sessions' output.
type ListResult struct {
	Note     string    `json:"note"`
	Sessions []Session `json:"sessions"`
	Total    int       `json:"total" jsonschema:"how many sessions the filters keep, on every page"`
	Failed   []string  `json:"failed,omitempty" jsonschema:"harnesses that could not be read, and why"`
	Budget   Budget    `json:"budget"`
}

// A Session is one session as a listing shows it.
type Session struct {
	ID           string `json:"id"`
	Harness      string `json:"harness"`
	Title        string `json:"title,omitempty"`
	Project      string `json:"project,omitempty"`
	Path         string `json:"path"`
	Created      string `json:"created,omitempty"`
	Modified     string `json:"modified"`
	Size         int64  `json:"size"`
	Status       string `json:"status,omitempty"`
	Parent       string `json:"parent,omitempty" jsonschema:"the session it was forked, branched or spawned from"`
	Subagent     bool   `json:"subagent,omitempty"`
	FirstMessage string `json:"first_message,omitempty"`
}

// maxTitle is the most of a title a result holds, in bytes.
const maxTitle = 200

func sessionOf(r *catalog.Row) Session {
	return Session{ID: r.ID, Harness: string(r.Harness), Title: cut(r.Title, maxTitle), Project: secrets.Mask(r.Cwd), Path: secrets.Mask(r.Path),
		Created: timeText(r.Created), Modified: timeText(r.Modified), Size: r.Size, Status: string(r.Status),
		Parent: r.ParentSession, Subagent: r.Subagent, FirstMessage: cut(oneLine(r.FirstMessage), 200)}
}

func (s *server) list(ctx context.Context, a ListArgs) (ListResult, string, error) {
	out := ListResult{Note: Quoted, Sessions: []Session{}}
	b, limit, from, err := a.page("list_sessions")
	if err != nil {
		return out, "", err
	}
	if err := checkHarness(a.Harness); err != nil {
		return out, "", err
	}
	now := s.now()
	since, err := when.Parse(a.Since, now)
	if err != nil {
		return out, "", fmt.Errorf("since: %v", err)
	}
	until, err := when.Parse(a.Until, now)
	if err != nil {
		return out, "", fmt.Errorf("until: %v", err)
	}
	opts := catalog.ListOptions{Subagents: a.Subagents, Cwd: a.Project}
	var rows []catalog.Row
	failed := map[catalog.Harness]error{}
	if a.Harness != "" {
		rows, err = s.cat.ListHarness(catalog.Harness(a.Harness), opts)
		if err != nil {
			failed[catalog.Harness(a.Harness)] = err
		}
	} else {
		rows, failed = catalog.ListPlaces(ctx, s.cat.Places(catalog.Every), opts)
	}
	for h, err := range failed {
		out.Failed = append(out.Failed, fmt.Sprintf("%s: %v", h, err))
	}
	title := strings.ToLower(a.Title)
	var kept []int
	for i := range rows {
		r := &rows[i]
		switch {
		case r.Err != nil,
			!since.IsZero() && r.Modified.Before(since),
			!until.IsZero() && !r.Modified.Before(until),
			title != "" && !strings.Contains(strings.ToLower(r.Title), title) && !strings.Contains(strings.ToLower(r.FirstMessage), title):
			continue
		}
		kept = append(kept, i)
	}
	out.Total = len(kept)
	b.reserve(frame + sizeOf(out))
	var text strings.Builder
	next := ""
	for k := from; k < len(kept); k++ {
		if k == from+limit {
			next = cursorOf("list_sessions", k)
			break
		}
		v := sessionOf(&rows[kept[k]])
		line := sessionText(&v)
		if !b.take(sizeOf(v) + len(line)) {
			next = cursorOf("list_sessions", k)
			break
		}
		out.Sessions = append(out.Sessions, v)
		text.WriteString(line)
	}
	out.Budget = b.report(next)
	return out, resultText(fmt.Sprintf("%d of %d sessions", len(out.Sessions), out.Total), text.String(), out.Budget), nil
}

func sessionText(v *Session) string {
	title := v.Title
	if title == "" {
		title = v.FirstMessage
	}
	if title == "" {
		title = "(untitled)"
	}
	return fmt.Sprintf("- %s %s · %s · %s · modified %s · %d bytes\n", v.Harness, v.ID, oneLine(title), v.Project, v.Modified, v.Size)
}
