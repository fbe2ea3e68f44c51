// Prints omp's own view of session files, as JSON, one object per file:
// {file, leafId, title, titleSource, model, thinkingLevel, messages,
// needsRewrite, error?}.
// Usage: bun scripts/context.ts FILE...
//        bun scripts/context.ts --dir DIR   (every *.jsonl in DIR, sorted)
// The file is opened with omp's SessionManager.open exactly as `omp --resume`
// does, and the context is omp's buildSessionContext. Values are printed as
// omp holds them (a numeric leaf id stays a number), so a differential test
// can compare them exactly.
import * as fs from "node:fs";
import * as path from "node:path";
import { SessionManager } from "@oh-my-pi/pi-coding-agent/session/session-manager";

let files = process.argv.slice(2);
if (files[0] === "--dir") {
	const dir = files[1];
	files = fs
		.readdirSync(dir)
		.filter(f => f.endsWith(".jsonl"))
		.sort()
		.map(f => path.join(dir, f));
}

const out: string[] = [];
for (const file of files) {
	let view: unknown;
	try {
		const sm = await SessionManager.open(file);
		const ctx = sm.buildSessionContext();
		view = {
			file,
			leafId: sm.getLeafId(),
			title: sm.getSessionName() ?? "",
			titleSource: sm.titleSource ?? "",
			model: ctx.models?.default ?? "",
			thinkingLevel: ctx.thinkingLevel,
			messages: ctx.messages,
			// omp rewrites the whole file on its next write (a migration,
			// malformed lines, sanitized replay metadata).
			needsRewrite: sm.captureState().needsRewrite,
		};
	} catch (err) {
		view = { file, error: String((err as Error)?.message ?? err) };
	}
	out.push(JSON.stringify(view));
}
process.stdout.write(`[${out.join(",")}]`);
