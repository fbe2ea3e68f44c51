// Appends one user/assistant exchange to a session with omp, optionally
// retitling it, then prints the ids of every entry omp has, in file order.
// Usage: bun scripts/append.ts FILE TEXT [TITLE]
import { SessionManager } from "@oh-my-pi/pi-coding-agent/session/session-manager";

const [file, text, title] = process.argv.slice(2);
const sm = await SessionManager.open(file);
const now = Date.now();
sm.appendMessage({ role: "user", content: text, timestamp: now } as never);
sm.appendMessage({
	role: "assistant", content: [{ type: "text", text: `omp answers: ${text}` }], api: "anthropic-messages",
	provider: "anthropic", model: "claude-sonnet-4-5", stopReason: "stop", timestamp: now + 1,
	usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
} as never);
if (title) await sm.setSessionName(title, "user");
await sm.flush();
await sm.close();
const again = await SessionManager.open(file);
process.stdout.write(JSON.stringify(again.getEntries().map(e => e.id)));
