-- A Goose database made by hand from Goose's schema 5
-- (crates/goose/src/session/session_manager.rs) and its MessageContent
-- (crates/goose/src/conversation/message.rs): text, thinking, a tool
-- request and its response in the next user message, a failed tool call
-- (status error), an older response whose value is the content list, a
-- message the agent did not see, and a row that is not JSON.
CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
INSERT INTO schema_version VALUES (5, '2025-12-02 16:58:55');
CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '', user_set_name BOOLEAN DEFAULT FALSE,
  session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  extension_data TEXT DEFAULT '{}', total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER, accumulated_total_tokens INTEGER,
  accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER, schedule_id TEXT, recipe_json TEXT, user_recipe_values_json TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL,
  content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL, timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER, metadata_json TEXT);
INSERT INTO sessions VALUES ('20251203_7', 'CLI Session', 'Rename the config loader', 0, 'user', '/work/hand-goose', '2025-12-03 09:00:00', '2025-12-03 09:05:00', '{}',
  900, 800, 100, 2100, 1800, 300, NULL, NULL, NULL);
INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) VALUES
  ('20251203_7', 'user', '[{"type":"text","text":"rename loadConfig to readConfig"}]', 1764752400, '{"userVisible":true,"agentVisible":true}'),
  ('20251203_7', 'assistant', '[{"type":"thinking","thinking":"find callers","signature":"s"},{"type":"text","text":"Searching."},{"type":"toolRequest","id":"t1","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"rg loadConfig"}}}}]', 1764752405, '{"userVisible":true,"agentVisible":true}'),
  ('20251203_7', 'user', '[{"type":"toolResponse","id":"t1","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"cfg.go:3"}],"isError":false}}}]', 1764752406, '{"userVisible":true,"agentVisible":true}'),
  ('20251203_7', 'assistant', '[{"type":"toolRequest","id":"t2","toolCall":{"status":"error","error":"no such tool"}}]', 1764752407, NULL),
  ('20251203_7', 'user', '[{"type":"toolResponse","id":"t2","toolResult":{"status":"error","error":"no such tool"}}]', 1764752408, NULL),
  ('20251203_7', 'user', 'not json', 1764752409, NULL),
  ('20251203_7', 'assistant', '[{"type":"systemNotification","notificationType":"inlineMessage","msg":"compacting"}]', 1764752410, '{"userVisible":true,"agentVisible":false}'),
  ('20251203_7', 'assistant', '[{"type":"toolRequest","id":"t3","toolCall":{"status":"success","value":{"name":"developer__text_editor","arguments":{"path":"cfg.go"}}}}]', 1764752411, NULL),
  ('20251203_7', 'user', '[{"type":"toolResponse","id":"t3","toolResult":{"status":"success","value":[{"type":"text","text":"edited"}]}}]', 1764752412, NULL),
  ('20251203_7', 'assistant', '[{"type":"text","text":"Renamed in cfg.go."}]', 1764752413, NULL);
