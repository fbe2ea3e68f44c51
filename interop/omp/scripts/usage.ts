// Prints the model calls omp's own usage statistics (@oh-my-pi/omp-stats,
// parser.ts's parseSessionFile) read from session files, as JSON: one
// object per call, {file, entryId, model, provider, api, timestamp, input,
// output, cacheRead, cacheWrite, totalTokens, cost}, cost the recorded
// usage.cost.total or null when the entry records none.
// Usage: bun scripts/usage.ts FILE...
import { parseSessionFile } from "@oh-my-pi/omp-stats/parser";

const out: unknown[] = [];
for (const file of process.argv.slice(2)) {
	const { stats } = await parseSessionFile(file);
	for (const s of stats) {
		const u = s.usage as any;
		out.push({
			file,
			entryId: s.entryId,
			model: s.model,
			provider: s.provider,
			api: s.api,
			timestamp: s.timestamp,
			input: u.input,
			output: u.output,
			cacheRead: u.cacheRead,
			cacheWrite: u.cacheWrite,
			totalTokens: u.totalTokens,
			cost: typeof u.cost?.total === "number" ? u.cost.total : null,
		});
	}
}
console.log(JSON.stringify(out));
