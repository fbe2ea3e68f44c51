package session

import (
	"fmt"
	"path/filepath"
	"strings"
)

// SubagentPath returns where omp keeps the transcript of the subagent
// agentID of the session at parentPath: beside it, in the directory named
// like the parent file without ".jsonl" (the parent's artifacts dir). The
// listing never descends there, so subagents do not show up as sessions.
//
// agentID must be a plain file name (omp's ids look like "Scout",
// "Scout-2", "A.B"); anything that could climb out of that directory is
// refused.
func SubagentPath(parentPath, agentID string) (string, error) {
	if agentID == "" || agentID == "." || agentID == ".." || len(agentID) > 200 ||
		strings.ContainsAny(agentID, "/\\\x00") {
		return "", fmt.Errorf("subagent id %q is not a plain file name", agentID)
	}
	if !strings.HasSuffix(parentPath, ".jsonl") {
		return "", fmt.Errorf("subagent of %s: the parent is not a .jsonl session file", parentPath)
	}
	return filepath.Join(strings.TrimSuffix(parentPath, ".jsonl"), agentID+".jsonl"), nil
}

// CreateSubagent creates the transcript of subagent agentID of the session
// at parentPath, as omp's task executor does: at SubagentPath, with the
// parent's file path as parentSession, and init as its first entry, all in
// one atomic write. The cwd defaults to the parent's. Nothing in the slot
// or header says "subagent" (omp would refuse such a slot); the location
// does. An existing transcript is never replaced.
func CreateSubagent(parentPath, agentID string, init *SessionInit, opts NewOptions) (*Store, error) {
	path, err := SubagentPath(parentPath, agentID)
	if err != nil {
		return nil, err
	}
	parent, err := filepath.Abs(parentPath)
	if err != nil {
		return nil, err
	}
	if opts.Cwd == "" {
		info := Stat(parent)
		if info.Err != nil {
			return nil, fmt.Errorf("subagent %s: %w", agentID, info.Err)
		}
		opts.Cwd = info.Cwd
	}
	opts.ParentSession = parent
	if opts.TitleSource == TitleSubagent {
		opts.TitleSource = TitleNone
	}
	s, err := New(path, opts)
	if err != nil {
		return nil, err
	}
	if init != nil {
		if _, err := s.Append(init); err != nil {
			return nil, err
		}
	}
	if err := s.EnsureOnDisk(); err != nil {
		return nil, err
	}
	return s, nil
}
