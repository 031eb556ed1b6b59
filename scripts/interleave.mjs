/**
 * The interleaving model test (issue 14): random command sequences, written to a spawned
 * `parley --mode rpc` (scripted model, an extension that opens dialogs) in random chunks, while
 * a client answers, cancels or ignores the dialogs. Every command arrives while others, a run,
 * a shell command or a dialog are in flight, in every order, in one chunk, split at any byte,
 * or spaced out.
 *
 * Properties checked for each scenario:
 * - every id is answered exactly once (a `response` echoing it), and every answer to an unknown
 *   dialog id gets exactly one `extension_ui_error`;
 * - every `get_state` is answered, within GET_STATE_CEILING_MS of being written (a generous
 *   bound that holds on a loaded 2-core machine: a hang is what it catches, not slowness);
 * - stdout is strict JSONL, and no `extension_error` (an exception nobody caught) appears;
 * - the run settles (`get_state` reports neither streaming nor compacting);
 * - every stdout record fits packages/protocol/json-schema/outbound.json;
 * - settled, parley uses under 30% of one core over an idle second (no busy loop; measured
 *   against the wait itself, from /proc/PID/stat);
 * - stdin EOF then ends parley with status 0 (also when it comes right after the last command,
 *   with everything in flight: every command is still answered once);
 * - no process parley started outlives it (sampled from /proc through the run; shell commands
 *   leave a background `sleep 30` behind);
 * - a user's file the commands point at (switch_session, export_html) is byte for byte as it was;
 * - with session files, every file parley left loads without a warning, and resuming the session
 *   it ended in (`--session FILE`) gives back exactly the messages the client was last shown.
 *
 * Used by packages/agent/test/interleave.e2e.test.ts (a few short scenarios) and by
 * `npm run fuzz -- --interleave` (many longer ones): see scripts/fuzz.mjs.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import fc from "fast-check";
import { Compile } from "typebox/schema";
import { attachJsonlReader } from "@parley/protocol";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const PARLEY_BIN = join(ROOT, "node_modules/.bin/parley");
export const DIALOG_FIXTURE = join(ROOT, "packages/agent/test/fixtures/interleave-dialogs.ts");

export const GET_STATE_CEILING_MS = 20_000;
/** How long a settled parley is watched for CPU use (a busy loop burns most of it). */
const IDLE_WAIT_MS = 1000;
/** For everything else: start-up, all answers, settling, exit (each). */
const CEILING_MS = 90_000;

// A shell command that leaves a process behind in its group, which must not outlive parley. (One
// that also leaves the group, `setsid`, is out of reach once its parent has exited: init adopts it.)
const BACKGROUND = "sleep 30 > /dev/null 2>&1 & echo started";
const SCRIPT = [];
for (let i = 0; i < 6; i++) {
  SCRIPT.push(`reply ${i}`);
  SCRIPT.push({ text: `tool ${i}`, toolCalls: [{ name: "bash", arguments: { command: [BACKGROUND, "sleep 0.2; echo slow", "echo tool"][i % 3] } }] });
}

const message = fc.constantFrom("hi", "/ask", "please run bash", "héllo ✓ \u2028 more");
/** Commands as the generator sees them; `ui_answer` is an answer to a dialog id nobody opened. */
export const commandArb = fc.oneof(
  { weight: 4, arbitrary: fc.record({ type: fc.constant("prompt"), message, streamingBehavior: fc.constantFrom(undefined, "steer", "followUp") }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("steer"), message }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("follow_up"), message }) },
  { weight: 2, arbitrary: fc.constant({ type: "abort" }) },
  { weight: 3, arbitrary: fc.record({ type: fc.constant("bash"), command: fc.constantFrom("true", "echo out", "sleep 0.3", "printf 'a\\nb'", BACKGROUND) }) },
  { weight: 2, arbitrary: fc.constant({ type: "abort_bash" }) },
  { weight: 1, arbitrary: fc.constant({ type: "compact" }) },
  { weight: 1, arbitrary: fc.constant({ type: "new_session" }) },
  { weight: 1, arbitrary: fc.constant({ type: "fork", entryId: "no-such-entry" }) },
  { weight: 1, arbitrary: fc.constant({ type: "switch_session", sessionPath: "/nonexistent/parley-interleave.jsonl" }) },
  { weight: 3, arbitrary: fc.constant({ type: "get_state" }) },
  { weight: 1, arbitrary: fc.constant({ type: "ui_answer" }) },
  // The rest of the protocol: state reads and changes, model and thinking cycles, the session
  // switches onto the scenario's own files ($notes: a user's file parley must leave byte for byte;
  // $other: a session file; $out: a page parley may create), exports.
  { weight: 1, arbitrary: fc.constant({ type: "clone" }) },
  { weight: 1, arbitrary: fc.constantFrom({ type: "switch_session", sessionPath: "$notes" }, { type: "switch_session", sessionPath: "$other" }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom({ type: "export_html", outputPath: "$out" }, { type: "export_html", outputPath: "$notes" }, { type: "export_html" }),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom({ type: "set_model", provider: "parley", modelId: "script" }, { type: "set_model", provider: "nope", modelId: "nope" }),
  },
  { weight: 1, arbitrary: fc.constantFrom({ type: "cycle_model" }, { type: "cycle_thinking_level" }, { type: "set_thinking_level", level: "high" }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      ...[
        "get_messages",
        "get_commands",
        "get_ui_state",
        "get_session_stats",
        "get_fork_messages",
        "get_entries",
        "get_tree",
        "get_last_assistant_text",
        "get_available_thinking_levels",
        "get_available_models",
        "clear_queue",
        "abort_retry",
      ].map((type) => ({ type })),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      { type: "set_session_name", name: "named" },
      { type: "set_steering_mode", mode: "all" },
      { type: "set_follow_up_mode", mode: "one-at-a-time" },
    ),
  },
);

export const chunkingArb = fc.oneof(
  fc.constant({ kind: "one" }),
  fc.record({ kind: fc.constant("split"), cuts: fc.array(fc.nat(), { maxLength: 12 }), gapMs: fc.integer({ min: 0, max: 20 }) }),
  fc.record({ kind: fc.constant("spaced"), gapsMs: fc.array(fc.integer({ min: 0, max: 150 }), { minLength: 1, maxLength: 8 }) }),
);

/** A scenario: what to send, how to cut it, how the client treats dialogs, how fast the model streams. */
export function scenarioArb({ maxCommands = 12 } = {}) {
  return fc.record({
    commands: fc.array(commandArb, { minLength: 1, maxLength: maxCommands, size: "max" }),
    chunking: chunkingArb,
    // One choice per dialog, in order of arrival (cycled): answer, cancel, or leave it to time out.
    dialogs: fc.array(fc.constantFrom("answer", "cancel", "ignore"), { minLength: 1, maxLength: 6 }),
    streamDelayMs: fc.constantFrom(0, 2, 10),
    // Without extensions the loop loads lazily, with the first prompt (I/O in the middle of
    // preparing it); with the dialog extension it is loaded at start-up.
    extension: fc.boolean(),
    // Session files on disk (every switch, fork and clone writes one) or in memory only.
    session: fc.boolean(),
    // Close stdin right after the last command, while everything is still in flight.
    eofEarly: fc.boolean(),
  });
}

function lineFor(command, id, files) {
  if (command.type === "ui_answer") return JSON.stringify({ type: "extension_ui_response", id: `unknown-${id}`, cancelled: true });
  const record = { id };
  for (const [key, value] of Object.entries(command)) {
    if (value !== undefined) record[key] = typeof value === "string" && value.startsWith("$") ? files[value.slice(1)] : value;
  }
  return JSON.stringify(record);
}

/** User CPU + system CPU of a process so far, in ms (from /proc/PID/stat; undefined once gone). */
export function cpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime are fields 14 and 15 (1-based), in clock ticks (100 per second on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

/** Every live descendant of `pid` (children, their children, …) with its parent, parents first, from /proc. */
export function descendantsOf(pid) {
  const children = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const after = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (after[0] === "Z") continue;
      const ppid = Number(after[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  const out = [];
  const queue = [pid];
  while (queue.length) {
    const parent = queue.shift();
    for (const child of children.get(parent) ?? []) out.push({ pid: child, parent }), queue.push(child);
  }
  return out;
}

/** Whether `pid` is a parley's child watchdog (`sh -c SCRIPT parley-watchdog TAG`). */
function isWatchdog(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes("parley-watchdog");
  } catch {
    return false;
  }
}

/** What `pid` runs, for a failure report. */
function commandLine(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "gone";
  }
}

/** When `pid` started (clock ticks since boot), or undefined once it is gone. */
function startTime(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

const alive = (pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
};

/** The files a scenario's commands point at: a user's notes (never to be written), a session, a page. */
const NOTES = "Remember the milk\n";
function scenarioFiles(dir) {
  const files = { notes: join(dir, "notes.txt"), other: join(dir, "other.jsonl"), out: join(dir, "out.html") };
  writeFileSync(files.notes, NOTES);
  const header = { type: "session", version: 3, id: "0190f0e0-0000-7000-8000-000000000001", timestamp: new Date(0).toISOString(), cwd: dir };
  const entry = {
    type: "message",
    id: "e0000001",
    parentId: null,
    timestamp: new Date(0).toISOString(),
    message: { role: "user", content: "earlier", timestamp: 0 },
  };
  writeFileSync(files.other, `${JSON.stringify(header)}\n${JSON.stringify(entry)}\n`);
  return files;
}

/** The bytes to write, cut as the scenario says, each with the pause before it. */
function chunksFor(text, chunking) {
  const bytes = Buffer.from(text, "utf8");
  if (chunking.kind === "one") return [{ bytes, gapMs: 0 }];
  if (chunking.kind === "split") {
    // Any byte boundary, even inside a UTF-8 sequence or a line's "\n".
    const cuts = [...new Set(chunking.cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
    const out = [];
    let at = 0;
    for (const cut of [...cuts, bytes.length]) {
      if (cut > at) out.push({ bytes: bytes.subarray(at, cut), gapMs: out.length ? chunking.gapMs : 0 });
      at = Math.max(at, cut);
    }
    return out;
  }
  return text.split(/(?<=\n)/).map((line, i) => ({ bytes: Buffer.from(line, "utf8"), gapMs: i === 0 ? 0 : chunking.gapsMs[i % chunking.gapsMs.length] }));
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let outbound;
/** undefined when `record` fits packages/protocol/json-schema/outbound.json, else why not (compiled once). */
export function outboundViolation(record) {
  outbound ??= Compile(JSON.parse(readFileSync(join(ROOT, "packages/protocol/json-schema/outbound.json"), "utf8")));
  return outbound.Check(record) ? undefined : `record does not fit outbound.json: ${JSON.stringify(record).slice(0, 500)}`;
}

/** Runs one scenario against a fresh parley; resolves with the failures found (empty: all held). */
export async function runScenario(scenario, options = {}) {
  const bin = options.bin ?? PARLEY_BIN;
  const dir = mkdtempSync(join(tmpdir(), "parley-interleave-"));
  const failures = [];
  const script = join(dir, "script.json");
  writeFileSync(script, JSON.stringify(SCRIPT));
  const files = scenarioFiles(dir);
  const args = [
    "--mode",
    "rpc",
    ...(scenario.session ? ["--session-dir", join(dir, "sessions")] : ["--no-session"]),
    "--model-script",
    script,
    ...(scenario.extension === false ? ["--no-extensions"] : ["-e", DIALOG_FIXTURE]),
  ];
  const childEnv = { ...process.env, HOME: dir, PI_CODING_AGENT_DIR: join(dir, ".pi", "agent"), PARLEY_STREAM_DELAY_MS: String(scenario.streamDelayMs) };
  const child = spawn(bin, args, {
    cwd: dir,
    env: childEnv,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d) => {
    if (stderr.length < 20_000) stderr += d;
  });
  child.stdin.on("error", () => {});
  const records = [];
  const answeredAt = new Map(); // id -> [times]
  let garbage = 0;
  let uiErrors = 0;
  let dialogIndex = 0;
  const waiters = new Set();
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  attachJsonlReader(child.stdout, (line) => {
    let r;
    try {
      r = JSON.parse(line);
    } catch {
      garbage++;
      return;
    }
    if (typeof r !== "object" || r === null || Array.isArray(r) || typeof r.type !== "string") {
      garbage++;
      return;
    }
    records.push(r);
    const violation = (options.schemaViolation ?? outboundViolation)(r);
    if (violation !== undefined && failures.length < 20) failures.push(violation);
    if (r.type === "response" && r.id !== undefined) {
      const times = answeredAt.get(r.id) ?? [];
      times.push(Date.now());
      answeredAt.set(r.id, times);
    }
    if (r.type === "extension_ui_error") uiErrors++;
    if (r.type === "extension_error") failures.push(`extension_error: ${line.slice(0, 300)}`);
    if (r.type === "extension_ui_request" && ["confirm", "select", "input", "editor"].includes(r.method)) {
      const choice = scenario.dialogs[dialogIndex++ % scenario.dialogs.length];
      const answer =
        choice === "answer"
          ? {
              type: "extension_ui_response",
              id: r.id,
              ...(r.method === "confirm" ? { confirmed: true } : { value: r.method === "select" ? r.options[0] : "x" }),
            }
          : choice === "cancel"
            ? { type: "extension_ui_response", id: r.id, cancelled: true }
            : undefined;
      // Answers go in between the scenario's own chunks: only at line boundaries of ours, so
      // they are written by the same writer as whole lines (see `write` below).
      if (answer) pendingAnswers.push(`${JSON.stringify(answer)}\n`);
      void flushAnswers();
    }
    wake();
  });
  const exited = new Promise((res) => child.on("exit", (code, signal) => (wake(), res({ code, signal }))));
  const until = (condition, ms, what) =>
    new Promise((res, rej) => {
      const check = () => {
        if (!condition()) return false;
        waiters.delete(check);
        clearTimeout(timer);
        res();
        return true;
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        rej(new Error(`timed out after ${ms} ms: ${what}`));
      }, ms);
      if (!check()) waiters.add(check);
    });

  // Our writes and the dialog answers share stdin: an answer must never land inside a line
  // the scenario has only half written, so answers wait while a line is open.
  const pendingAnswers = [];
  let lineOpen = false;
  // Every process parley starts (shell commands, their children), seen while it runs.
  // pid -> start time: a pid the system reuses meanwhile is not mistaken for a survivor.
  const children = new Map();
  // The watchdog and what it runs (its subshells, grep, sed, sleep once parley's pipe closes): they
  // end just after parley by design, so they are waited for, not counted as leaks.
  const watchdogFamily = new Set();
  const sampleChildren = () => {
    if (child.exitCode !== null) return;
    for (const { pid, parent } of descendantsOf(child.pid)) {
      if (!children.has(pid)) children.set(pid, startTime(pid));
      if (watchdogFamily.has(parent) || isWatchdog(pid)) watchdogFamily.add(pid);
    }
  };
  const sampler = setInterval(sampleChildren, 100);
  const write = (bytes) => new Promise((res) => child.stdin.write(bytes, () => res()));
  async function flushAnswers() {
    if (lineOpen) return;
    while (pendingAnswers.length) await write(pendingAnswers.shift());
  }

  const ids = scenario.commands.map((_, i) => `c${i}`);
  const getStateIds = new Set(scenario.commands.flatMap((c, i) => (c.type === "get_state" ? [`c${i}`] : [])));
  const expectedIds = scenario.commands.flatMap((c, i) => (c.type === "ui_answer" ? [] : [`c${i}`]));
  const expectedUiErrors = scenario.commands.filter((c) => c.type === "ui_answer").length;
  const text = scenario.commands.map((c, i) => `${lineFor(c, ids[i], files)}\n`).join("");
  const sentAt = new Map();
  try {
    const all = Buffer.from(text, "utf8");
    let written = 0;
    for (const chunk of chunksFor(text, scenario.chunking)) {
      if (chunk.gapMs > 0) await sleep(chunk.gapMs);
      else if (written > 0) await new Promise((r) => setImmediate(r));
      written += chunk.bytes.length;
      const done = all.subarray(0, written);
      // Set before the write is queued: an answer queued after it must not split an open line.
      lineOpen = done.length > 0 && done[done.length - 1] !== 0x0a;
      await write(chunk.bytes);
      // Which lines are now complete: their clocks start.
      let complete = 0;
      for (const byte of done) if (byte === 0x0a) complete++;
      for (let i = 0; i < complete; i++) if (!sentAt.has(ids[i])) sentAt.set(ids[i], Date.now());
      await flushAnswers();
    }
    lineOpen = false;
    await flushAnswers();
    if (scenario.eofEarly) {
      // Input ends with everything in flight: each command is still answered once, then exit 0.
      sampleChildren();
      child.stdin.end();
    }
    await until(() => expectedIds.every((id) => answeredAt.has(id)) || child.exitCode !== null, CEILING_MS, "every id answered").catch((error) => {
      failures.push(`${error.message}; missing: ${expectedIds.filter((id) => !answeredAt.has(id)).join(", ")}`);
    });
    for (const id of expectedIds) {
      const times = answeredAt.get(id) ?? [];
      if (times.length > 1) failures.push(`${id} answered ${times.length} times`);
    }
    for (const id of answeredAt.keys()) if (!ids.includes(id) && !String(id).startsWith("settle-")) failures.push(`response for an id never sent: ${id}`);
    for (const id of getStateIds) {
      const at = answeredAt.get(id)?.[0];
      const sent = sentAt.get(id);
      if (at !== undefined && sent !== undefined && at - sent > GET_STATE_CEILING_MS) failures.push(`get_state ${id} took ${at - sent} ms`);
    }
    await until(() => uiErrors >= expectedUiErrors, CEILING_MS, "every unknown dialog answer refused").catch((e) => failures.push(e.message));
    if (uiErrors !== expectedUiErrors) failures.push(`${uiErrors} extension_ui_error records for ${expectedUiErrors} unknown answers`);
    // The run settles: nothing streaming or compacting any more.
    const deadline = Date.now() + CEILING_MS;
    for (let n = 0; !scenario.eofEarly; n++) {
      const id = `settle-${n}`;
      lineOpen = false;
      await write(`${JSON.stringify({ type: "get_state", id })}\n`);
      let state;
      await until(() => answeredAt.has(id) || child.exitCode !== null, GET_STATE_CEILING_MS, `get_state ${id}`).catch((e) => failures.push(e.message));
      state = records.find((r) => r.type === "response" && r.id === id)?.data;
      if (!state) break;
      if (!state.isStreaming && !state.isCompacting) break;
      if (Date.now() > deadline) {
        failures.push(`the run never settled: ${JSON.stringify(state)}`);
        break;
      }
      await sleep(100);
    }
    // What the client was last shown of the session (the property checked after exit, below).
    let shown;
    if (!scenario.eofEarly && scenario.session && child.exitCode === null) {
      const id = "final-messages";
      await write(`${JSON.stringify({ type: "get_messages", id })}\n`);
      await until(() => answeredAt.has(id) || child.exitCode !== null, CEILING_MS, "the final get_messages").catch((e) => failures.push(e.message));
      const state = [...records].reverse().find((r) => r.type === "response" && String(r.id).startsWith("settle-"))?.data;
      const messages = records.find((r) => r.type === "response" && r.id === id)?.data?.messages;
      if (state?.sessionFile && messages) shown = { file: state.sessionFile, messages };
    }
    // Settled and idle: no busy loop. The CPU parley burns over an idle wait must stay a small
    // part of that wait (measured against the wait itself, not a speed).
    if (!scenario.eofEarly) {
      const idleFrom = cpuMs(child.pid);
      const idleStart = Date.now();
      await sleep(IDLE_WAIT_MS);
      const idleCpu = (cpuMs(child.pid) ?? 0) - (idleFrom ?? 0);
      const idleWall = Date.now() - idleStart;
      if (idleFrom !== undefined && idleCpu > idleWall * 0.3) failures.push(`busy while idle: ${idleCpu} ms of CPU in ${idleWall} ms`);
    }
    sampleChildren();
    child.stdin.end();
    const timer = setTimeout(() => {
      failures.push(`no exit ${CEILING_MS} ms after stdin EOF`);
      child.kill("SIGKILL");
    }, CEILING_MS);
    const exit = await exited;
    clearTimeout(timer);
    if (exit.code !== 0) failures.push(`exit after EOF: ${JSON.stringify(exit)}`);
    if (garbage) failures.push(`${garbage} stdout lines are not JSON objects`);
    clearInterval(sampler);
    const survivors = [...children].filter(([pid, start]) => alive(pid) && startTime(pid) === start).map(([pid]) => pid);
    // parley's watchdog (src/child-watchdog.ts) ends just after parley: it waits for its pipe's
    // EOF, then looks for what is left. It must end by itself; anything else must be gone already.
    const watchdogs = survivors.filter((pid) => watchdogFamily.has(pid));
    const leaked = survivors.filter((pid) => !watchdogs.includes(pid));
    if (leaked.length) failures.push(`children outlived parley: ${leaked.map((pid) => `${pid} (${commandLine(pid)})`).join(", ")}`);
    const watchdogsEnd = Date.now() + CEILING_MS;
    while (watchdogs.some(alive) && Date.now() < watchdogsEnd) await new Promise((res) => setTimeout(res, 50));
    if (watchdogs.some(alive)) failures.push(`the watchdog outlived parley by ${CEILING_MS} ms: ${watchdogs.join(", ")}`);
    for (const pid of survivors) if (alive(pid)) process.kill(pid, "SIGKILL");
    if (readFileSync(files.notes, "utf8") !== NOTES) failures.push(`${files.notes} (a user's file) was written`);
    if (scenario.session) failures.push(...(await sessionFilesHold(dir, shown, { bin, script, env: childEnv })));
  } catch (error) {
    failures.push(`runner: ${error?.stack ?? error}`);
  } finally {
    clearInterval(sampler);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    // PARLEY_FUZZ_KEEP=1 keeps a failing scenario's folder (its session files) to look into.
    if (failures.length > 0 && process.env["PARLEY_FUZZ_KEEP"]) failures.push(`kept: ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
  return { failures, records: records.length, children: children.size, stderr: failures.length ? stderr.slice(-4000) : "" };
}

/**
 * After parley has exited: every session file it left (and the scenario's own session) loads
 * without a warning, and resuming the one it was in (`shown`: its file and the messages the client
 * was last shown) gives those very messages back. A session that never got an assistant message
 * is not written (pi's rule): then there is nothing to resume, and nothing must claim otherwise.
 */
async function sessionFilesHold(dir, shown, { bin, script, env }) {
  const failures = [];
  const { readSessionFile } = await import(pathToFileURL(join(ROOT, "packages/agent/dist/session/format.js")).href);
  // Wherever they went: the session folder, beside the scenario's own session (clone, fork).
  const files = listJsonl(dir);
  for (const file of files) {
    try {
      const { warnings } = readSessionFile(file);
      if (warnings.length) failures.push(`${file} loads with warnings: ${warnings.map((w) => w.message).join("; ")}`);
    } catch (error) {
      failures.push(`${file} does not load: ${error.message}`);
    }
  }
  if (shown === undefined || !files.includes(shown.file)) {
    if (shown?.messages.some((m) => m.role === "assistant"))
      failures.push(`the session shown (${shown.file}) holds an assistant message but was never written`);
    return failures;
  }
  // The same scripted model, no extension: what is read back is the file alone.
  const resumeArgs = ["--mode", "rpc", "--model-script", script, "--no-extensions", "--session", shown.file];
  const child = spawn(bin, resumeArgs, { cwd: dir, env, stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d) => (out += d));
  child.stdin.end(`${JSON.stringify({ type: "get_messages", id: "resumed" })}\n`);
  const code = await new Promise((res) => child.on("exit", (c) => res(c)));
  const answer = out
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .find((r) => r.id === "resumed");
  if (code !== 0 || !answer?.success) failures.push(`resuming ${shown.file} failed (exit ${code}): ${JSON.stringify(answer).slice(0, 300)}`);
  else if (JSON.stringify(answer.data.messages) !== JSON.stringify(shown.messages)) {
    const roles = (ms) => ms.map((m) => m.role).join(",");
    failures.push(`resuming ${shown.file} gives other messages than were shown: ${roles(answer.data.messages)} against ${roles(shown.messages)}`);
  }
  return failures;
}

function listJsonl(folder) {
  try {
    return readdirSync(folder, { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".jsonl"))
      .map((f) => join(folder, f));
  } catch {
    return [];
  }
}

/** Scenarios that once failed: checked first in every run (fast-check `examples`). */
export const REGRESSIONS = [
  // issue 14.1: a prompt right behind a bash command, no extension (the loop loads while the
  // prompt is prepared): the bash result waited on a settled promise in a loop, for ever.
  {
    commands: [{ type: "bash", command: "true" }, { type: "prompt", message: "x" }, { type: "get_state" }],
    chunking: { kind: "one" },
    dialogs: ["answer"],
    streamDelayMs: 0,
    extension: false,
    session: false,
    eofEarly: false,
  },
  // A compaction that a clone overtook wrote into the session left and handed the agent that
  // session's context: the client was shown messages its session file did not hold (seed 21).
  {
    commands: [
      { type: "clone" },
      { type: "bash", command: "echo out" },
      { type: "bash", command: "sleep 0.3" },
      { type: "fork", entryId: "no-such-entry" },
      { type: "abort_bash" },
      { type: "prompt", message: "héllo ✓ \u2028 more", streamingBehavior: "steer" },
      { type: "prompt", message: "/ask" },
      { type: "compact" },
      { type: "compact" },
    ],
    chunking: { kind: "one" },
    dialogs: ["answer", "ignore", "ignore", "answer"],
    streamDelayMs: 10,
    extension: false,
    session: true,
    eofEarly: false,
  },
];

/** Checks `runs` scenarios with fast-check; resolves with the first failure's report, or undefined. */
export async function checkInterleavings({ runs, seed, maxCommands, log = () => {} }) {
  let report;
  const details = await fc.check(
    fc.asyncProperty(scenarioArb({ maxCommands }), async (scenario) => {
      const result = await runScenario(scenario);
      log(
        `${result.failures.length ? "FAIL" : "ok"}: ${scenario.commands.length} commands, ${scenario.chunking.kind}, ${scenario.extension ? "dialogs" : "no extension"}${scenario.session ? ", session files" : ""}${scenario.eofEarly ? ", early EOF" : ""}, ${result.records} records, ${result.children} child processes seen`,
      );
      if (result.failures.length) {
        report = { scenario, ...result };
        return false;
      }
      return true;
    }),
    { numRuns: runs, ...(seed !== undefined ? { seed } : {}), endOnFailure: true, examples: REGRESSIONS.map((scenario) => [scenario]) },
  );
  return report ? { ...report, seed: details.seed, counterexamplePath: details.counterexamplePath } : undefined;
}
