// Prints what omp's model catalog (@oh-my-pi/pi-catalog) says calls cost,
// as JSON, one number per call: calculateUsageCost of the bundled model's
// cost for each call read as JSON from the file named (else stdin),
// [{provider, id, usage: {input, output, cacheRead, cacheWrite, cttl?}, timestamp}],
// the total, or null for a model the catalog does not have.
// Usage: bun scripts/prices.ts calls.json
import * as fs from "node:fs";
import { calculateUsageCost, getBundledModel } from "@oh-my-pi/pi-catalog";

const calls = JSON.parse(process.argv[2] ? fs.readFileSync(process.argv[2], "utf8") : await Bun.stdin.text());
const out = calls.map((c: any) => {
	const model = getBundledModel(c.provider, c.id);
	if (!model) return null;
	const usage = { ...c.usage, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
	return calculateUsageCost(model.cost, usage, c.timestamp).total;
});
console.log(JSON.stringify(out));
