// Prints omp's listing of every session under the agent dir (what its
// resume picker shows): [{path, id, title, cwd, parentSession, status}].
import { SessionManager } from "@oh-my-pi/pi-coding-agent/session/session-manager";

const all = await SessionManager.listAll();
process.stdout.write(JSON.stringify(all.map(s => ({
	path: s.path, id: s.id, title: s.title ?? "", cwd: s.cwd, parentSession: s.parentSessionPath ?? "",
	status: s.status ?? "",
}))));
