-- A Crush database made by hand from Crush's schema (migration
-- 20250627000000 plus the newer is_summary_message column) and what its
-- message service writes (internal/message/content.go): reasoning, an
-- image part (left out), a tool call whose input is not JSON, a failed
-- tool result with no name, a change of model, an agent tool's child
-- session, a summary message, and a row whose parts are not JSON.
CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL, message_count INTEGER NOT NULL DEFAULT 0,
  prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
  updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL, summary_message_id TEXT);
CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL, parts TEXT NOT NULL default '[]', model TEXT,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, finished_at INTEGER, provider TEXT, is_summary_message INTEGER NOT NULL DEFAULT 0);
INSERT INTO sessions VALUES ('c0ffee00-hand-4000-8000-000000000001', NULL, 'Hand-made Crush session', 9, 1200, 340, 0.05, 1760000100, 1760000000, NULL);
INSERT INTO sessions VALUES ('c0ffee00-hand-4000-8000-000000000002', 'c0ffee00-hand-4000-8000-000000000001', 'New Agent Session', 2, 300, 40, 0.01, 1760000060, 1760000050, NULL);
INSERT INTO messages VALUES ('m1', 'c0ffee00-hand-4000-8000-000000000001', 'user', '[{"type":"text","data":{"text":"find the flaky test"}},{"type":"image_url","data":{"url":"file:///x.png"}}]', '', 1760000000, 1760000000, NULL, NULL, 0);
INSERT INTO messages VALUES ('m2', 'c0ffee00-hand-4000-8000-000000000001', 'assistant', '[{"type":"reasoning","data":{"thinking":"grep first","signature":""}},{"type":"text","data":{"text":"Looking."}},{"type":"tool_call","data":{"id":"call_1","name":"grep","input":"{\"pattern\":\"flaky\"}","type":"function","finished":true}},{"type":"tool_call","data":{"id":"call_2","name":"bash","input":"not json","type":"function","finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1760000010}}]', 'gpt-5', 1760000005, 1760000010, 1760000010, 'openai', 0);
INSERT INTO messages VALUES ('m3', 'c0ffee00-hand-4000-8000-000000000001', 'tool', '[{"type":"tool_result","data":{"tool_call_id":"call_1","name":"grep","content":"a_test.go:12","metadata":"","is_error":false}},{"type":"tool_result","data":{"tool_call_id":"call_2","name":"","content":"exit 127","metadata":"","is_error":true}}]', '', 1760000011, 1760000011, NULL, 'openai', 0);
INSERT INTO messages VALUES ('m4', 'c0ffee00-hand-4000-8000-000000000001', 'assistant', 'not json', 'gpt-5', 1760000012, 1760000012, NULL, 'openai', 0);
INSERT INTO messages VALUES ('m5', 'c0ffee00-hand-4000-8000-000000000001', 'assistant', '[{"type":"text","data":{"text":"The test in a_test.go races."}},{"type":"finish","data":{"reason":"end_turn","time":1760000020}}]', 'claude-sonnet-4-20250514', 1760000020, 1760000020, 1760000020, 'anthropic', 0);
INSERT INTO messages VALUES ('m6', 'c0ffee00-hand-4000-8000-000000000001', 'assistant', '[{"type":"text","data":{"text":"Summary: the user asked about a flaky test; it races in a_test.go."}}]', 'claude-sonnet-4-20250514', 1760000030, 1760000030, 1760000030, 'anthropic', 1);
INSERT INTO messages VALUES ('m7', 'c0ffee00-hand-4000-8000-000000000001', 'user', '[{"type":"text","data":{"text":"fix it"}}]', '', 1760000040, 1760000040, NULL, NULL, 0);
INSERT INTO messages VALUES ('m8', 'c0ffee00-hand-4000-8000-000000000002', 'user', '[{"type":"text","data":{"text":"search for races"}}]', '', 1760000050, 1760000050, NULL, NULL, 0);
INSERT INTO messages VALUES ('m9', 'c0ffee00-hand-4000-8000-000000000002', 'assistant', '[{"type":"text","data":{"text":"one race in a_test.go"}}]', 'gpt-5', 1760000055, 1760000055, 1760000055, 'openai', 0);
