// Prints omp's own usage statistics by model (@oh-my-pi/omp-stats: its
// aggregator's syncAllSessions over every session file of the agent dir
// PI_CODING_AGENT_DIR names, into its SQLite database there, then db.ts's
// getStatsByModel), as JSON: one object per model and provider,
// {model, provider, requests, input, output, cacheRead, cacheWrite, cost}.
// Usage: bun scripts/stats-by-model.ts
import { syncAllSessions } from "@oh-my-pi/omp-stats/aggregator";
import { getStatsByModel } from "@oh-my-pi/omp-stats/db";

await syncAllSessions({ workers: 1 });
const out = getStatsByModel().map((m: any) => ({
	model: m.model,
	provider: m.provider,
	requests: m.totalRequests,
	input: m.totalInputTokens,
	output: m.totalOutputTokens,
	cacheRead: m.totalCacheReadTokens,
	cacheWrite: m.totalCacheWriteTokens,
	cost: m.totalCost,
}));
console.log(JSON.stringify(out));
