// Prints omp's own conversion of foreign sessions, as JSON, one object per
// session as omp lists it: {id, path, cwd, title, created, modified,
// listedCwd, listedTitle, entries}. Usage:
//   bun scripts/foreign-import.ts claude ROOT   (ROOT holds projects/<project>/*.jsonl)
//   bun scripts/foreign-import.ts codex ROOT    (ROOT holds sessions/YYYY/MM/DD/rollout-*.jsonl)
// The sessions are listed and loaded with omp's ClaudeSessionStore or
// CodexSessionStore exactly as `omp` imports them, before persisting, so a
// differential test can compare xdev's listing and conversion entry for
// entry.
import { ClaudeSessionStore } from "@oh-my-pi/pi-coding-agent/session/claude-session-store";
import { CodexSessionStore } from "@oh-my-pi/pi-coding-agent/session/codex-session-store";

const [source, root] = process.argv.slice(2);
const store = source === "codex" ? new CodexSessionStore(root) : new ClaudeSessionStore(root);
const out: unknown[] = [];
for (const info of await store.list()) {
	const listed = {
		id: info.id,
		path: info.path,
		listedCwd: info.cwd,
		listedTitle: info.title ?? null,
		created: info.created.getTime(),
		modified: info.modified.getTime(),
		firstMessage: info.firstMessage ?? null,
	};
	try {
		const sm = await store.load(info);
		out.push({ ...listed, cwd: sm.getCwd(), title: sm.getSessionName() ?? null, entries: sm.getEntries() });
	} catch (error) {
		out.push({ ...listed, error: String(error) });
	}
}
process.stdout.write(JSON.stringify(out) + "\n");
