/**
 * `@parley/agent/rpc-entry`, the export the newest pi's package has as `./rpc-entry`: a file that,
 * run with `node`, starts the agent in RPC mode with the remaining arguments (no `--mode rpc`),
 * named `<app>-rpc`. Resolved by its package name, as an embedder resolves it, and driven by pi's
 * own RpcClient classes (1.6.0's and 0.73.1's) through their `cliPath` option.
 */
import { readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RpcClient as OldRpcClient } from "@mariozechner/pi-coding-agent";
import type { RpcClient as NewestRpcClient } from "pi-newest";
import { afterAll, describe, expect, it } from "vitest";
import { agentWorld, OFFLINE_PROVIDER } from "./helpers/offline-agents.js";
import { firstAnswer } from "./helpers/rpc-results.js";
import { ROOT, spawnAgent } from "./helpers/spawn.js";

const NEWEST_CLIENT_JS = join(ROOT, "node_modules/pi-newest/dist/modes/rpc/rpc-client.js");
const OLD_CLIENT_JS = join(ROOT, "node_modules/@mariozechner/pi-coding-agent/dist/modes/rpc/rpc-client.js");
const { RpcClient } = (await import(NEWEST_CLIENT_JS)) as { RpcClient: typeof NewestRpcClient };
const { RpcClient: OldClient } = (await import(OLD_CLIENT_JS)) as { RpcClient: typeof OldRpcClient };

/** The entry as an embedder finds it: by the package's name, from the repository root. */
const ENTRY = createRequire(join(ROOT, "package.json")).resolve("@parley/agent/rpc-entry");

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const clean of cleanups.splice(0)) await clean();
});

describe("@parley/agent/rpc-entry", () => {
  it("is exported as the newest pi exports ./rpc-entry, and resolves alike from require and import", () => {
    const newest = JSON.parse(readFileSync(join(ROOT, "node_modules/pi-newest/package.json"), "utf8")) as { exports: Record<string, unknown> };
    const ours = JSON.parse(readFileSync(join(ROOT, "packages/agent/package.json"), "utf8")) as { exports: Record<string, unknown>; files: string[] };
    expect(Object.keys(newest.exports)).toContain("./rpc-entry");
    expect(Object.keys(ours.exports)).toContain("./rpc-entry");
    expect(ENTRY).toBe(join(ROOT, "packages/agent/bin/rpc-entry.js"));
    // Published with the package (its `files`), and found by import.meta.resolve too.
    expect(ours.files).toContain("bin");
    expect(fileURLToPath(import.meta.resolve("@parley/agent/rpc-entry"))).toBe(ENTRY);
  });

  it("run with node, serves RPC without --mode, as parley-rpc, from the code-cached bundle (no ES module loads)", async () => {
    const agent = spawnAgent(process.execPath, [ENTRY, "--no-session"], { checkSchema: true, env: { NODE_DEBUG: "esm" } });
    const state = await agent.request({ type: "get_state" }, 60_000);
    expect(state).toMatchObject({ success: true, data: { model: { provider: "parley" } } });
    if (process.platform === "linux") {
      expect(readFileSync(`/proc/${agent.child.pid}/cmdline`, "utf8")).toMatch(/^parley-rpc/);
    }
    agent.closeInput();
    expect((await agent.exited).code).toBe(0);
    // As bin/parley.js: the CommonJS launcher and bundle, so Node's ES module loader never starts.
    expect(agent.stderr()).not.toMatch(/^ESM \d+:/m);
  }, 120_000);

  it("a flag error is a flag error (the arguments are parley's), with pi's exit status", async () => {
    const agent = spawnAgent(process.execPath, [ENTRY, "--bogus"], { checkSchema: true });
    expect((await agent.exited).code).toBe(1);
    expect(agent.stderr()).toContain("Unknown option --bogus");
    expect(agent.records).toEqual([]);
  }, 120_000);

  it("pi 1.6.0's RpcClient, given the entry as cliPath, runs a prompt on parley", async () => {
    const { base, cwd, env } = agentWorld("rpc-entry-newest-");
    cleanups.push(() => rmSync(base, { recursive: true, force: true }));
    const client = new RpcClient({ cliPath: ENTRY, cwd, env, provider: "offline", model: "echo", args: ["--no-session", "-e", OFFLINE_PROVIDER] });
    cleanups.push(() => client.stop());
    await client.start();
    await firstAnswer(client);
    expect((await client.getState()).model).toMatchObject({ provider: "offline", id: "echo" });
    const events = await client.promptAndWait("Reply with just: entry-ok");
    expect(events.some((e) => e.type === "agent_settled")).toBe(true);
    expect(await client.getLastAssistantText()).toBe("entry-ok");
    await client.stop();
  }, 180_000);

  it("pi 0.73.1's RpcClient, given the entry as cliPath, runs a prompt on parley", async () => {
    const { base, cwd, env } = agentWorld("rpc-entry-old-");
    cleanups.push(() => rmSync(base, { recursive: true, force: true }));
    const client = new OldClient({ cliPath: ENTRY, cwd, env, provider: "offline", model: "echo", args: ["--no-session", "-e", OFFLINE_PROVIDER] });
    cleanups.push(() => client.stop());
    await client.start();
    await firstAnswer(client);
    expect((await client.getState()).model).toMatchObject({ provider: "offline", id: "echo" });
    const events = await client.promptAndWait("Reply with just: entry-ok");
    expect(events.some((e) => e.type === "agent_end")).toBe(true);
    expect(await client.getLastAssistantText()).toBe("entry-ok");
    await client.stop();
  }, 180_000);
});
