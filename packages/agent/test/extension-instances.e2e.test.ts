/**
 * One extension instance per session, as in pi: pi builds a new runtime for every new, resumed,
 * forked and cloned session, so each extension's factory runs again, its module is evaluated afresh,
 * and the instance it replaced is stale (its `ctx` throws). pi's shipped `RpcClient` drives pi
 * 0.73.1 and parley through the same steps with the same extension (fixtures/extension-instances.ts)
 * and the same offline model; the extension's notes must be the same, in the same order.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { RpcClient as PiRpcClient } from "@mariozechner/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";
import { AGENTS, agentWorld, CLI, OFFLINE_PROVIDER, type AgentName } from "./helpers/offline-agents.js";
import { ROOT } from "./helpers/spawn.js";

const RPC_CLIENT_JS = join(ROOT, "node_modules/@mariozechner/pi-coding-agent/dist/modes/rpc/rpc-client.js");
const { RpcClient } = (await import(RPC_CLIENT_JS)) as { RpcClient: typeof PiRpcClient };
const FIXTURE = join(ROOT, "packages/agent/test/fixtures/extension-instances.ts");
const CEILING_MS = 60_000;

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const clean of cleanups.splice(0)) await clean();
});

/** The notes (ctx.ui.notify) an agent shows while the steps run, in order. */
async function notesThrough(agent: AgentName): Promise<string[]> {
  const world = agentWorld(`instances-${agent}-`);
  const client = new RpcClient({
    cliPath: CLI[agent],
    cwd: world.cwd,
    env: { ...world.env, PATH: process.env["PATH"] ?? "" },
    args: ["-e", OFFLINE_PROVIDER, "-e", FIXTURE, "--provider", "offline", "--model", "echo"],
  });
  cleanups.push(async () => {
    await client.stop();
    rmSync(world.base, { recursive: true, force: true });
  });
  const notes: string[] = [];
  const waiters = new Set<() => void>();
  client.onEvent((event) => {
    const record: Record<string, unknown> = { ...event };
    if (record["type"] === "extension_ui_request" && record["method"] === "notify") notes.push(String(record["message"]));
    for (const wake of [...waiters]) wake();
  });
  /** Runs an extension command and waits for the one note it shows. */
  const command = async (text: string): Promise<void> => {
    const before = notes.length;
    await client.prompt(text);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${agent}: no note after ${text}; notes so far: ${JSON.stringify(notes)}\n${client.getStderr()}`)),
        CEILING_MS,
      );
      const check = (): void => {
        if (notes.length <= before) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
      check();
    });
  };

  await client.start();
  await command("/report");
  // An answered prompt: the session is written to its file (pi writes it with the first reply).
  await client.promptAndWait("Reply with just: first", undefined, CEILING_MS);
  const first = (await client.getState()).sessionFile;
  if (first === undefined) throw new Error(`${agent}: no session file`);

  expect(await client.newSession()).toEqual({ cancelled: false });
  await command("/report");
  await command("/old-ctx");

  expect(await client.switchSession(first)).toEqual({ cancelled: false });
  await command("/report");

  const [userMessage] = await client.getForkMessages();
  if (!userMessage) throw new Error(`${agent}: nothing to fork from`);
  expect((await client.fork(userMessage.entryId)).cancelled).toBe(false);
  await command("/report");

  expect(await client.switchSession(first)).toEqual({ cancelled: false });
  expect(await client.clone()).toEqual({ cancelled: false });
  await command("/report");

  await command("/replace");
  await command("/report");
  return notes;
}

describe("extensions load again for every session, as in pi", () => {
  it(
    "new, resume, fork, clone and ctx.newSession each run the factory again on a fresh module; the replaced ctx is stale",
    async () => {
      const [pi = [], parley = []] = await Promise.all(AGENTS.map((agent) => notesThrough(agent)));
      // parley: the factory count climbs, each module instance runs its factory once, each
      // instance sees only its own session's session_start, and a replaced ctx throws.
      expect(parley).toEqual([
        "#1 module:1 startup",
        "#2 module:1 new",
        "#2 first ctx stale",
        "#3 module:1 resume",
        "#4 module:1 fork",
        "#6 module:1 fork",
        "#6 withSession: own ctx stale, new ctx usable",
        "#7 module:1 new",
      ]);
      // pi 0.73.1 the same, except that its RPC commands (not ctx.newSession) bind the new
      // runtime twice, so the new instance gets session_start twice; parley sends it once (README).
      const once = (note: string): string => note.replace(/ (\w+),\1$/, " $1");
      expect(pi.filter((note) => / (new|resume|fork),\1$/.test(note))).toHaveLength(4);
      expect(pi.map(once)).toEqual(parley);
    },
    4 * CEILING_MS,
  );
});
