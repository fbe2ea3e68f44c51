// Imports Claude Code sessions as omp does (persistForeignSession), into
// DIR, and prints the new files: [{source, path}]. Usage:
//   bun scripts/claude-persist.ts ROOT DIR
import { ClaudeSessionStore } from "@oh-my-pi/pi-coding-agent/session/claude-session-store";
import { persistForeignSession } from "@oh-my-pi/pi-coding-agent/session/foreign-session-import";

const store = new ClaudeSessionStore(process.argv[2]);
const out: unknown[] = [];
for (const info of await store.list()) {
	try {
		const sm = await persistForeignSession(store, info, { sessionDir: process.argv[3] });
		await sm.flush?.();
		out.push({ source: info.path, path: sm.getSessionFile?.() ?? null });
	} catch (error) {
		out.push({ source: info.path, error: String(error) });
	}
}
process.stdout.write(JSON.stringify(out) + "\n");
