/**
 * The extension UI sub-protocol's edge paths through the real wire (dialog-hunt): sequences that
 * the main dialog tests (rpc-extension-ui, dialogs-stress, rpc-lifecycle) do not cover.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { spawnParley, type AgentProcess, type Rec } from "./helpers/spawn.js";

const FIXTURE = join(import.meta.dirname, "fixtures/dialog-hunt.ts");
const agents: AgentProcess[] = [];
function start(args: string[] = ["-e", FIXTURE], env?: NodeJS.ProcessEnv): AgentProcess {
  const agent = spawnParley(args, env ? { env: { ...process.env, ...env } } : undefined);
  agents.push(agent);
  return agent;
}
afterEach(() => {
  for (const a of agents.splice(0)) {
    expect(a.garbage).toEqual([]);
    a.kill();
  }
});

const isNotify = (r: Rec) => r.type === "extension_ui_request" && r["method"] === "notify";
const dialogs = (agent: AgentProcess) =>
  agent.records.filter((r) => r.type === "extension_ui_request" && ["select", "confirm", "input", "editor"].includes(String(r["method"])));

describe("timeouts", () => {
  it("a negative timeout has already run out: the dialog resolves with its default at once and is never shown (it used to wait forever)", async () => {
    const agent = start();
    expect(await agent.request({ type: "prompt", message: "/expired" })).toMatchObject({ success: true });
    expect(agent.records.find(isNotify)?.["message"]).toBe("expired: false");
    expect(dialogs(agent)).toEqual([]);
  });
});

describe("timeouts that are not numbers", () => {
  it("a numeric string is read as its number (as pi's setTimeout reads it), reported on stderr; other text is dropped (one report per method)", async () => {
    const agent = start();
    agent.send({ type: "prompt", message: "/text-timeout", id: "t1" });
    const select = await agent.waitFor((r) => r["method"] === "select");
    expect(select["timeout"]).toBe(150);
    // Resolved agent-side: without the repair it had no timeout and waited for ever.
    expect(await agent.waitFor((r) => r.type === "extension_ui_dismissed")).toMatchObject({ id: select["id"], reason: "timeout" });
    await agent.response("t1");
    expect(agent.records.find(isNotify)?.["message"]).toBe("text-timeout: undefined");
    await agent.until(() => agent.stderr().includes('ctx.ui.select(): timeout is "150", not a number; read as 150 ms'));

    agent.send({ type: "prompt", message: "/text-timeout soon", id: "t2" });
    const untimed = await agent.waitFor((r) => r["method"] === "select" && r["id"] !== select["id"]);
    expect(untimed).not.toHaveProperty("timeout");
    agent.send({ type: "extension_ui_response", id: untimed["id"], value: "b" });
    await agent.response("t2");
    expect(agent.records.filter(isNotify).at(-1)?.["message"]).toBe("text-timeout: b");
    // One report per extension and method: the second repair is not repeated.
    expect(agent.stderr().split("ctx.ui.select(): timeout is").length - 1).toBe(1);
  });
});
