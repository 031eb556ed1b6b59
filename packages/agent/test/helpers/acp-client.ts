/**
 * The ACP SDK's own client side over a spawned `parley --mode acp`: every session/update is
 * recorded in arrival order, dialogs are answered by the test's handlers, and every stdout line is
 * kept raw so a test can check that stdout carries JSON-RPC only.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach } from "vitest";
import { PARLEY_BIN } from "./spawn.js";
import { AGENT_CEILING_MS, deadline } from "./deadline.js";

export type Handler<P, R> = (params: P, signal: AbortSignal) => Promise<R> | R;

export interface AcpHarness {
  child: ChildProcessWithoutNullStreams;
  agent: acp.ClientContext;
  updates: acp.SessionNotification[];
  /** Raw stdout lines. */
  lines: string[];
  stderr: () => string;
  /** Dialog requests as received, with whether the agent withdrew them ($/cancel_request). */
  requests: { method: string; params: unknown; withdrawn: boolean }[];
  onElicit: Handler<acp.CreateElicitationRequest, acp.CreateElicitationResponse>;
  onPermission: Handler<acp.RequestPermissionRequest, acp.RequestPermissionResponse>;
  /** Resolves once `condition()` holds, checked on every message; rejects after `ms`. */
  until(condition: () => boolean, what: string, ms?: number): Promise<void>;
  close(): Promise<{ code: number | null }>;
}

/** The ceiling of every wait: a minute, scaled by PARLEY_TEST_DEADLINE_SCALE. */
export const WAIT_MS = deadline(AGENT_CEILING_MS);

export async function startAcp(
  args: string[],
  options: { cwd?: string; home?: string; capabilities?: acp.ClientCapabilities; env?: Record<string, string> } = {},
): Promise<AcpHarness> {
  const home = options.home ?? mkdtempSync(join(tmpdir(), "parley-acp-home-"));
  const child = spawn(PARLEY_BIN, ["--mode", "acp", ...args], {
    cwd: options.cwd ?? home,
    env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent"), ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const lines: string[] = [];
  let partial = "";
  const waiters = new Set<() => void>();
  const wake = (): void => {
    for (const w of [...waiters]) w();
  };
  child.stdout.on("data", (chunk: Buffer) => {
    const parts = (partial + chunk.toString("utf8")).split("\n");
    partial = parts.pop() ?? "";
    lines.push(...parts);
    wake();
  });
  const exited = new Promise<{ code: number | null }>((resolve) => child.on("exit", (code) => resolve({ code })));

  const harness = {
    child,
    updates: [] as acp.SessionNotification[],
    lines,
    stderr: () => stderr,
    requests: [] as AcpHarness["requests"],
    onElicit: (() => ({ action: "cancel" })) as AcpHarness["onElicit"],
    onPermission: (() => ({ outcome: { outcome: "cancelled" } })) as AcpHarness["onPermission"],
  } as AcpHarness;

  const track = <P, R>(method: string, params: P, signal: AbortSignal, handler: Handler<P, R>): Promise<R> => {
    const entry = { method, params: params as unknown, withdrawn: false };
    harness.requests.push(entry);
    signal.addEventListener("abort", () => {
      entry.withdrawn = true;
      wake();
    });
    wake();
    return Promise.resolve(handler(params, signal));
  };

  const app = acp
    .client({ name: "parley-test" })
    .onNotification("session/update", ({ params }) => {
      harness.updates.push(params);
      wake();
    })
    .onRequest("elicitation/create", ({ params, signal }) => track("elicitation/create", params, signal, (p, s) => harness.onElicit(p, s)))
    .onRequest("session/request_permission", ({ params, signal }) => track("session/request_permission", params, signal, (p, s) => harness.onPermission(p, s)));
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>);
  const connection = app.connect(stream);
  harness.agent = connection.agent;
  harness.until = (condition, what, ms = WAIT_MS) =>
    new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (!condition()) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`timed out waiting for ${what}; updates:\n${harness.updates.map((u) => JSON.stringify(u.update)).join("\n")}\nstderr:\n${stderr}`));
      }, ms);
      waiters.add(check);
      check();
    });
  harness.close = async () => {
    child.stdin.end();
    const result = await exited;
    connection.close();
    return result;
  };
  await connection.agent.request("initialize", { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: options.capabilities ?? {} });
  return harness;
}

/** The text of agent message chunks sent for a session, joined. */
export function agentText(harness: AcpHarness, sessionId?: string): string {
  return harness.updates
    .filter((n) => sessionId === undefined || n.sessionId === sessionId)
    .map((n) => (n.update.sessionUpdate === "agent_message_chunk" && n.update.content.type === "text" ? n.update.content.text : ""))
    .join("");
}

/** A promise that resolves (with `value`) only when the agent withdraws the request. */
export function untilWithdrawn<R>(signal: AbortSignal, value: R): Promise<R> {
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(value)));
}

/** The harnesses a test file starts: push each one here; any still running after a test is killed. */
export function killedAfterEach(): AcpHarness[] {
  const running: AcpHarness[] = [];
  afterEach(() => {
    for (const h of running.splice(0)) if (h.child.exitCode === null) h.child.kill("SIGKILL");
  });
  return running;
}

/** session/new in `cwd`, once its command list has come (session_start runs after the response; the list follows it). */
export async function openSession(harness: AcpHarness, cwd: string): Promise<acp.NewSessionResponse> {
  const session = await harness.agent.request("session/new", { cwd, mcpServers: [] });
  await harness.until(
    () => harness.updates.some((n) => n.sessionId === session.sessionId && n.update.sessionUpdate === "available_commands_update"),
    `available_commands_update of ${session.sessionId}`,
  );
  return session;
}

/** session/prompt with one text block. */
export const promptText = (harness: AcpHarness, sessionId: string, text: string): Promise<acp.PromptResponse> =>
  harness.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });

/** startAcp for a test file: each harness it starts is killed after every test if still running. */
export function acpStarter(): typeof startAcp {
  const running = killedAfterEach();
  return async (args, options) => {
    const h = await startAcp(args, options);
    running.push(h);
    return h;
  };
}

/** A temp folder (`prefix…`) with a model script in it, and where sessions and a HOME go. */
export function scriptWorkspace(prefix: string, script: unknown[]): { dir: string; script: string; sessions: string; home: string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const file = join(dir, "script.json");
  writeFileSync(file, JSON.stringify(script));
  return { dir, script: file, sessions: join(dir, "sessions"), home: join(dir, "home") };
}
