// Prints omp's own conversion of Claude Code sessions, as JSON, one object
// per session: {id, path, cwd, title, entries}. Usage:
//   bun scripts/claude-import.ts ROOT   (ROOT holds projects/<project>/*.jsonl)
// The sessions are listed and loaded with omp's ClaudeSessionStore exactly
// as `omp` imports them, before persisting, so a differential test can
// compare xdev's conversion entry for entry.
import { ClaudeSessionStore } from "@oh-my-pi/pi-coding-agent/session/claude-session-store";

const store = new ClaudeSessionStore(process.argv[2]);
const out: unknown[] = [];
for (const info of await store.list()) {
	try {
		const sm = await store.load(info);
		out.push({ id: info.id, path: info.path, cwd: sm.getCwd(), title: sm.getSessionName() ?? null, entries: sm.getEntries() });
	} catch (error) {
		out.push({ id: info.id, path: info.path, error: String(error) });
	}
}
process.stdout.write(JSON.stringify(out) + "\n");
