// Times one omp session operation in a fresh process, printing the same
// JSON as cmd/xdev-bench: {op, ms, p50us, count, peakRssKiB}.
// Usage: bun scripts/bench.ts open FILE | list AGENTDIR | append FILE N
// ms is the operation alone, measured inside the process.
import * as fs from "node:fs";
import { SessionManager } from "@oh-my-pi/pi-coding-agent/session/session-manager";
import { listAllSessions } from "@oh-my-pi/pi-coding-agent/session/session-listing";
import { FileSessionStorage } from "@oh-my-pi/pi-coding-agent/session/session-storage";

function peakRssKiB(): number {
	const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync("/proc/self/status", "utf8"));
	return m ? Number(m[1]) : 0;
}

const [op, arg, nText] = process.argv.slice(2);
let t0 = performance.now();
let count = 0;
let p50us: number | undefined;
if (op === "open") {
	const sm = await SessionManager.open(arg);
	count = sm.buildSessionContext().messages.length;
} else if (op === "list") {
	count = (await listAllSessions(new FileSessionStorage(), `${arg}/sessions`)).length;
} else if (op === "append") {
	const n = Number(nText);
	const sm = await SessionManager.open(arg);
	const lat: number[] = [];
	t0 = performance.now();
	for (let i = 0; i < n; i++) {
		const a = performance.now();
		sm.appendMessage({ role: "user", content: `appended message ${i}`, timestamp: Date.now() } as never);
		lat.push(performance.now() - a);
	}
	await sm.flush();
	lat.sort((x, y) => x - y);
	p50us = lat[Math.floor(n / 2)] * 1000;
	count = n;
} else {
	console.error(`unknown operation ${op}`);
	process.exit(2);
}
const ms = performance.now() - t0;
process.stdout.write(JSON.stringify({ op, ms, p50us, count, peakRssKiB: peakRssKiB() }) + "\n");
