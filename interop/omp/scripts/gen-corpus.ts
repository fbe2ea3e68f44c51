// Generates the omp-written corpus the interop suite checks xdev against.
// Usage: run-bun.sh scripts/gen-corpus.ts OUT_AGENT_DIR
// Every file is written by omp 18.2.3's own SessionManager; nothing here
// writes session bytes itself except the legacy v1 input that omp migrates.
import * as fs from "node:fs";
import * as path from "node:path";
import * as zlib from "node:zlib";
import { SessionManager } from "@oh-my-pi/pi-coding-agent/session/session-manager";

const out = path.resolve(process.argv[2]);
process.env.PI_CODING_AGENT_DIR = out;
// The sessions of a project at ~/proj for a user whose home is /home/dev:
// omp names that directory "-proj". omp reopens a session in its cwd only
// when that directory exists, so it is made for the run (as are its
// parents) and removed again at the end.
const sessionDir = path.join(out, "sessions", "-proj");
fs.mkdirSync(sessionDir, { recursive: true });
const cwd = "/home/dev/proj";
const madeDirs: string[] = [];
for (let d = cwd; !fs.existsSync(d); d = path.dirname(d)) madeDirs.push(d);
fs.mkdirSync(cwd, { recursive: true });

// A clock of our own, so the samples read like a month of real use rather
// than one second: every timestamp omp writes (entries, headers, file
// names, session ids) comes from it. Each message moves it on a little;
// each new session starts some hours or days later.
const RealDate = Date;
let clock = RealDate.parse("2026-10-06T08:52:13.000Z");
class SampleDate extends RealDate {
	constructor(...args: unknown[]) {
		if (args.length === 0) super(clock);
		else super(...(args as [string]));
	}
	static now() {
		return clock;
	}
}
globalThis.Date = SampleDate as DateConstructor;
// Session ids are UUIDv7s, whose first digits are a time: the same clock.
const randomUUIDv7 = Bun.randomUUIDv7.bind(Bun);
Object.defineProperty(Bun, "randomUUIDv7", {
	value: (encoding?: "hex", timestamp?: number) => randomUUIDv7(encoding ?? "hex", timestamp ?? clock),
});
const t = () => (clock += 7000 + (clock % 23) * 1000);
const later = (hours: number) => (clock += hours * 3600_000);

// A real PNG: width x height RGB, pixels from paint(x, y).
function png(width: number, height: number, paint: (x: number, y: number) => [number, number, number]): Buffer {
	const crcTable = Array.from({ length: 256 }, (_, n) => {
		let c = n;
		for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
		return c >>> 0;
	});
	const crc = (b: Buffer) => {
		let c = 0xffffffff;
		for (const x of b) c = crcTable[(c ^ x) & 0xff] ^ (c >>> 8);
		return (c ^ 0xffffffff) >>> 0;
	};
	const chunk = (type: string, data: Buffer) => {
		const len = Buffer.alloc(4);
		len.writeUInt32BE(data.length);
		const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
		const sum = Buffer.alloc(4);
		sum.writeUInt32BE(crc(body));
		return Buffer.concat([len, body, sum]);
	};
	const ihdr = Buffer.alloc(13);
	ihdr.writeUInt32BE(width, 0);
	ihdr.writeUInt32BE(height, 4);
	ihdr[8] = 8; // bit depth
	ihdr[9] = 2; // RGB
	const raw = Buffer.alloc((width * 3 + 1) * height);
	for (let y = 0; y < height; y++) {
		raw[y * (width * 3 + 1)] = 0; // no filter
		for (let x = 0; x < width; x++) {
			const [r, g, b] = paint(x, y);
			raw.set([r, g, b], y * (width * 3 + 1) + 1 + x * 3);
		}
	}
	return Buffer.concat([
		Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
		chunk("IHDR", ihdr),
		chunk("IDAT", zlib.deflateSync(raw)),
		chunk("IEND", Buffer.alloc(0)),
	]);
}
const usage = (n: number) => ({
	input: n, output: n / 10, cacheRead: 0, cacheWrite: 0, totalTokens: n + n / 10,
	cost: { input: n * 3e-6, output: n * 1.5e-5, cacheRead: 0, cacheWrite: 0, total: n * 4.5e-6 },
});
const user = (text: string | unknown[]) => ({ role: "user", content: text, timestamp: t() });
const assistant = (content: unknown[], stopReason = "stop", extra: Record<string, unknown> = {}) => ({
	role: "assistant", content, api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5",
	usage: usage(1000), stopReason, timestamp: t(), ...extra,
});
const toolCall = (id: string, cmd: string) => ({ type: "toolCall", id, name: "bash", arguments: { command: cmd } });
const toolResult = (id: string, text: string, isError = false) => ({
	role: "toolResult", toolCallId: id, toolName: "bash", content: [{ type: "text", text }], isError, timestamp: t(),
});
const text = (s: string) => ({ type: "text", text: s });
const manifest: Record<string, string> = {};

async function done(name: string, sm: SessionManager, what: string) {
	await sm.flush();
	const file = sm.getSessionFile()!;
	const dest = path.join(path.dirname(file), `${name}.jsonl`);
	await sm.close();
	fs.renameSync(file, dest);
	manifest[path.relative(out, dest)] = what;
	return dest;
}

// 01: every entry type of a normal session.
let sm = SessionManager.create(cwd, sessionDir);
sm.appendModelChange("anthropic/claude-sonnet-4-5");
sm.appendThinkingLevelChange("high", "high");
sm.appendServiceTierChange({ anthropic: "priority" } as never);
const u1 = sm.appendMessage(user("List the files <in> \"src\" & count them — ünï 漢字 😀") as never);
sm.appendCustomEntry("tool_execution_start", { toolCallId: "call_1", toolName: "bash", startedAt: t() });
const a1 = sm.appendMessage(assistant([{ type: "thinking", thinking: "Use ls.", thinkingSignature: "sig-a" }, toolCall("call_1", "ls src | wc -l")], "toolUse") as never);
sm.appendMessage(toolResult("call_1", "3\n\\path\\with\\backslashes\t\u0001") as never);
sm.appendMessage(assistant([text("There are 3 files.")]) as never);
sm.appendLabelChange(u1, "start");
sm.appendModeChange("plan", { step: 1 });
sm.appendTtsrInjection(["no-force-push"]);
sm.appendCredentialPin("anthropic", "abc123");
sm.appendCustomMessageEntry("ext-note", "A hidden note for the model.", false, { k: 1 });
sm.appendCustomMessageEntry("ext-visible", [text("A visible note.")], true, undefined, "user");
sm.appendModelChange("openai/gpt-5", "smol");
sm.appendMessage(user("thanks") as never);
sm.appendMessage(assistant([text("You're welcome.")]) as never);
await sm.setSessionName("Counting files", "auto");
sm.appendCustomEntry("session_exit", { reason: "exit", kind: "clean", recordedAt: t() });
const f01 = await done("01-all-entry-types", sm, "every entry type, tool calls, labels, auto title");
void a1;

later(5 + (clock % 31));
// 02: a branch with a summary (omp's durable leaf move).
sm = SessionManager.create(cwd, sessionDir);
const b1 = sm.appendMessage(user("start") as never);
const b2 = sm.appendMessage(assistant([text("ok")]) as never);
sm.appendMessage(user("try path A") as never);
sm.appendMessage(assistant([text("path A failed")]) as never);
sm.branchWithSummary(b2, "Path A was tried and failed.");
sm.appendMessage(user("try path B") as never);
sm.appendMessage(assistant([text("path B works")]) as never);
sm.branchWithSummary(b2, "");
void b1;
await done("02-branch-summary", sm, "branch_summary with and without a summary");

later(5 + (clock % 31));
// 03: compaction keeping a window.
sm = SessionManager.create(cwd, sessionDir);
sm.appendMessage(user("q1") as never);
sm.appendMessage(assistant([text("a1")]) as never);
const k = sm.appendMessage(user("q2") as never);
sm.appendMessage(assistant([text("a2")]) as never);
sm.appendCompaction("Summary of q1.", "q1", k, 12000, { tokensAfter: 3000, method: "soft" });
sm.appendMessage(user("q3") as never);
sm.appendMessage(assistant([text("a3")]) as never);
await done("03-compaction", sm, "compaction with firstKeptEntryId");

later(5 + (clock % 31));
// 04: reset boundary, then a compaction reaching back before it.
sm = SessionManager.create(cwd, sessionDir);
const r1 = sm.appendMessage(user("before clear") as never);
sm.appendMessage(assistant([text("old")]) as never);
sm.appendResetBoundary();
sm.appendMessage(user("after clear") as never);
sm.appendMessage(assistant([text("new")]) as never);
await done("04-reset", sm, "reset_boundary");
sm = await SessionManager.open(path.join(sessionDir, "04-reset.jsonl"));
void r1;

later(5 + (clock % 31));
// 05: user title wins over a later auto title.
sm = SessionManager.create(cwd, sessionDir);
sm.appendMessage(user("hello") as never);
sm.appendMessage(assistant([text("hi")]) as never);
await sm.setSessionName("Auto title", "auto");
await sm.setSessionName("My own title", "user");
await sm.setSessionName("Later auto title", "auto");
await done("05-titles", sm, "auto then user title; a later auto title is ignored");

later(5 + (clock % 31));
// 06: an image large enough for the blob store (a screenshot-like picture:
// a window with a title bar and lines of text), and a tiny one kept inline.
let seed = 7;
const noise = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 9);
const b64 = png(96, 64, (x, y) => {
	if (x < 2 || y < 2 || x > 93 || y > 61) return [90, 90, 110];
	if (y < 12) return [70 + noise(), 110 + noise(), 190];
	const text = y % 8 < 3 && x > 8 && x < 20 + ((y * 37) % 60);
	return text ? [40, 40, 48] : [245 - noise(), 245 - noise(), 240];
}).toString("base64");
const tiny = png(4, 4, (x, y) => ((x + y) % 2 ? [220, 40, 40] : [255, 255, 255])).toString("base64");
sm = SessionManager.create(cwd, sessionDir);
sm.appendMessage(user([text("What is in this picture?"), { type: "image", data: b64, mimeType: "image/png" }]) as never);
sm.appendMessage(assistant([toolCall("call_img", "screenshot")], "toolUse") as never);
sm.appendMessage({ role: "toolResult", toolCallId: "call_img", toolName: "bash", content: [text("shot"), { type: "image", data: b64, mimeType: "image/png" }, { type: "image", data: tiny, mimeType: "image/png" }], isError: false, timestamp: t() } as never);
sm.appendMessage(assistant([text("A window with a blue title bar and a few lines of text.")]) as never);
await done("06-image-blob", sm, "images externalized to the blob store");

later(5 + (clock % 31));
// 07: aborted and errored turns, a dangling tool call.
sm = SessionManager.create(cwd, sessionDir);
sm.appendMessage(user("run it") as never);
sm.appendMessage(assistant([text("partial"), toolCall("call_x", "sleep 99")], "aborted") as never);
sm.appendMessage(toolResult("call_x", "aborted", true) as never);
sm.appendMessage(user("again") as never);
sm.appendMessage(assistant([], "error", { errorMessage: "overloaded" }) as never);
sm.appendMessage(assistant([{ type: "thinking", thinking: "t", thinkingSignature: "s" }, text("calling"), toolCall("call_y", "make")], "toolUse") as never);
await done("07-failed-turns", sm, "aborted/error turns, dangling tool call at the leaf");

later(5 + (clock % 31));
// 08: fork of 01 (new file, parentSession = source id).
sm = await SessionManager.open(f01);
await sm.fork();
sm.appendMessage(user("continuing in the fork") as never);
await done("08-fork", sm, "fork(): copy with a new id");

later(5 + (clock % 31));
// 09: branched session from an entry of 02 (parentSession = source path).
sm = await SessionManager.open(path.join(sessionDir, "02-branch-summary.jsonl"));
const branchedFile = sm.createBranchedSession(b2)!;
await sm.flush();
await sm.close();
fs.renameSync(branchedFile, path.join(sessionDir, "09-branched.jsonl"));
manifest["sessions/-proj/09-branched.jsonl"] = "createBranchedSession at an entry";

later(5 + (clock % 31));
// 10: a subagent transcript under its parent's artifacts dir.
const parent = path.join(sessionDir, "03-compaction.jsonl");
const subFile = path.join(sessionDir, "03-compaction", "Scout.jsonl");
fs.mkdirSync(path.dirname(subFile), { recursive: true });
sm = await SessionManager.open(subFile, undefined, undefined, { initialCwd: cwd, parentSession: parent, suppressBreadcrumb: true });
sm.appendSessionInit({ systemPrompt: "You are Scout.", task: "Find the config", tools: ["read", "grep"], agent: "scout" });
sm.appendMessage(user("Find the config") as never);
sm.appendMessage(assistant([text("It is in config.toml.")]) as never);
await sm.flush();
await sm.close();
manifest[path.relative(out, subFile)] = "subagent transcript";

// 11: a legacy v1 file, migrated by omp on its first write.
const v1 = path.join(sessionDir, "11-migrated-v1.jsonl");
fs.writeFileSync(v1, [
	{ type: "session", id: "legacy-1", timestamp: "2025-12-01T00:00:00.000Z", cwd },
	{ type: "message", timestamp: "2025-12-01T00:00:01.000Z", message: user("old question") },
	{ type: "message", timestamp: "2025-12-01T00:00:02.000Z", message: assistant([text("old answer")]) },
	{ type: "compaction", timestamp: "2025-12-01T00:00:03.000Z", summary: "old summary", firstKeptEntryIndex: 2, tokensBefore: 50 },
	{ type: "message", timestamp: "2025-12-01T00:00:04.000Z", message: { role: "hookMessage", customType: "hook", content: "from a hook", display: true, timestamp: t() } },
].map(e => JSON.stringify(e)).join("\n") + "\n");
sm = await SessionManager.open(v1);
sm.appendMessage(user("new question after migration") as never);
await sm.flush();
await sm.close();
manifest[path.relative(out, v1)] = "v1 file migrated to v3 by omp";

fs.writeFileSync(path.join(out, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
for (const d of madeDirs) fs.rmdirSync(d);
console.log(Object.keys(manifest).length, "files");
