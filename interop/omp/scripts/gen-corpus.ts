// Generates the omp-written corpus the interop suite checks xdev against.
// Usage: run-bun.sh scripts/gen-corpus.ts OUT_AGENT_DIR
// Every file is written by omp 18.2.3's own SessionManager; nothing here
// writes session bytes itself except the legacy v1 input that omp migrates.
import * as fs from "node:fs";
import * as path from "node:path";
import { SessionManager } from "@oh-my-pi/pi-coding-agent/session/session-manager";

const out = path.resolve(process.argv[2]);
process.env.PI_CODING_AGENT_DIR = out;
const sessionDir = path.join(out, "sessions", "-proj");
fs.mkdirSync(sessionDir, { recursive: true });
const cwd = path.join(process.env.HOME!, "proj");
fs.mkdirSync(cwd, { recursive: true });

let clock = Date.parse("2026-11-01T10:00:00.000Z");
const t = () => (clock += 1000);
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

// 05: user title wins over a later auto title.
sm = SessionManager.create(cwd, sessionDir);
sm.appendMessage(user("hello") as never);
sm.appendMessage(assistant([text("hi")]) as never);
await sm.setSessionName("Auto title", "auto");
await sm.setSessionName("My own title", "user");
await sm.setSessionName("Later auto title", "auto");
await done("05-titles", sm, "auto then user title; a later auto title is ignored");

// 06: an image large enough for the blob store.
const png = Buffer.alloc(6000, 7);
png.write("\x89PNG\r\n\x1a\n", 0, "binary");
const b64 = png.toString("base64");
sm = SessionManager.create(cwd, sessionDir);
sm.appendMessage(user([text("What is in this picture?"), { type: "image", data: b64, mimeType: "image/png" }]) as never);
sm.appendMessage(assistant([toolCall("call_img", "screenshot")], "toolUse") as never);
sm.appendMessage({ role: "toolResult", toolCallId: "call_img", toolName: "bash", content: [text("shot"), { type: "image", data: b64, mimeType: "image/png" }, { type: "image", data: "aGk=", mimeType: "image/png" }], isError: false, timestamp: t() } as never);
sm.appendMessage(assistant([text("A grey square.")]) as never);
await done("06-image-blob", sm, "images externalized to the blob store");

// 07: aborted and errored turns, a dangling tool call.
sm = SessionManager.create(cwd, sessionDir);
sm.appendMessage(user("run it") as never);
sm.appendMessage(assistant([text("partial"), toolCall("call_x", "sleep 99")], "aborted") as never);
sm.appendMessage(toolResult("call_x", "aborted", true) as never);
sm.appendMessage(user("again") as never);
sm.appendMessage(assistant([], "error", { errorMessage: "overloaded" }) as never);
sm.appendMessage(assistant([{ type: "thinking", thinking: "t", thinkingSignature: "s" }, text("calling"), toolCall("call_y", "make")], "toolUse") as never);
await done("07-failed-turns", sm, "aborted/error turns, dangling tool call at the leaf");

// 08: fork of 01 (new file, parentSession = source id).
sm = await SessionManager.open(f01);
await sm.fork();
sm.appendMessage(user("continuing in the fork") as never);
await done("08-fork", sm, "fork(): copy with a new id");

// 09: branched session from an entry of 02 (parentSession = source path).
sm = await SessionManager.open(path.join(sessionDir, "02-branch-summary.jsonl"));
const branchedFile = sm.createBranchedSession(b2)!;
await sm.flush();
await sm.close();
fs.renameSync(branchedFile, path.join(sessionDir, "09-branched.jsonl"));
manifest["sessions/-proj/09-branched.jsonl"] = "createBranchedSession at an entry";

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
console.log(Object.keys(manifest).length, "files");
