/**
 * The CLI's ACP mode: the ACP front door on parley's stdio. Start-up (extensions, flags, model)
 * and the process's lifetime are the CLI's, the same as in RPC mode (cli/main.ts).
 */
import { stdioOptions, type ModeContext } from "../../core/mode-context.js";
import type { ClaimedStdin } from "../../transport/claim-stdin.js";
import { StdioTransport } from "../../transport/stdio.js";
import { importModule } from "../../startup/module-loader.js";
import { AcpServer, type AcpServerOptions, type AcpSdk } from "./server.js";

export interface AcpStdio {
  stdin: ClaimedStdin;
  maxLineBytes?: number | undefined;
  /** The client closed our stdout. */
  onOutputClosed: () => void;
}

/** Makes the ACP server on stdio; the caller loads its extensions, then calls start(). */
export async function acpServer(settings: Omit<AcpServerOptions, "sdk" | "transport">, stdio: AcpStdio): Promise<AcpServer> {
  // The SDK is published as ES modules only.
  const sdk = await importModule<AcpSdk>("@agentclientprotocol/sdk");
  const transport = new StdioTransport({
    stdin: stdio.stdin,
    ...(stdio.maxLineBytes !== undefined ? { maxLineBytes: stdio.maxLineBytes } : {}),
    onOutputClosed: stdio.onOutputClosed,
  });
  return new AcpServer({ ...settings, sdk, transport });
}

/** What ACP mode takes beyond what every mode does. */
export type AcpModeOptions = Pick<AcpServerOptions, "version" | "sessionDir" | "startSessionAgent">;

/** `parley --mode acp`: the ACP front door on stdio, serving until the client goes. */
export async function runAcp(context: ModeContext, options: AcpModeOptions): Promise<void> {
  const server = await acpServer(
    { ...context.core, ...options, maxOpenSessions: maxOpenSessions(process.env["PARLEY_ACP_MAX_SESSIONS"], context.log) },
    stdioOptions(context),
  );
  await context.startAgent(server);
  context.lifetime.serve(server);
  server.start();
  context.lifetime.watchStdout();
}

/** PARLEY_ACP_MAX_SESSIONS: how many ACP sessions keep an agent (a positive whole number; else the default, with a warning). */
function maxOpenSessions(value: string | undefined, log: (message: string) => void): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const n = Number(value);
  if (Number.isInteger(n) && n >= 1) return n;
  log(`PARLEY_ACP_MAX_SESSIONS=${value} is not a positive whole number; using the default (16)`);
  return undefined;
}
