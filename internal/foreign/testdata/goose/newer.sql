-- A Goose database of a newer schema than the real one's 5: its later
-- migrations add the session's provider_name and model_config_json
-- ({model_name, context_limit, …}), which ccusage 20.0.24 reads (it
-- skips sessions without them). Tokens as Goose keeps them: the
-- accumulated sums, or only the last call's where none is kept.
CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
INSERT INTO schema_version VALUES (7, '2026-01-10 08:00:00');
CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '', user_set_name BOOLEAN DEFAULT FALSE,
  session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  extension_data TEXT DEFAULT '{}', total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER, accumulated_total_tokens INTEGER,
  accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER, schedule_id TEXT, recipe_json TEXT, user_recipe_values_json TEXT,
  provider_name TEXT, model_config_json TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL,
  content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL, timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER, metadata_json TEXT);
INSERT INTO sessions (id, name, description, working_dir, created_at, updated_at, total_tokens, input_tokens, output_tokens,
  accumulated_total_tokens, accumulated_input_tokens, accumulated_output_tokens, provider_name, model_config_json) VALUES
  ('20260110_1', 'CLI Session', 'Fix the flaky test', '/work/goose-a', '2026-01-10 09:00:00', '2026-01-10 09:20:00', 900, 800, 100, 21000, 18000, 3000,
   'anthropic', '{"model_name":"claude-sonnet-4-20250514","context_limit":200000,"temperature":null,"max_tokens":null,"toolshim":false,"toolshim_model":null}'),
  ('20260110_2', 'CLI Session', 'Explain the build', '/work/goose-b', '2026-01-10 11:00:00', '2026-01-10 11:05:00', 550, 500, 50, NULL, NULL, NULL,
   'openai', '{"model_name":"gpt-4o","context_limit":128000}'),
  ('20260111_1', 'CLI Session', 'No model recorded', '/work/goose-c', '2026-01-11 10:00:00', '2026-01-11 10:01:00', 30, 20, 10, 30, 20, 10, NULL, NULL);
INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES
  ('20260110_1', 'user', '[{"type":"text","text":"fix the flaky test"}]', 1768035600),
  ('20260110_1', 'assistant', '[{"type":"text","text":"Done."}]', 1768035700),
  ('20260110_2', 'user', '[{"type":"text","text":"explain the build"}]', 1768042800),
  ('20260111_1', 'user', '[{"type":"text","text":"hello"}]', 1768125600);
