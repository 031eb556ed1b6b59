/**
 * Retries of a failed compaction or branch summary over real pipes, side by side with pi 1.6.0
 * (the `pi-newest` devDependency, on the same Node): each in RPC mode in its own temp HOME / agent
 * directory, on the scripted model of fixtures/summary-retry.ts, whose summary calls fail with a
 * 503 a given number of times. The summarization_retry_* records, their order among the
 * compaction's, an abort during the wait, and the final failure must be pi's. The retry loop
 * itself is tested in process in summary-retry.test.ts.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { agentWorld, type AgentWorld } from "./helpers/offline-agents.js";
import { closedAfterEach, MINUTE, NO_KEYS, prompted } from "./helpers/pi-home.js";
import { type Side as Agent, sideBySide, startSide } from "./helpers/newest-pi.js";
import { type AgentProcess, type Rec, ROOT } from "./helpers/spawn.js";

const FIXTURE = join(ROOT, "packages/agent/test/fixtures/summary-retry.ts");
/** An hour: a wait that can only end by being aborted. */
const HOUR = 3_600_000;

const running = closedAfterEach();
const worlds: AgentWorld[] = [];
afterAll(() => {
  for (const w of worlds) rmSync(w.base, { recursive: true, force: true });
});

/** Starts `agent` with the settings' `retry` and the summary calls failing `failures` times. */
function start(agent: Agent, retry: object, failures: number): AgentProcess {
  const w = agentWorld(`parley-sumretry-${agent}-`);
  worlds.push(w);
  // A small kept part: two short turns are enough for both agents to have something to compact.
  writeFileSync(join(w.agentDir, "settings.json"), JSON.stringify({ retry, compaction: { keepRecentTokens: 1 } }));
  const p = startSide(agent, ["--mode", "rpc", "-ne", "-e", FIXTURE, "--provider", "sumretry", "--model", "scripted"], {
    cwd: w.cwd,
    env: { ...NO_KEYS, ...w.env, PI_OFFLINE: "1", NO_COLOR: "1", SUMMARY_FAILURES: String(failures) },
  });
  running.push(p);
  return p;
}

/** The records a summary's retries are seen in (compaction's own, and the retry loop's), as compared. */
function summaryRecords(records: Rec[], from: number): Rec[] {
  return records
    .slice(from)
    .filter((r) => r.type.startsWith("summarization_retry_") || r.type.startsWith("compaction_"))
    .map((r) => {
      if (r.type !== "compaction_end") return r;
      const result = r["result"] as { summary?: string } | null;
      return { ...r, result: result ? { summaryStart: result.summary?.slice(0, 11) } : null };
    });
}

/** A session with something to compact, then `compact`: its response and the records it caused. */
async function compactOnce(agent: AgentProcess, during?: (agent: AgentProcess) => Promise<void>): Promise<{ response: unknown; records: Rec[] }> {
  await prompted(agent, "first");
  await prompted(agent, "second");
  const from = agent.records.length;
  const pending = agent.request({ type: "compact" }, MINUTE);
  if (during) await during(agent);
  const response = await pending;
  await agent.waitFor((r) => r.type === "compaction_end", MINUTE, from);
  return {
    response: response["success"] === true ? { success: true } : { success: false, error: response["error"] },
    records: summaryRecords(agent.records, from),
  };
}

describe("summary retries as pi 1.6 makes them", () => {
  it("a compaction whose summary call fails once with a 503 is retried after retry.baseDelayMs and succeeds", async () => {
    const { pi, parley } = await sideBySide((a) => compactOnce(start(a, { baseDelayMs: 20 }, 1)));
    expect(parley).toEqual(pi);
    expect(parley.response).toEqual({ success: true });
    expect(parley.records).toEqual([
      { type: "compaction_start", reason: "manual" },
      { type: "summarization_retry_scheduled", attempt: 1, maxAttempts: 3, delayMs: 20, errorMessage: "503 Service Unavailable" },
      { type: "summarization_retry_attempt_start", source: "compaction", reason: "manual" },
      { type: "summarization_retry_finished" },
      expect.objectContaining({ type: "compaction_end", reason: "manual", aborted: false, willRetry: false, result: { summaryStart: "the summary" } }),
    ]);
  });

  it("when the retries run out, the compaction fails with the last error", async () => {
    const { pi, parley } = await sideBySide((a) => compactOnce(start(a, { baseDelayMs: 10, maxRetries: 2 }, 99)));
    expect(parley).toEqual(pi);
    expect(parley.records.map((r) => r.type)).toEqual([
      "compaction_start",
      "summarization_retry_scheduled",
      "summarization_retry_attempt_start",
      "summarization_retry_scheduled",
      "summarization_retry_attempt_start",
      "summarization_retry_finished",
      "compaction_end",
    ]);
    expect(parley.records.at(-1)).toMatchObject({ aborted: false, errorMessage: "Compaction failed: Summarization failed: 503 Service Unavailable" });
  });

  it("with retries off (set_auto_retry false), one call and no retry records", async () => {
    const { pi, parley } = await sideBySide(async (a) => {
      const agent = start(a, { baseDelayMs: 10 }, 1);
      expect((await agent.request({ type: "set_auto_retry", enabled: false }))["success"]).toBe(true);
      return compactOnce(agent);
    });
    expect(parley).toEqual(pi);
    expect(parley.records.map((r) => r.type)).toEqual(["compaction_start", "compaction_end"]);
  });

  it("abort during the wait ends the retry and the compaction at once", async () => {
    const abortWhileWaiting = async (agent: AgentProcess): Promise<void> => {
      await agent.waitFor((r) => r.type === "summarization_retry_scheduled", MINUTE);
      await agent.request({ type: "abort" }, MINUTE);
    };
    const { pi, parley } = await sideBySide((a) => compactOnce(start(a, { baseDelayMs: 2 * HOUR, maxAgentDelayMs: HOUR }, 1), abortWhileWaiting));
    expect(parley).toEqual(pi);
    expect(parley.records.map((r) => r.type)).toEqual(["compaction_start", "summarization_retry_scheduled", "summarization_retry_finished", "compaction_end"]);
    expect(parley.records[1]).toMatchObject({ delayMs: HOUR });
    expect(parley.records.at(-1)).toMatchObject({ aborted: true, result: null });
  });

  it("a branch summary (navigateTree with summarize) is retried the same way, with source branchSummary", async () => {
    const { pi, parley } = await sideBySide(async (a) => {
      const agent = start(a, { baseDelayMs: 20 }, 1);
      await prompted(agent, "first");
      await prompted(agent, "second");
      const from = agent.records.length;
      await agent.request({ type: "prompt", message: "/summarize-branch" }, MINUTE);
      const note = await agent.waitFor((r) => r.type === "extension_ui_request" && r["method"] === "notify", MINUTE, from);
      // Only whether it was cancelled is compared: what else navigateTree returns is not this test's subject.
      const notified = JSON.parse(String(note["message"])) as { result?: { cancelled?: unknown } };
      return { cancelled: notified.result?.cancelled, records: summaryRecords(agent.records, from) };
    });
    expect(parley).toEqual(pi);
    expect(parley.cancelled).toBe(false);
    expect(parley.records).toEqual([
      { type: "summarization_retry_scheduled", attempt: 1, maxAttempts: 3, delayMs: 20, errorMessage: "503 Service Unavailable" },
      { type: "summarization_retry_attempt_start", source: "branchSummary" },
      { type: "summarization_retry_finished" },
    ]);
  });
});
