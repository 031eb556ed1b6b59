/**
 * Automatic retry over real pipes: the spawned CLI with a flaky extension provider (the
 * retry cycle itself is tested in process in auto-retry.test.ts).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkedAgents } from "./helpers/checked-agents.js";
import { spawnParley, type AgentProcess } from "./helpers/spawn.js";

type Rec = Record<string, unknown>;

const tempDir = (): string => mkdtempSync(join(tmpdir(), "parley-retry-"));
/** An hour: a wait that can only end by being cancelled. */
const HOUR = 3_600_000;

const agents = checkedAgents();

const FLAKY_EXTENSION = `import { createAssistantMessageEventStream } from "@mariozechner/pi-ai";

// Fails FLAKY_FAILURES times with a 503, then answers.
export default function (pi: any) {
  let failures = Number(process.env.FLAKY_FAILURES ?? "1");
  pi.registerProvider("flaky", {
    api: "flaky-api",
    models: [{ id: "m", contextWindow: 100000 }],
    streamSimple: (model: any) => {
      const stream = createAssistantMessageEventStream();
      const fail = failures-- > 0;
      const message = {
        role: "assistant",
        content: fail ? [] : [{ type: "text", text: "recovered" }],
        api: model.api, provider: model.provider, model: model.id,
        usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
        stopReason: fail ? "error" : "stop",
        ...(fail ? { errorMessage: "503 Service Unavailable" } : {}),
        timestamp: Date.now(),
      };
      setTimeout(() => stream.push(fail ? { type: "error", reason: "error", error: message } : { type: "done", reason: "stop", message }), 1);
      return stream;
    },
  });
}
`;

function startFlaky(failures: number, settings?: object): AgentProcess {
  const dir = tempDir();
  writeFileSync(join(dir, "flaky.ts"), FLAKY_EXTENSION);
  if (settings !== undefined) {
    mkdirSync(join(dir, ".pi"));
    writeFileSync(join(dir, ".pi", "settings.json"), JSON.stringify(settings));
  }
  // A project's .pi/settings.json applies only to a trusted project, as in the newest pi.
  const agent = spawnParley(["-e", join(dir, "flaky.ts"), ...(settings !== undefined ? ["--approve"] : [])], {
    cwd: dir,
    env: { FLAKY_FAILURES: String(failures) },
  });
  agents.push(agent);
  return agent;
}

describe("auto-retry (spawned CLI)", () => {
  it("retries a 503 after 2s and succeeds", async () => {
    const agent = startFlaky(1);
    expect((await agent.request({ type: "set_model", provider: "flaky", modelId: "m" }))["success"]).toBe(true);
    expect((await agent.request({ type: "prompt", message: "hi" }))["success"]).toBe(true);
    const start = await agent.waitFor((r) => r.type === "auto_retry_start");
    expect(start).toEqual({ type: "auto_retry_start", attempt: 1, maxAttempts: 3, delayMs: 2000, errorMessage: "503 Service Unavailable" });
    const t0 = Date.now();
    const end = await agent.waitFor((r) => r.type === "auto_retry_end", 10_000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1500);
    expect(end).toEqual({ type: "auto_retry_end", success: true, attempt: 1 });
    await agent.waitFor((r) => r.type === "agent_settled");
    const messages = ((await agent.request({ type: "get_messages" }))["data"] as { messages: Rec[] }).messages;
    expect(messages.map((m) => [m["role"], m["stopReason"]])).toEqual([
      ["system", undefined],
      ["user", undefined],
      ["assistant", "stop"],
    ]);
    expect(agent.records.filter((r) => r.type === "agent_settled")).toHaveLength(1);
  });

  it("abort_retry ends the retry at once", async () => {
    // An hour's wait (project settings: two hours capped by maxAgentDelayMs): the retry can only
    // end this test by being cancelled.
    const agent = startFlaky(5, { retry: { baseDelayMs: 2 * HOUR, maxAgentDelayMs: HOUR } });
    await agent.request({ type: "set_model", provider: "flaky", modelId: "m" });
    await agent.request({ type: "prompt", message: "hi" });
    expect(await agent.waitFor((r) => r.type === "auto_retry_start")).toMatchObject({ delayMs: HOUR });
    expect((await agent.request({ type: "abort_retry" }))["success"]).toBe(true);
    const end = await agent.waitFor((r) => r.type === "auto_retry_end");
    expect(end).toEqual({ type: "auto_retry_end", success: false, attempt: 1, finalError: "Retry cancelled" });
    await agent.waitFor((r) => r.type === "agent_settled");
    expect(agent.records.filter((r) => r.type === "auto_retry_start")).toHaveLength(1);
  });
});
