// Prints omp's own view of session files, as JSON, one object per file:
// {file, leafId, title, titleSource, model, thinkingLevel, messages, error?}.
// Usage: bun scripts/context.ts FILE...
// The file is opened with omp's SessionManager.open exactly as `omp --resume`
// does, and the context is omp's buildSessionContext.
import { SessionManager } from "@oh-my-pi/pi-coding-agent/session/session-manager";

const out: unknown[] = [];
for (const file of process.argv.slice(2)) {
	try {
		const sm = await SessionManager.open(file);
		const ctx = sm.buildSessionContext();
		out.push({
			file,
			leafId: sm.getLeafId(),
			title: sm.getSessionName() ?? "",
			titleSource: sm.titleSource ?? "",
			model: ctx.models?.default ?? "",
			thinkingLevel: ctx.thinkingLevel,
			messages: ctx.messages,
		});
	} catch (err) {
		out.push({ file, error: String((err as Error)?.message ?? err) });
	}
}
process.stdout.write(JSON.stringify(out));
