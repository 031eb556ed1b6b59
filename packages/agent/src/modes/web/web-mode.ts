/**
 * `parley --mode web`: the RPC server's records over WebSockets to any number of tabs, and the
 * page that shows them. Loaded only in web mode, so RPC start-up never pays for it.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ModeContext } from "../../core/mode-context.js";
import { UsageError } from "../../core/usage-error.js";
import { errorMessage } from "../../error-text.js";
import { takeOverStdout } from "../../transport/protocol-stdout.js";
import type { RpcModeOptions } from "../rpc/run.js";
import { RpcServer } from "../rpc/server.js";
import { ConnectionHub } from "./connection-hub.js";
import { isLoopback, startWebServer, type WebServer } from "./http-server.js";

export { ConnectionHub } from "./connection-hub.js";
export type { WebServer } from "./http-server.js";

export interface WebModeOptions {
  host: string;
  port: number;
  token?: string | undefined;
  allowedOrigins: readonly string[];
  open: boolean;
  maxMessageBytes: number;
  log: (message: string) => void;
}

/**
 * The shortest --web-token taken: the token is all that stands between whoever reaches the port
 * and a shell; 16 characters of a random token are about 96 bits. The random default has 24.
 */
export const MIN_WEB_TOKEN_LENGTH = 16;

/** Refuses what must not start (a non-loopback host without a token, a token too short to guess hard); call before anything runs. */
export function webToken(options: Pick<WebModeOptions, "host" | "token">): string {
  if (options.token === "" && !isLoopback(options.host)) {
    throw new UsageError(`--web-host ${options.host} is not a loopback address: it needs a token (leave --web-token out for a random one)`);
  }
  // An empty token is "none" (loopback only, checked above); anything else must be hard to guess.
  if (options.token !== undefined && options.token !== "" && options.token.length < MIN_WEB_TOKEN_LENGTH) {
    throw new UsageError(
      `--web-token is ${options.token.length} character${options.token.length === 1 ? "" : "s"} long: use at least ${MIN_WEB_TOKEN_LENGTH} (anyone who guesses it can run commands as you), or leave it out for a random one`,
    );
  }
  return options.token ?? randomBytes(18).toString("base64url");
}

/** What to warn of before listening: a host other machines may reach. */
export function webWarnings(options: Pick<WebModeOptions, "host" | "port">): string[] {
  if (isLoopback(options.host)) return [];
  return [
    `warning: --web-host ${options.host} is not a loopback address: anyone who can reach it on port ${options.port} and has the token can drive this agent (and run commands as you), and plain HTTP carries the token unencrypted; prefer 127.0.0.1 with an SSH tunnel or a TLS proxy`,
  ];
}

/**
 * Web mode: pi's RPC server (modes/rpc/) with the connection hub as its transport; stdout carries
 * one line, the URL to open, and anything else written there goes to stderr. `token`: webToken's.
 */
export async function runWeb(context: ModeContext, options: RpcModeOptions & Omit<WebModeOptions, "log"> & { token: string }): Promise<void> {
  const { log, lifetime } = context;
  const stdout = takeOverStdout().output;
  const writeStdout = (text: string): boolean => stdout.write(text);
  const hub = new ConnectionHub({ log });
  const server = new RpcServer({ ...context.core, transport: hub, sessionDirs: options.sessionDirs, refreshModels: options.refreshModels });
  await context.startAgent(server);
  lifetime.serve(server);
  hub.setDialogs(server.dialogs);
  const begun = server.begin();
  try {
    const { url } = await serveWeb(hub, { ...options, log });
    log(`web UI: ${url}`);
    writeStdout(`${url}\n`);
  } catch (error) {
    log(`--mode web could not listen on ${options.host}:${options.port}: ${errorMessage(error)}`);
    lifetime.fail(1);
  }
  await begun;
}

/** Starts listening; the hub must already be the server's transport (started). */
export async function serveWeb(hub: ConnectionHub, options: WebModeOptions & { token: string }): Promise<WebServer> {
  const server = await startWebServer({
    host: options.host,
    port: options.port,
    token: options.token,
    allowedOrigins: options.allowedOrigins,
    pageDir: pageDir(),
    hub,
    maxMessageBytes: options.maxMessageBytes,
    log: options.log,
  });
  if (options.open) openBrowser(server.url, options.log);
  return server;
}

/** The built page of @parley/web (packages/web/dist/page). */
export function pageDir(): string {
  const candidates: string[] = [];
  try {
    candidates.push(join(dirname(createRequire(import.meta.url).resolve("@parley/web/package.json")), "dist", "page"));
  } catch {
    // not installed as a package: the monorepo layout below
  }
  for (let dir = dirname(fileURLToPath(import.meta.url)); dirname(dir) !== dir; dir = dirname(dir)) {
    candidates.push(join(dir, "packages", "web", "dist", "page"));
  }
  const found = candidates.find((dir) => existsSync(join(dir, "app.js")));
  if (!found) throw new Error("the web page is not built (packages/web/dist/page/app.js is missing): run npm run build");
  return found;
}

function openBrowser(url: string, log: (message: string) => void): void {
  const command = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  try {
    const child = spawn(command, [url], { stdio: "ignore" });
    child.on("error", (error) => log(`--web-open: could not run ${command}: ${error.message}; open ${url} yourself`));
  } catch (error) {
    log(`--web-open: could not run ${command}: ${(error as Error).message}`);
  }
}
