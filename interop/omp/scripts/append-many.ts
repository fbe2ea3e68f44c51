// Appends N custom entries tagged TAG to a session with omp, one append
// each (each under omp's publish lock), then reopens the file and prints
// the ids of every entry omp sees, in file order.
// Usage: bun scripts/append-many.ts FILE TAG N
import { SessionManager } from "@oh-my-pi/pi-coding-agent/session/session-manager";

const [file, tag, nText] = process.argv.slice(2);
const sm = await SessionManager.open(file);
for (let i = 0; i < Number(nText); i++) {
	sm.appendCustomEntry("w", { tag, i });
}
await sm.flush();
await sm.close();
const again = await SessionManager.open(file);
process.stdout.write(JSON.stringify(again.getEntries().map(e => e.id)));
