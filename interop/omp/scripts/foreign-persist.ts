// Imports foreign sessions as omp does (persistForeignSession), into DIR,
// and prints the new files: [{source, path}]. Usage:
//   bun scripts/foreign-persist.ts claude|codex ROOT DIR
import { ClaudeSessionStore } from "@oh-my-pi/pi-coding-agent/session/claude-session-store";
import { CodexSessionStore } from "@oh-my-pi/pi-coding-agent/session/codex-session-store";
import { persistForeignSession } from "@oh-my-pi/pi-coding-agent/session/foreign-session-import";

const [source, root, dir] = process.argv.slice(2);
const store = source === "codex" ? new CodexSessionStore(root) : new ClaudeSessionStore(root);
const out: unknown[] = [];
for (const info of await store.list()) {
	try {
		const sm = await persistForeignSession(store, info, { sessionDir: dir });
		await sm.flush?.();
		out.push({ source: info.path, id: info.id, cwd: info.cwd, path: sm.getSessionFile?.() ?? null });
	} catch (error) {
		out.push({ source: info.path, id: info.id, error: String(error) });
	}
}
process.stdout.write(JSON.stringify(out) + "\n");
