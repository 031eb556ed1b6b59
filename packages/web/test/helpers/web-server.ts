/**
 * Spawns `parley --mode web` on a free port (the real CLI from its bundle) and hands back its URL,
 * plus a small raw WebSocket client that records everything it receives and validates each
 * record against the published JSON Schema.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Compile } from "typebox/schema";
import WebSocket from "ws";
import { deadline } from "../../../agent/test/helpers/deadline.js";

export const ROOT = resolve(import.meta.dirname, "../../../..");
export const PARLEY_BIN = join(ROOT, "node_modules/.bin/parley");
export const DEMO = join(ROOT, "examples/extensions/rpc-demo.ts");
/** The ceiling of every wait here (start-up included): a minute, scaled by PARLEY_TEST_DEADLINE_SCALE. */
export const START_MS = deadline(60_000);

export interface WebAgent {
  child: ChildProcessWithoutNullStreams;
  /** The URL parley printed (token included). */
  url: string;
  /** http://host:port */
  origin: string;
  token: string;
  wsUrl: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

/** `sessions`: store sessions (pass --session-dir in args); without it, --no-session. */
export function startWeb(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; sessions?: boolean } = {}): Promise<WebAgent> {
  const home = mkdtempSync(join(tmpdir(), "parley-web-home-"));
  const child = spawn(PARLEY_BIN, ["--mode", "web", "--web-port", "0", ...(options.sessions ? [] : ["--no-session"]), ...args], {
    cwd: options.cwd ?? home,
    env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent"), ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.on("exit", (code, signal) => res({ code, signal })));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`parley --mode web printed no URL in ${START_MS} ms; stderr:\n${stderr}`)), START_MS);
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`parley --mode web exited (${code}) before printing its URL; stderr:\n${stderr}`));
    });
    child.stdout.on("data", (d: string) => {
      stdout += d;
      const newline = stdout.indexOf("\n");
      if (newline < 0) return;
      clearTimeout(timer);
      const url = new URL(stdout.slice(0, newline));
      const token = url.searchParams.get("token") ?? "";
      resolvePromise({
        child,
        url: url.href,
        origin: url.origin,
        token,
        wsUrl: `ws://${url.host}/ws?token=${encodeURIComponent(token)}`,
        stdout: () => stdout,
        stderr: () => stderr,
        exited,
        stop,
      });
    });
  });
}

const outbound = Compile(JSON.parse(readFileSync(join(ROOT, "packages/protocol/json-schema/outbound.json"), "utf8")) as Record<string, unknown>);

export type Rec = Record<string, unknown> & { type: string };

export interface RawClient {
  socket: WebSocket;
  records: Rec[];
  /** Records that did not match the outbound JSON Schema (must stay empty). */
  invalid: Rec[];
  send(record: object): void;
  waitFor(match: (r: Rec) => boolean, from?: number, ms?: number): Promise<Rec>;
  request(command: { type: string; [key: string]: unknown }): Promise<Rec>;
  close(): Promise<void>;
}

let ids = 0;

export function connectRaw(url: string, options: { origin?: string } = {}): Promise<RawClient> {
  const socket = new WebSocket(url, options.origin !== undefined ? { origin: options.origin } : {});
  const records: Rec[] = [];
  const invalid: Rec[] = [];
  const wakers = new Set<() => void>();
  socket.on("message", (data) => {
    const record = JSON.parse(String(data)) as Rec;
    records.push(record);
    if (!outbound.Check(record)) invalid.push(record);
    for (const wake of [...wakers]) wake();
  });
  const waitFor = (match: (r: Rec) => boolean, from = 0, ms = START_MS): Promise<Rec> =>
    new Promise((res, rej) => {
      const check = (): boolean => {
        const found = records.slice(from).find(match);
        if (!found) return false;
        wakers.delete(check);
        clearTimeout(timer);
        res(found);
        return true;
      };
      const timer = setTimeout(() => {
        wakers.delete(check);
        rej(new Error(`no matching record in ${ms} ms; got ${JSON.stringify(records.slice(-10))}`));
      }, ms);
      if (!check()) wakers.add(check);
    });
  const client: RawClient = {
    socket,
    records,
    invalid,
    send: (record) => socket.send(JSON.stringify(record)),
    waitFor,
    request: (command) => {
      const id = `raw-${++ids}`;
      const from = records.length;
      socket.send(JSON.stringify({ ...command, id }));
      return waitFor((r) => r.type === "response" && r["id"] === id, from);
    },
    close: () =>
      new Promise((res) => {
        if (socket.readyState === WebSocket.CLOSED) return res();
        socket.once("close", () => res());
        socket.close();
      }),
  };
  return new Promise((res, rej) => {
    socket.once("open", () => res(client));
    socket.once("unexpected-response", (_req, response) => rej(new Error(`HTTP ${response.statusCode}`)));
    socket.once("error", (error) => rej(error));
  });
}
