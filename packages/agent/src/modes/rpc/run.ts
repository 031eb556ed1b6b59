/**
 * `parley --mode rpc`: pi's protocol on stdio until stdin ends. stdout carries protocol records
 * only; anything else written there goes to stderr.
 */
import { stdioOptions, type ModeContext } from "../../core/mode-context.js";
import { StdioTransport } from "../../transport/stdio.js";
import { RpcServer, type RpcServerOptions } from "./server.js";

/** What RPC mode takes beyond what every mode does: the RPC server's own options. */
export type RpcModeOptions = Pick<RpcServerOptions, "sessionDirs" | "refreshModels">;

export async function runRpc(context: ModeContext, options: RpcModeOptions): Promise<void> {
  const transport = new StdioTransport(stdioOptions(context));
  const server = new RpcServer({ ...context.core, transport, sessionDirs: options.sessionDirs, refreshModels: options.refreshModels });
  await context.startAgent(server);
  context.lifetime.serve(server);
  await server.begin();
  context.lifetime.watchStdout();
}
