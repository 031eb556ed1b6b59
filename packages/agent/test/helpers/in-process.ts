/**
 * An RpcServer in-process with a scripted model and inline extensions. `serveToClient` connects
 * a real `RpcClient` to it over the linked in-process pair (`inProcessTransportPair`), the way an
 * embedder would; `serveScripted` drives it over a bare memory transport: send commands, wait for
 * records, prompt and wait until the agent settles.
 */
import { AGENT_CEILING_MS, deadline as scaled } from "./deadline.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RpcClient } from "@parley/client";
import type { ExtensionAPI } from "../../src/index.js";
import { resolveModels } from "../../src/models/index.js";
import { RpcServer, type RpcServerOptions } from "../../src/modes/rpc/server.js";
import { inProcessTransportPair } from "../../src/transport/in-process.js";
import { MemoryTransport } from "./memory-transport.js";

type Rec = Record<string, unknown>;
/** The real timer, taken before any test fakes timers: waits for records still poll on vitest's fake clock. */
const pollTimer = globalThis.setTimeout;
export type Factory = (pi: ExtensionAPI) => void;

type ServerOptions = Omit<RpcServerOptions, "transport" | "cwd" | "models" | "extensions">;

/** A directory with the model script, and the models resolved from it. */
async function scripted(turns: unknown[], env: NodeJS.ProcessEnv) {
  const dir = mkdtempSync(join(tmpdir(), "parley-in-process-"));
  writeFileSync(join(dir, "script.json"), JSON.stringify(turns));
  const models = await resolveModels({ modelScript: "script.json" }, { cwd: dir, env });
  return { dir, models };
}

/**
 * A real RpcClient on an in-process RpcServer (scripted model, inline extensions). The client
 * sees the agent go when the server closes, as it would on a pipe; `close()` ends both.
 */
export async function serveToClient(turns: unknown[], factories: Factory[] = [], options: ServerOptions & { env?: NodeJS.ProcessEnv } = {}) {
  const { env = {}, ...serverOptions } = options;
  const { dir, models } = await scripted(turns, env);
  const pair = inProcessTransportPair();
  const logs: string[] = [];
  const server = new RpcServer({
    log: (m) => logs.push(m),
    shutdownGraceMs: 200,
    ...serverOptions,
    transport: pair.agent,
    cwd: dir,
    models,
    extensions: factories.map((factory, i) => ({ path: `/ext/${i}.ts`, factory })),
  });
  void server.closed.then(() => pair.agent.close());
  // The client listens before the server starts: records written at start-up reach it.
  const client = new RpcClient(pair.client);
  await server.start();
  const close = async (): Promise<void> => {
    await client.close();
    await server.closed;
  };
  return { dir, server, client, transport: pair.client, logs, close };
}

export async function serveScripted(
  turns: unknown[],
  factories: Factory[] = [],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number; agentConfig?: RpcServerOptions["agentConfig"]; shutdownGraceMs?: number } = {},
) {
  const { dir, models } = await scripted(turns, options.env ?? {});
  const transport = new MemoryTransport();
  const logs: string[] = [];
  const server = new RpcServer({
    transport,
    cwd: dir,
    models,
    extensions: factories.map((factory, i) => ({ path: `/ext/${i}.ts`, factory })),
    log: (m) => logs.push(m),
    shutdownGraceMs: options.shutdownGraceMs ?? 200,
    ...(options.agentConfig === undefined ? {} : { agentConfig: options.agentConfig }),
  });
  await server.start();
  let counter = 0;
  // A ceiling against a hang, never a speed requirement: a minute at least, scaled on a slow machine.
  const until = async (condition: () => boolean, ms = options.timeoutMs ?? AGENT_CEILING_MS): Promise<void> => {
    const deadline = Date.now() + scaled(Math.max(ms, AGENT_CEILING_MS));
    while (!condition()) {
      if (Date.now() > deadline) {
        throw new Error(
          `timed out; last records:\n${transport.sent
            .slice(-30)
            .map((r) => JSON.stringify(r))
            .join("\n")}\nlogs:\n${logs.join("\n")}`,
        );
      }
      await new Promise((r) => pollTimer(r, 2));
    }
  };
  const response = async (id: string): Promise<Rec> => {
    await until(() => transport.sent.some((r) => r["type"] === "response" && r["id"] === id));
    return transport.sent.find((r) => r["type"] === "response" && r["id"] === id)!;
  };
  /** Sends a command with a fresh id and returns the id. */
  const send = (command: Rec): string => {
    const id = `c${++counter}`;
    transport.line({ ...command, id });
    return id;
  };
  const request = (command: Rec): Promise<Rec> => response(send(command));
  /** Prompts and waits until the agent has settled; returns the prompt's response. */
  const prompt = async (message: string): Promise<Rec> => {
    const settled = transport.of("agent_settled").length;
    const answer = await request({ type: "prompt", message });
    if (answer["success"] === true) await until(() => transport.of("agent_settled").length > settled);
    return answer;
  };
  return { dir, server, transport, logs, until, response, send, request, prompt };
}
