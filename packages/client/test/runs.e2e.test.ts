/**
 * client.run / client.stream / client.waitForIdle against the spawned parley CLI, driven by a
 * scripted model (`--model-script`) and the run-helpers fixture (a `hold` tool that waits for a
 * file, `/ask` that starts a run, a provider that fails with a 503 before answering).
 */
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RequestAbortedError, RpcClient, spawnTransport, type AgentRecord, type ProcessTransport, type RunEvent } from "../src/index.js";
import { deadline } from "../../agent/test/helpers/deadline.js";

const ROOT = resolve(import.meta.dirname, "../../..");
const PARLEY = join(ROOT, "node_modules/.bin/parley");
const HELPERS = join(ROOT, "packages/client/test/fixtures/run-helpers.ts");
const MINUTE = deadline(60_000);

const running: ProcessTransport[] = [];
afterEach(async () => {
  for (const p of running.splice(0)) {
    p.kill("SIGKILL");
    await p.closed;
  }
});

interface Started {
  client: RpcClient;
  dir: string;
  records: AgentRecord[];
}

/** parley with the fixture extension and, when given, a model script; cwd is a fresh folder. */
function start(script: unknown[] | undefined, env: Record<string, string> = {}): Started {
  const dir = mkdtempSync(join(tmpdir(), "parley-runs-"));
  const args = ["--mode", "rpc", "--no-session", "-e", HELPERS];
  if (script) {
    writeFileSync(join(dir, "script.json"), JSON.stringify(script));
    args.push("--model-script", join(dir, "script.json"));
  }
  const transport = spawnTransport(PARLEY, args, { cwd: dir, env: { ...process.env, HOME: dir, ...env } });
  running.push(transport);
  const client = new RpcClient(transport);
  const records: AgentRecord[] = [];
  client.onAny((r) => records.push(r));
  return { client, dir, records };
}

const roles = (messages: Array<{ role: string }>): string[] => messages.map((m) => m.role);
const hold = (file: string) => ({ toolCalls: [{ name: "hold", arguments: { file } }] });

/** Resolves on the first event matching `match` (the test's own wait; the run has none). */
function nextEvent(client: RpcClient, match: (r: AgentRecord) => boolean): Promise<AgentRecord> {
  return new Promise((resolve) => {
    const sub = client.onAny((r) => {
      if (!match(r)) return;
      sub.dispose();
      resolve(r);
    });
  });
}

describe("client.run", () => {
  it("a multi-turn tool-calling run resolves with its messages and the final text once settled", { timeout: 2 * MINUTE }, async () => {
    const { client, dir, records } = start([{ toolCalls: [{ name: "read", arguments: { path: "hello.txt" } }] }, "The file says hi."]);
    writeFileSync(join(dir, "hello.txt"), "hi\n");
    const result = await client.run("what does hello.txt say?");
    expect(result.text).toBe("The file says hi.");
    // A first run starts with the system message pi 1.6 records.
    expect(roles(result.messages)).toEqual(["system", "user", "assistant", "toolResult", "assistant"]);
    expect(result.lastAssistant?.stopReason).toBe("stop");
    // Resolved after the agent settled, not at the prompt's acceptance or the first agent_end.
    expect(records.some((r) => r.type === "agent_settled")).toBe(true);
    expect((await client.getState()).isStreaming).toBe(false);
    await client.close();
  });

  it("steering and a follow-up sent mid-run belong to the run; it ends after the follow-up's reply", { timeout: 2 * MINUTE }, async () => {
    const { client, dir } = start([hold("go"), "steered reply", "follow-up reply"]);
    const started = nextEvent(client, (r) => r.type === "tool_execution_start");
    const run = client.run("start");
    await started;
    await client.steer("change course");
    await client.followUp("and then this");
    writeFileSync(join(dir, "go"), "");
    const result = await run;
    expect(result.text).toBe("follow-up reply");
    expect(roles(result.messages)).toEqual(["system", "user", "assistant", "toolResult", "user", "assistant", "user", "assistant"]);
    const userTexts = result.messages.filter((m) => m.role === "user").map((m) => JSON.stringify(m.content));
    expect(userTexts.join()).toContain("change course");
    expect(userTexts.join()).toContain("and then this");
    await client.close();
  });

  it("an auto-retry is not the end: the run resolves with the retried reply, without the failed one", { timeout: 2 * MINUTE }, async () => {
    const { client, records } = start(undefined, { FLAKY_FAILURES: "1" });
    await client.setModel("flaky", "m");
    const result = await client.run("hi");
    expect(records.some((r) => r.type === "agent_end" && r["willRetry"] === true)).toBe(true);
    expect(records.some((r) => r.type === "auto_retry_end" && r["success"] === true)).toBe(true);
    expect(result.text).toBe("recovered");
    expect(result.messages.map((m) => [m.role, "stopReason" in m ? m.stopReason : undefined])).toEqual([
      ["system", undefined],
      ["user", undefined],
      ["assistant", "stop"],
    ]);
    await client.close();
  });

  it("aborting the signal sends abort and rejects once the agent stopped; the client can run again", { timeout: 2 * MINUTE }, async () => {
    const { client, dir, records } = start([hold("never"), "after the abort"]);
    const controller = new AbortController();
    const started = nextEvent(client, (r) => r.type === "tool_execution_start");
    const run = client.run("start", { signal: controller.signal });
    await started;
    controller.abort();
    await expect(run).rejects.toBeInstanceOf(RequestAbortedError);
    expect(records.some((r) => r.type === "response" && r["command"] === "abort")).toBe(true);
    expect((await client.getState()).isStreaming).toBe(false);
    expect(existsSync(join(dir, "never"))).toBe(false);
    // The script's next turn may have gone to the aborted run; what matters is that a new run runs and settles.
    const again = await client.run("again");
    expect(again.lastAssistant?.stopReason).toBe("stop");
    expect(roles(again.messages)).toEqual(["user", "assistant"]);
    await client.close();
  });

  it("an extension command that starts a run resolves when that run has settled", { timeout: 2 * MINUTE }, async () => {
    const { client } = start(["answer to /ask"]);
    const result = await client.run("/ask what now?");
    expect(result.text).toBe("answer to /ask");
    expect(roles(result.messages)).toEqual(["system", "user", "assistant"]);
    await client.close();
  });
});

describe("client.stream", () => {
  it("iterates one run's events, ending after agent_settled; result resolves as run()", { timeout: 2 * MINUTE }, async () => {
    const { client } = start([{ toolCalls: [{ name: "ls", arguments: {} }] }, "Two **files**."]);
    const types: string[] = [];
    let text = "";
    const run = client.stream("list the files");
    for await (const event of run) {
      types.push(event.type);
      if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") text += event.assistantMessageEvent.delta;
    }
    expect(types[0]).toBe("agent_start");
    expect(types.at(-1)).toBe("agent_settled");
    expect(types).toContain("tool_execution_end");
    expect(text).toBe("Two **files**.");
    expect((await run.result).text).toBe("Two **files**.");
    await client.close();
  });
});

describe("client.waitForIdle", () => {
  it("resolves at once when idle, and after agent_settled for a run driven by hand", { timeout: 2 * MINUTE }, async () => {
    const { client, dir, records } = start([hold("go"), "done by hand"]);
    await client.waitForIdle();
    const started = nextEvent(client, (r) => r.type === "tool_execution_start");
    await client.prompt("by hand");
    await started;
    let idle = false;
    const waiting = client.waitForIdle().then(() => (idle = true));
    expect((await client.getState()).isStreaming).toBe(true);
    expect(idle).toBe(false);
    writeFileSync(join(dir, "go"), "");
    await waiting;
    expect(records.filter((r) => r.type === "agent_settled")).toHaveLength(1);
    expect(await client.getLastAssistantText()).toBe("done by hand");
    await client.close();
  });

  it("rejects when the agent exits mid-run", { timeout: 2 * MINUTE }, async () => {
    const { client } = start([hold("never")]);
    const events: RunEvent[] = [];
    const started = nextEvent(client, (r) => r.type === "tool_execution_start");
    const run = client.run("start", { onEvent: (e) => events.push(e) });
    await started;
    (client.transport as ProcessTransport).kill("SIGKILL");
    await expect(run).rejects.toThrow();
    expect(events.some((e) => e.type === "agent_start")).toBe(true);
  });
});
