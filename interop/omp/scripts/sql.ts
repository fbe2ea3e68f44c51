// omp's SqlSessionStorage on PostgreSQL, through Bun's SQL client, for the
// interop tests and the side-by-side benchmark. Every command prints JSON.
//   bun scripts/sql.ts URL list DIR...            SessionManager.list of each DIR: [{path, id, title, cwd}]
//   bun scripts/sql.ts URL context PATH...        as context.ts, each PATH opened from the table
//   bun scripts/sql.ts URL write DIR CWD TEXT [TITLE]   a new session in DIR: {path}
//   bun scripts/sql.ts URL append PATH TEXT [TITLE]     resume PATH and add an exchange: {ids}
//   bun scripts/sql.ts URL bench PATH N           resume PATH (timed), then append N entries (timed):
//                                                 {resumeMs, appendMs: [...]}
import { SQL } from "bun";
import { SessionManager } from "@oh-my-pi/pi-coding-agent/session/session-manager";
import { SqlSessionStorage } from "@oh-my-pi/pi-coding-agent/session/sql-session-storage";

const [url, cmd, ...args] = process.argv.slice(2);
const client = new SQL(url);
const storage = await SqlSessionStorage.create({ client: client as never });
const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

function exchange(sm: SessionManager, text: string, now: number) {
	sm.appendMessage({ role: "user", content: text, timestamp: now } as never);
	sm.appendMessage({
		role: "assistant", content: [{ type: "text", text: `omp answers: ${text}` }], api: "anthropic-messages",
		provider: "anthropic", model: "claude-sonnet-4-5", stopReason: "stop", timestamp: now + 1, usage,
	} as never);
}

let out: unknown;
switch (cmd) {
	case "list": {
		const all: unknown[] = [];
		for (const dir of args) {
			for (const s of await SessionManager.list("/", dir, storage)) {
				all.push({ path: s.path, id: s.id, title: s.title ?? "", cwd: s.cwd });
			}
		}
		out = all;
		break;
	}
	case "context": {
		const views: unknown[] = [];
		for (const file of args) {
			try {
				const sm = await SessionManager.open(file, undefined, storage);
				const ctx = sm.buildSessionContext();
				views.push({
					file, leafId: sm.getLeafId(), title: sm.getSessionName() ?? "", titleSource: sm.titleSource ?? "",
					model: ctx.models?.default ?? "", thinkingLevel: ctx.thinkingLevel, messages: ctx.messages,
				});
			} catch (err) {
				views.push({ file, error: String((err as Error)?.message ?? err) });
			}
		}
		out = views;
		break;
	}
	case "write": {
		const [dir, cwd, text, title] = args;
		const sm = SessionManager.create(cwd, dir, storage);
		// Flushed after each exchange: omp 18.2.3 writes a new session's file
		// whole at its first assistant message, and an append queued behind
		// that write before it lands is refused as a conflict.
		exchange(sm, text, Date.now());
		await sm.flush();
		exchange(sm, `${text} again`, Date.now() + 2);
		if (title) await sm.setSessionName(title, "user");
		await sm.flush();
		out = { path: sm.getSessionFile() };
		await sm.close();
		break;
	}
	case "append": {
		const [file, text, title] = args;
		const sm = await SessionManager.open(file, undefined, storage);
		exchange(sm, text, Date.now());
		if (title) await sm.setSessionName(title, "user");
		await sm.flush();
		await sm.close();
		const again = await SessionManager.open(file, undefined, storage);
		out = { ids: again.getEntries().map(e => e.id) };
		break;
	}
	case "bench": {
		const [file, n] = args;
		let t = performance.now();
		const sm = await SessionManager.open(file, undefined, storage);
		sm.buildSessionContext();
		const resumeMs = performance.now() - t;
		const appendMs: number[] = [];
		for (let i = 0; i < Number(n); i++) {
			t = performance.now();
			sm.appendMessage({ role: "user", content: `bench ${i}`, timestamp: Date.now() } as never);
			await sm.flush();
			await storage.drain();
			appendMs.push(performance.now() - t);
		}
		await sm.close();
		out = { resumeMs, appendMs };
		break;
	}
	default:
		throw new Error(`unknown command ${cmd}`);
}
await storage.drain();
await client.end();
process.stdout.write(JSON.stringify(out) + "\n");
