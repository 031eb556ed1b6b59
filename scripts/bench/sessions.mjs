// Big sessions, as users meet them: resuming a ~100 MB session file (spawn with --session FILE →
// get_state answered, then get_messages: time and peak RSS), appending to a 50,000-entry session
// (per-entry cost against a fresh session's), and get_entries with a cursor near the end (time
// against a whole get_entries). The files are pi's session format (v3), written once per run
// into a temp folder, so both agents read the very same bytes; each agent gets its own copy.
import { randomBytes } from "node:crypto";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AGENTS, HEAD_BYTES, kibToMiB, median, progress, request, roundOrder, startAgent } from "./lib.mjs";

/**
 * Entry ids: 8 hex characters like pi's, unique within the file. Random ones collide (~0.65
 * pairs expected among 75,000), and a duplicate id re-parents everything after it, which cut the
 * resumed branch short (63,906 of 75,000 messages in one run).
 */
function uniqueIds() {
  const taken = new Set();
  return () => {
    for (;;) {
      const id = randomBytes(4).toString("hex");
      if (!taken.has(id)) {
        taken.add(id);
        return id;
      }
    }
  };
}

/**
 * A linear conversation of `entries` message entries, alternating user and assistant, each with
 * ~`textBytes` of text. Returns the file's path and the last entry's id.
 */
/** pi resumes 100 MB in ~7 s on a quiet machine, but several minutes on a loaded one. */
const RESUME_TIMEOUT_MS = 900_000;

export function writeSession(dir, entries, textBytes) {
  const file = join(dir, `session-${entries}.jsonl`);
  const start = Date.parse("2026-01-01T00:00:00Z");
  const lines = [JSON.stringify({ type: "session", version: 3, id: `bench-${entries}`, timestamp: new Date(start).toISOString(), cwd: dir })];
  const filler = "lorem ipsum dolor sit amet ".repeat(Math.ceil(textBytes / 27)).slice(0, textBytes);
  const id = uniqueIds();
  let parentId = null;
  const ids = [];
  for (let i = 0; i < entries; i++) {
    const entryId = id();
    const ts = start + i * 1000;
    const message =
      i % 2 === 0
        ? { role: "user", content: [{ type: "text", text: `question ${i}: ${filler}` }], timestamp: ts }
        : {
            role: "assistant",
            content: [{ type: "text", text: `answer ${i}: ${filler}` }],
            api: "openai-responses",
            provider: "openai",
            model: "gpt-5",
            usage: {
              input: 10,
              output: 10,
              cacheRead: 0,
              cacheWrite: 0,
              totalTokens: 20,
              cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
            },
            stopReason: "stop",
            timestamp: ts,
          };
    lines.push(JSON.stringify({ type: "message", id: entryId, parentId, timestamp: new Date(ts).toISOString(), message }));
    parentId = entryId;
    ids.push(entryId);
  }
  writeFileSync(file, `${lines.join("\n")}\n`);
  return { file, ids };
}

function ownCopy(file, proc) {
  const copy = join(proc, "session.jsonl");
  copyFileSync(file, copy);
  return copy;
}

async function resumeOnce(agent, file) {
  const dir = mkdtempSync(join(tmpdir(), "bench-resume-"));
  try {
    const proc = startAgent(agent, ["--session", ownCopy(file, dir)], { sessionFile: true });
    try {
      await request(proc, { type: "get_state" }, RESUME_TIMEOUT_MS);
      const stateMs = performance.now() - proc.spawnedAt;
      // The response (~100 MB) is timed when its last byte (the LF) has arrived: what the client
      // does with it after that (a 100 MB string, then the parse: about a second on this machine,
      // the same for both agents) is the client's time, not the agent's.
      const isAnswer = (head) => head.includes('"id":"resume-messages"');
      const line = proc.waitLine((l) => isAnswer(l.slice(0, HEAD_BYTES)), RESUME_TIMEOUT_MS, "the get_messages response");
      const delivered = proc.lineEndAt(isAnswer);
      proc.send({ type: "get_messages", id: "resume-messages" });
      const text = await line;
      const ms = (await delivered) - proc.spawnedAt;
      const peakRssMiB = kibToMiB(proc.status()?.VmHWM);
      const messages = JSON.parse(text);
      if (messages.success !== true) throw new Error(`${agent.name}: get_messages failed: ${messages.error}`);
      return { stateMs, ms, messages: messages.data.messages.length, peakRssMiB };
    } finally {
      await proc.stop(30_000);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Time per appended entry (set_session_name appends a session_info entry), over `n` appends. */
async function appendCost(proc, n) {
  const started = performance.now();
  for (let i = 0; i < n; i++) await request(proc, { type: "set_session_name", name: `name ${i}` }, 60_000);
  return (performance.now() - started) / n;
}

async function appendAndCursorOnce(agent, big, appends) {
  const dir = mkdtempSync(join(tmpdir(), "bench-append-"));
  try {
    const fresh = startAgent(agent, ["--session", join(dir, "fresh.jsonl")], { sessionFile: true });
    let freshMs;
    try {
      await request(fresh, { type: "get_state" }, 60_000);
      await appendCost(fresh, 20); // warm-up
      freshMs = await appendCost(fresh, appends);
    } finally {
      await fresh.stop(30_000);
    }
    const proc = startAgent(agent, ["--session", ownCopy(big.file, dir)], { sessionFile: true });
    try {
      await request(proc, { type: "get_state" }, 300_000);
      await appendCost(proc, 20);
      const bigMs = await appendCost(proc, appends);
      let started = performance.now();
      const all = await request(proc, { type: "get_entries" }, 300_000);
      const allMs = performance.now() - started;
      started = performance.now();
      const tail = await request(proc, { type: "get_entries", since: big.ids.at(-1) }, 60_000);
      const cursorMs = performance.now() - started;
      return { freshMs, bigMs, allMs, allEntries: all.data.entries.length, cursorMs, cursorEntries: tail.data.entries.length };
    } finally {
      await proc.stop(30_000);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runSessions({ quick, runs: runsOverride }) {
  const runs = runsOverride ?? (quick ? 1 : 3);
  // ~100 MB: 75,000 entries of ~1.3 KB (quick: 5,000 entries, ~6 MB).
  const resumeEntries = quick ? 5_000 : 75_000;
  const appendEntries = quick ? 5_000 : 50_000;
  const appends = quick ? 50 : 200;
  const dir = mkdtempSync(join(tmpdir(), "bench-sessions-"));
  const names = ["parley", "pi"];
  try {
    progress(`sessions: writing a ${resumeEntries.toLocaleString("en-US")}-entry session`);
    const resume = writeSession(dir, resumeEntries, 1200);
    const append = writeSession(dir, appendEntries, 200);
    const samples = { parley: [], pi: [] };
    for (let r = 0; r < runs; r++) {
      for (const name of roundOrder(names, r)) {
        const s = await resumeOnce(AGENTS[name], resume.file);
        samples[name].push(s);
        progress(
          `resume ${r + 1}/${runs} ${name}: get_state ${s.stateMs.toFixed(0)} ms, get_messages ${s.ms.toFixed(0)} ms (${s.messages} messages), peak RSS ${s.peakRssMiB?.toFixed(0)} MiB`,
        );
      }
    }
    const appendSamples = { parley: [], pi: [] };
    for (let r = 0; r < runs; r++) {
      for (const name of roundOrder(names, r)) {
        const s = await appendAndCursorOnce(AGENTS[name], append, appends);
        appendSamples[name].push(s);
        progress(
          `append ${r + 1}/${runs} ${name}: ${s.freshMs.toFixed(2)} ms/entry fresh, ${s.bigMs.toFixed(2)} ms/entry at ${appendEntries} entries` +
            (s.allMs === null
              ? ""
              : `; get_entries ${s.allMs.toFixed(0)} ms (${s.allEntries}), with a cursor ${s.cursorMs.toFixed(1)} ms (${s.cursorEntries})`),
        );
      }
    }
    const med = (list, key) => median(list.map((s) => s[key]));
    return {
      runs,
      resumeEntries,
      appendEntries,
      resumeMs: Object.fromEntries(names.map((n) => [n, med(samples[n], "ms")])),
      resumePeakRssMiB: Object.fromEntries(names.map((n) => [n, med(samples[n], "peakRssMiB")])),
      appendFreshMs: Object.fromEntries(names.map((n) => [n, med(appendSamples[n], "freshMs")])),
      appendBigMs: Object.fromEntries(names.map((n) => [n, med(appendSamples[n], "bigMs")])),
      entriesAllMs: Object.fromEntries(names.map((n) => [n, med(appendSamples[n], "allMs")])),
      entriesCursorMs: Object.fromEntries(names.map((n) => [n, med(appendSamples[n], "cursorMs")])),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
