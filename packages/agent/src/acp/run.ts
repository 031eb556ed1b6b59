/**
 * The CLI's ACP mode: the ACP front door on parley's stdio. Start-up (extensions, flags, model)
 * and the process's lifetime are the CLI's, the same as in RPC mode (cli/main.ts).
 */
import type { ClaimedStdin } from "../transport/claim-stdin.js";
import { StdioTransport } from "../transport/stdio.js";
import { importModule } from "../startup/module-loader.js";
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
