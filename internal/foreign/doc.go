// Package foreign reads the sessions of other coding agents, Claude Code,
// Codex, pi, GitHub Copilot CLI, Gemini CLI, opencode, Qwen Code,
// Continue, Kimi CLI, Cline, Crush, Goose and Aider, so that xdev lists,
// shows, exports, searches and imports them beside its own. It reads their files and never writes beside them.
//
// Each harness is a Source (NewSource): List lists its sessions from each
// file's head, tail and the harness's own index (history.jsonl,
// session_index.jsonl), At describes one file, Stream converts one. A
// Session is one listed transcript of any harness; Detect names the
// harness that wrote a file from its first record.
//
// Claude Code and Codex sessions are converted into omp-format entries
// rule for rule as omp 18.2.3's importers do (ClaudeSessionStore.load,
// CodexSessionStore.load), byte for byte, so that an imported session
// resumes in omp and xdev with the context omp's own import gives. The
// conversions stream (StreamClaude, StreamCodex): a few reads of the file,
// memory that follows the number of entries rather than their size.
// ImportStream writes a conversion as a new session of a data dir, as
// omp's persistForeignSession does; a Mirror keeps every session of a
// harness converted in xdev's cache, for the search index. pi writes
// omp's format without the title slot, which the store reads as it is.
//
// Copilot CLI's event logs, Gemini CLI's and Qwen Code's chats,
// Continue's sessions, Kimi CLI's contexts, Cline's tasks, opencode's,
// Crush's and Goose's databases and Aider's chat histories have no omp
// importer to follow: StreamCopilot, StreamGemini, StreamQwen,
// StreamContinue, StreamKimi, StreamCline, StreamOpencode, StreamCrush,
// StreamGoose and StreamAider convert them by this package's own mapping
// (a chain of entries in the source's order), and the check is that real
// omp resumes the import with every message the source holds. A SQLite
// database (opencode's, Crush's, Goose's) is read through a copy in
// xdev's cache, never opened in place (a SQLite reader writes beside a
// WAL database: sqlitesnap.go). A file that holds many sessions (those
// databases, Aider's chat history) names each by its path and the
// session's id (containers.go). Crush and Aider keep their sessions in
// the projects themselves (ProjectReader): the catalog tells them where
// people work.
//
// docs/import.md describes each mapping and what omp's conversion drops.
package foreign
