/**
 * Where pi 1.6.0 refuses (or allows) what parley used to answer otherwise, through the spawned
 * CLIs side by side: pi 1.6.0 (the `pi-newest` devDependency, on the same Node) and parley, each
 * in RPC mode in its own temp HOME / agent directory, on the scripted model of
 * fixtures/pi16-drifts.ts. Each test runs one scenario in both and asserts the same records and
 * answers: a compaction of a session too small to compact (asked for, and automatic), a prompt
 * while a compaction runs, switch_session under --no-session, and the refusals of RPC commands
 * (set_model of a model without credentials among them).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { data, DRIFTS_MODEL, driftSides } from "./helpers/drift-sides.js";
import { SIDES as BOTH } from "./helpers/newest-pi.js";
import type { AgentWorld } from "./helpers/offline-agents.js";
import { MINUTE } from "./helpers/pi-home.js";
import { type AgentProcess, type Rec, ROOT } from "./helpers/spawn.js";

const HOLD = join(ROOT, "packages/agent/test/fixtures/compact-hold.ts");
const MODEL = DRIFTS_MODEL;
const { world, start } = driftSides("parley-refusals-");

/** Sends a prompt and waits for its run to settle (automatic compaction belongs to the run). */
async function prompted(agent: AgentProcess, message: string): Promise<void> {
  const from = agent.records.length;
  const response = await agent.request({ type: "prompt", message }, MINUTE);
  expect(response["success"], JSON.stringify(response)).toBe(true);
  await agent.waitFor((r) => r.type === "agent_settled", MINUTE, from);
}

/**
 * The roles of the context's messages, without pi 1.6's stored system message (a drift of its own,
 * outside what these tests compare).
 */
async function roles(agent: AgentProcess): Promise<unknown[]> {
  const messages = data(await agent.request({ type: "get_messages" }, MINUTE))["messages"] as Rec[];
  return messages.map((m) => m["role"]).filter((role) => role !== "system");
}
/** A response as compared: success and error, or whether data came. */
const outcome = (r: Rec): unknown => (r["success"] === true ? { success: true } : { success: false, error: r["error"] });
/** The compaction records among `records`, as sent (a result reduced to whether it came). */
const compactionRecords = (records: Rec[]): unknown[] =>
  records.filter((r) => r.type === "compaction_start" || r.type === "compaction_end").map((r) => (r["result"] === undefined ? r : { ...r, result: "…" }));

describe("a compaction of a session too small to compact, as pi 1.6 refuses it", () => {
  it("compact: refused with pi's words and records on an empty and a small session; a budget the session passes compacts; then 'Already compacted'", async () => {
    const seen = await Promise.all(
      BOTH.map(async (agent) => {
        const compactNow = async (p: AgentProcess) => {
          const from = p.records.length;
          const answer = outcome(await p.request({ type: "compact" }, MINUTE));
          await p.waitFor((r) => r.type === "compaction_end", MINUTE, from);
          return { answer, records: compactionRecords(p.records.slice(from)) };
        };
        const small = start(agent, world(agent), ["--no-session", "-ne", ...MODEL]);
        const empty = await compactNow(small);
        await prompted(small, "Reply with just: one");
        await prompted(small, "Reply with just: two");
        const twoTurns = await compactNow(small);
        const messages = (await roles(small)).length;

        // A budget of one token: the same two turns are compacted, and a compaction right after it is refused.
        const tight = start(agent, world(agent, { compaction: { keepRecentTokens: 1 } }), ["--no-session", "-ne", ...MODEL]);
        await prompted(tight, "Reply with just: one");
        await prompted(tight, "Reply with just: two");
        const compacted = await compactNow(tight);
        const again = await compactNow(tight);
        return { empty, twoTurns, messages, compacted, again };
      }),
    );
    expect(seen[1]).toEqual(seen[0]);
    const refused = (why: string) => ({
      answer: { success: false, error: why },
      records: [
        { type: "compaction_start", reason: "manual" },
        { type: "compaction_end", reason: "manual", aborted: false, willRetry: false, errorMessage: `Compaction failed: ${why}` },
      ],
    });
    expect(seen[1]).toEqual({
      empty: refused("Nothing to compact (session too small)"),
      twoTurns: refused("Nothing to compact (session too small)"),
      messages: 4,
      compacted: {
        answer: { success: true },
        records: [
          { type: "compaction_start", reason: "manual" },
          { type: "compaction_end", reason: "manual", result: "…", aborted: false, willRetry: false },
        ],
      },
      again: refused("Already compacted"),
    });
  });

  it("automatic compaction past the threshold: nothing at all while the context fits keepRecentTokens; a compaction once it passes it", async () => {
    // contextWindow 100000 (the fixture's model) less 99999 reserved: every reply passes the threshold.
    const threshold = { reserveTokens: 99_999 };
    const seen = await Promise.all(
      BOTH.map(async (agent) => {
        const run = async (compaction: object) => {
          const p = start(agent, world(agent, { compaction }), ["--no-session", "-ne", ...MODEL]);
          await prompted(p, "Reply with just: one");
          await prompted(p, "Reply with just: two");
          return { records: compactionRecords(p.records), roles: await roles(p) };
        };
        return { fits: await run(threshold), passes: await run({ ...threshold, keepRecentTokens: 1 }) };
      }),
    );
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[1]?.fits).toEqual({ records: [], roles: ["user", "assistant", "user", "assistant"] });
    expect(seen[1]?.passes.records[0]).toEqual({ type: "compaction_start", reason: "threshold" });
  });
});

describe("a prompt while a compaction runs, as pi 1.6 refuses it", () => {
  it("is refused in pi's words while session_before_compact holds the compaction; an extension command still runs; afterwards prompts are taken", async () => {
    const seen = await Promise.all(
      BOTH.map(async (agent) => {
        const p = start(agent, world(agent, { compaction: { keepRecentTokens: 1 } }), ["--no-session", "-ne", "-e", HOLD, ...MODEL]);
        await prompted(p, "Reply with just: one");
        const from = p.records.length;
        p.send({ type: "compact", customInstructions: "hold", id: "held" });
        const dialog = await p.waitFor((r) => r.type === "extension_ui_request" && r["title"] === "Hold compaction", MINUTE, from);
        const during = outcome(await p.request({ type: "prompt", message: "Reply with just: during" }, MINUTE));
        const state = data(await p.request({ type: "get_state" }, MINUTE))["isCompacting"];
        const command = outcome(await p.request({ type: "prompt", message: "/env" }, MINUTE));
        p.send({ type: "extension_ui_response", id: dialog["id"], confirmed: true });
        const compacted = outcome(await p.response("held"));
        await prompted(p, "Reply with just: after");
        return { during, state, command, compacted };
      }),
    );
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[1]).toEqual({
      during: { success: false, error: "Cannot submit a prompt while compaction is in progress. Wait for compaction to finish and retry." },
      state: true,
      command: { success: true },
      compacted: { success: true },
    });
  });
});

describe("switch_session under --no-session, as pi 1.6 does it", () => {
  /** A stored session in pi's format, on the fixture's model, recorded in the world's project. */
  function storedSession(w: AgentWorld): string {
    const file = join(w.base, "stored", "kept.jsonl");
    mkdirSync(dirname(file), { recursive: true });
    const lines = [
      { type: "session", version: 3, id: "01a251fe-0000-7000-8000-0000000000aa", timestamp: "2026-12-07T19:00:00.000Z", cwd: w.cwd },
      { type: "model_change", id: "bbbb0001", parentId: null, timestamp: "2026-12-07T19:00:00.001Z", provider: "drifts", modelId: "scripted" },
      { type: "thinking_level_change", id: "bbbb0002", parentId: "bbbb0001", timestamp: "2026-12-07T19:00:00.002Z", thinkingLevel: "off" },
      {
        type: "message",
        id: "bbbb0003",
        parentId: "bbbb0002",
        timestamp: "2026-12-07T19:00:00.003Z",
        message: { role: "user", content: [{ type: "text", text: "Reply with just: stored" }], timestamp: 1796670000003 },
      },
      {
        type: "message",
        id: "bbbb0004",
        parentId: "bbbb0003",
        timestamp: "2026-12-07T19:00:00.004Z",
        message: {
          role: "assistant",
          content: [{ type: "text", text: "stored" }],
          api: "drifts-faux",
          provider: "drifts",
          model: "scripted",
          usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
          stopReason: "stop",
          timestamp: 1796670000004,
        },
      },
    ];
    writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
    return file;
  }

  it("opens the stored session, writes the new turns to its file, and the next new session is a file beside it", async () => {
    const seen = await Promise.all(
      BOTH.map(async (agent) => {
        const w = world(agent);
        const file = storedSession(w);
        const p = start(agent, w, ["--no-session", "-ne", ...MODEL]);
        const before = data(await p.request({ type: "get_state" }, MINUTE))["sessionFile"];
        const switched = outcome(await p.request({ type: "switch_session", sessionPath: file }, MINUTE));
        const state = data(await p.request({ type: "get_state" }, MINUTE));
        const messages = (await roles(p)).length;
        await prompted(p, "Reply with just: more");
        const written = readFileSync(file, "utf8").includes('"text":"more"');
        const renewed = outcome(await p.request({ type: "new_session" }, MINUTE));
        const next = data(await p.request({ type: "get_state" }, MINUTE))["sessionFile"];
        return {
          before,
          switched,
          sessionFile: state["sessionFile"] === file ? "<stored>" : state["sessionFile"],
          messages,
          written,
          renewed,
          next: typeof next === "string" && dirname(next) === dirname(file) && next !== file ? "<a new file beside it>" : next,
          folderKept: existsSync(dirname(file)),
        };
      }),
    );
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[1]).toEqual({
      before: undefined,
      switched: { success: true },
      sessionFile: "<stored>",
      messages: 2,
      written: true,
      renewed: { success: true },
      next: "<a new file beside it>",
      folderKept: true,
    });
  });
});

describe("RPC refusals in pi 1.6's words", () => {
  it("unknown and unusable models, a bad entry cursor, an empty name, a fork of a missing entry, an unknown command", async () => {
    const seen = await Promise.all(
      BOTH.map(async (agent) => {
        const p = start(agent, world(agent), ["--no-session", "-ne", ...MODEL]);
        await prompted(p, "Reply with just: one");
        const ask = async (command: object) => outcome(await p.request(command, MINUTE));
        return {
          unknownModel: await ask({ type: "set_model", provider: "nope", modelId: "missing-model" }),
          // In the catalogue, but no key for it (the test's environment has none).
          noKey: await ask({ type: "set_model", provider: "anthropic", modelId: "claude-sonnet-4-5" }),
          cursor: await ask({ type: "get_entries", since: "no-such-entry" }),
          name: await ask({ type: "set_session_name", name: "   " }),
          fork: await ask({ type: "fork", entryId: "no-such-entry" }),
          unknown: await ask({ type: "no_such_command" }),
        };
      }),
    );
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[1]).toMatchObject({
      unknownModel: { success: false, error: "Model not found: nope/missing-model" },
      noKey: { success: false, error: "Model not found: anthropic/claude-sonnet-4-5" },
      cursor: { success: false, error: "Entry not found: no-such-entry" },
      name: { success: false, error: "Session name cannot be empty" },
      unknown: { success: false, error: "Unknown command: no_such_command" },
    });
  });
});
