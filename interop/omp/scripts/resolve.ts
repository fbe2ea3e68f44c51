// Prints what omp would resume for a project: the session `--continue`
// picks, and for each argument the session `--resume <arg>` picks.
// Usage: bun scripts/resolve.ts CWD [ARG...]
// Output: {"continue": path|null, "resume": {arg: path|null}}
import { FileSessionStorage } from "@oh-my-pi/pi-coding-agent/session/session-storage";
import { computeDefaultSessionDir } from "@oh-my-pi/pi-coding-agent/session/session-paths";
import { findMostRecentSession, resolveResumableSession } from "@oh-my-pi/pi-coding-agent/session/session-listing";

const [cwd, ...args] = process.argv.slice(2);
const storage = new FileSessionStorage();
const dir = computeDefaultSessionDir(cwd, storage);
const resume: Record<string, string | null> = {};
for (const arg of args) {
	const match = await resolveResumableSession(arg, cwd, undefined, storage);
	resume[arg] = match?.session.path ?? null;
}
process.stdout.write(JSON.stringify({ continue: await findMostRecentSession(dir, storage), resume }));
