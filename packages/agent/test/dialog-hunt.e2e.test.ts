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
const dialogs = (agent: AgentProcess) => agent.records.filter((r) => r.type === "extension_ui_request" && ["select", "confirm", "input", "editor"].includes(String(r["method"])));

describe("timeouts", () => {
  it("a negative timeout has already run out: the dialog resolves with its default at once and is never shown (it used to wait forever)", async () => {
    const agent = start();
    expect(await agent.request({ type: "prompt", message: "/expired" })).toMatchObject({ success: true });
    expect(agent.records.find(isNotify)?.["message"]).toBe("expired: false");
    expect(dialogs(agent)).toEqual([]);
  });
});
