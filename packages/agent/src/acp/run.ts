/** The CLI's ACP mode: what main.ts does for RPC, with the ACP front door on the same stdio. */
import type { AgentSession } from "../agent/agent-session.js";
import type { ModelResolution } from "../models/index.js";
import type { ExtensionSource, SessionFactory } from "../rpc/server.js";
import type { Session } from "../session/session.js";
import type { ClaimedStdin } from "../transport/claim-stdin.js";
import { StdioTransport, takeOverStdout } from "../transport/stdio.js";
import { resolveExtensionFlags, USAGE, UsageError, type CliOptions } from "../cli/args.js";
import { errorText } from "../error-text.js";
import { importModule } from "../module-loader.js";
import { AcpServer, type AcpSdk } from "./server.js";

export interface RunAcpOptions {
  options: CliOptions;
  stdin: ClaimedStdin;
  cwd: string;
  models: ModelResolution;
  extensions: ExtensionSource[];
  session: Session;
  sessions: SessionFactory;
  sessionDir: string | undefined;
  log: (message: string) => void;
  version: string;
  reloadExtensions: () => Promise<ExtensionSource[]>;
  /** Runs once the extensions are loaded and their flags checked (the CLI chooses the start-up model here). */
  afterExtensions?: (agent: AgentSession) => Promise<void>;
}

export async function runAcp(run: RunAcpOptions): Promise<void> {
  const { options, log } = run;
  // The SDK is published as ES modules only.
  const sdk = await importModule<AcpSdk>("@agentclientprotocol/sdk");
  const transport = new StdioTransport({
    stdin: run.stdin,
    ...(options.maxLineBytes !== undefined ? { maxLineBytes: options.maxLineBytes } : {}),
    onOutputClosed: () => void server.shutdown().then(() => process.exit(0)),
  });
  takeOverStdout();
  const server = new AcpServer({
    sdk,
    transport,
    cwd: run.cwd,
    version: run.version,
    extensions: run.extensions,
    models: run.models,
    session: run.session,
    sessions: run.sessions,
    sessionDir: run.sessionDir,
    log,
    ...(options.systemPrompt !== undefined ? { systemPrompt: options.systemPrompt } : {}),
    ...(options.name !== undefined ? { sessionName: options.name } : {}),
    reloadExtensions: async () => {
      const sources = await run.reloadExtensions();
      for (const ext of sources) if (ext.error !== undefined) log(ext.error);
      return sources;
    },
  });
  // ctx.isProjectTrusted(): the start-up decision (cli/main.ts), as in RPC mode.
  server.runtime.projectTrusted = options.projectTrust !== false;
  await server.loadExtensions();
  try {
    server.setExtensionFlags(resolveExtensionFlags(options, server.runtime.flags));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    log(`${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  try {
    await run.afterExtensions?.(server.agent);
  } catch (error) {
    // A model the command line names that does not exist: said once, exit 2, as in RPC mode.
    log(errorText(error).error);
    process.exit(2);
  }
  process.on("uncaughtException", (thrown: unknown) =>
    server.host.reportError({ extensionPath: "<unknown>", event: "uncaughtException", ...errorText(thrown) }),
  );
  process.on("unhandledRejection", (reason) => server.host.reportError({ extensionPath: "<unknown>", event: "unhandledRejection", ...errorText(reason) }));
  let exitCode = 0;
  for (const [signal, code] of [
    ["SIGTERM", 143],
    ["SIGINT", 130],
    ["SIGHUP", 129],
  ] as const) {
    process.once(signal, () => {
      exitCode = code;
      void server.shutdown();
    });
  }
  void server.closed.then(() => process.exit(exitCode));
  server.start();
}
