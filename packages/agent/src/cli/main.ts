/**
 * `parley --mode rpc`: parse flags, load extensions, serve RPC on stdio until stdin ends.
 * stdout carries protocol records only; everything for humans goes to stderr.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { discoverExtensions, loadExtension } from "../extensions/loader.js";
import { extensionStack } from "../extensions/extension-stack.js";
import { ModelResolutionError, ModelScriptError, resolveModels, type ModelResolution } from "../models/index.js";
import { memorySessions, RpcServer, type ExtensionSource, type SessionFactory } from "../rpc/server.js";
// The session modules themselves, not session/index.js: that also re-exports the HTML renderer,
// which start-up does not need (export_html loads it).
import type { SessionWarning } from "../session/format.js";
import type { Session } from "../session/session.js";
import { continueSession, createSession, defaultSessionDir, openSession } from "../session/store.js";
import { claimStdin } from "../transport/claim-stdin.js";
import { StdioTransport, takeOverStdout } from "../transport/stdio.js";
import { writeStderr } from "../transport/stderr.js";
import { watchOutputClosed } from "../transport/output-watch.js";
import { killAllChildren } from "../child-processes.js";
import { parseArgs, resolveExtensionFlags, USAGE, UsageError, type CliOptions } from "./args.js";
import { errorMessage, errorText } from "../error-text.js";
import { whileSayingSlow } from "../slow-notice.js";

const log = (message: string): void => {
  writeStderr(`parley: ${message.replace(/^parley: /, "")}\n`);
};

/** The agent package's version: its package.json is the first one above this file (dist/cli, or dist/bundle in the bundle). */
function version(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dirname(dir) !== dir; dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (existsSync(file)) return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
  }
  return "unknown";
}

async function loadAll(options: CliOptions): Promise<ExtensionSource[]> {
  const sources: ExtensionSource[] = [];
  const discovered = options.noExtensions ? [] : discoverExtensions(process.cwd());
  const load = (path: string) => whileSayingSlow(loadExtension(path), `extension ${path} (loading the module)`, log);
  for (const { path, scope } of discovered) sources.push({ ...(await load(path)), scope });
  for (const path of options.extensions) sources.push({ ...(await load(path)), scope: "temporary" });
  return sources;
}

const warn = (w: SessionWarning): void => log(`session file: ${w.message}`);

/** The session to start with and how new ones are made, from --no-session/--session/-c/--session-dir. */
function openSessions(options: CliOptions, cwd: string): { session: Session; sessions: SessionFactory; sessionDir?: string } {
  if (options.noSession) {
    const sessions = memorySessions(cwd);
    return { session: sessions.create({}), sessions };
  }
  const sessionDir = options.sessionDir ?? defaultSessionDir(cwd);
  const sessions: SessionFactory = {
    create: ({ parentSession }) => createSession({ cwd, sessionDir, persist: true, onWarning: warn, ...(parentSession !== undefined ? { parentSession } : {}) }),
    open: (path) => openSession(path, { onWarning: warn }),
  };
  if (options.session !== undefined) {
    try {
      return { session: openSession(options.session, { onWarning: warn, createIfMissing: { cwd } }), sessions, sessionDir };
    } catch (error) {
      throw new UsageError(`--session ${options.session}: ${errorMessage(error)}`);
    }
  }
  if (options.continue) return { session: continueSession({ cwd, sessionDir, onWarning: warn }), sessions, sessionDir };
  return { session: sessions.create({}), sessions, sessionDir };
}

export async function main(argv: string[]): Promise<void> {
  let options: CliOptions;
  let extensionSources: ExtensionSource[] = [];
  try {
    options = parseArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    log(`${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (options.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (options.version) {
    process.stdout.write(`${version()}\n`);
    return;
  }

  // Web mode's modules load only in web mode; a non-loopback host without a token stops here.
  const web = options.mode === "web" ? await import("../web/web-mode.js") : undefined;
  let webToken = "";
  if (web) {
    try {
      webToken = web.webToken(options.web);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      log(error.message);
      process.exit(2);
    }
  }

  // Before any extension code runs: from here on process.stdin is a stand-in, and fd 0 is read
  // for the protocol alone (not before the server starts). Web mode does not read it.
  const stdin = claimStdin();
  const cwd = process.cwd();
  let models: ModelResolution;
  let session: Session;
  let sessions: SessionFactory;
  let sessionDir: string | undefined;
  try {
    // Model loading (pi-ai) and extension loading (jiti) are independent: overlap them.
    const [resolved, extensionsLoaded] = await Promise.all([
      resolveModels(
        {
          ...(options.provider !== undefined ? { provider: options.provider } : {}),
          ...(options.model !== undefined ? { model: options.model } : {}),
          ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
          ...(options.thinking !== undefined ? { thinking: options.thinking } : {}),
          ...(options.modelScript !== undefined ? { modelScript: options.modelScript } : {}),
        },
        { cwd },
      ),
      loadAll(options),
    ]);
    models = resolved;
    extensionSources = extensionsLoaded;
    // An -e file that is missing or does not load stops parley, as in pi: one message, exit 1.
    const unloadable = extensionSources.find((ext) => ext.scope === "temporary" && ext.error !== undefined);
    if (unloadable?.error !== undefined) {
      log(unloadable.error);
      process.exit(1);
    }
    ({ session, sessions, sessionDir } = openSessions(options, cwd));
  } catch (error) {
    if (error instanceof ModelResolutionError || error instanceof ModelScriptError || error instanceof UsageError) {
      log(error.message);
      process.exit(2);
    }
    throw error;
  }
  // Discovered extensions that failed are reported once, by the server (stderr and extension_error).
  const extensions = extensionSources;

  if (options.mode === "acp") {
    // Loaded only for ACP: RPC start-up does not pay for the ACP SDK or its front door.
    const { runAcp } = await import("../acp/run.js");
    await runAcp({ options, stdin, cwd, models, extensions, session, sessions, sessionDir, log, version: version(), reloadExtensions: () => loadAll(options) });
    return;
  }

  // Web mode: stdout carries one line, the URL to open; anything else written there goes to stderr.
  const writeStdout = process.stdout.write.bind(process.stdout);
  const hub = web ? new web.ConnectionHub({ log }) : undefined;
  const transport =
    hub ??
    new StdioTransport({
      stdin,
      ...(options.maxLineBytes !== undefined ? { maxLineBytes: options.maxLineBytes } : {}),
      // The client closed our stdout: nobody can hear us, so finish quietly.
      onOutputClosed: () => outputClosed(),
    });
  const outputClosed = (): void => void server.shutdown().then(() => process.exit(0));
  takeOverStdout();
  const server = new RpcServer({
    transport,
    cwd,
    extensions,
    log,
    models,
    session,
    sessions,
    ...(options.systemPrompt !== undefined ? { systemPrompt: options.systemPrompt } : {}),
    ...(options.name !== undefined ? { sessionName: options.name } : {}),
    // ctx.reload(): discovery and -e files again, each loaded fresh.
    reloadExtensions: async () => {
      return loadAll(options);
    },
  });

  const failed = (await server.loadExtensions({ explicitFailuresFatal: true }))[0];
  if (failed !== undefined) {
    log(`Failed to load extension ${failed.path}: ${failed.stack !== undefined ? extensionStack(failed.stack) : failed.error}`);
    process.exit(1);
  }
  try {
    // Only now are the extensions' flags known, so only now can unknown options be judged.
    server.setExtensionFlags(resolveExtensionFlags(options, server.runtime.flags));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    log(`${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  // Notes about the model once the command line is known to be good.
  for (const warning of models.warnings) log(warning);
  if (models.offlineNotice) log(models.offlineNotice);

  // Third-party code must not take the agent down: report what escapes it, keep serving.
  // Anything can be thrown (null, a string): errorText describes it without throwing again.
  process.on("uncaughtException", (thrown: unknown) => server.reportError({ extensionPath: "<unknown>", event: "uncaughtException", ...errorText(thrown) }));
  process.on("unhandledRejection", (reason) => server.reportError({ extensionPath: "<unknown>", event: "unhandledRejection", ...errorText(reason) }));
  // The conventional 128+n status says which signal ended us; stdin EOF and ctx.shutdown() exit 0.
  // A second signal while shutting down exits at once (children still die, below).
  let exitCode = 0;
  let signalled = false;
  for (const [signal, code] of [["SIGTERM", 143], ["SIGINT", 130], ["SIGHUP", 129]] as const) {
    process.on(signal, () => {
      if (signalled) process.exit(code);
      signalled = true;
      exitCode = code;
      void server.shutdown();
    });
  }
  // However parley ends, no child process it started outlives it (synchronous kills only here).
  process.on("exit", killAllChildren);

  void server.closed.then(() => process.exit(exitCode));
  if (!web || !hub) {
    await server.begin();
    // A reader that goes away is noticed at once, even while nothing is written (a silent command).
    watchOutputClosed(1, outputClosed);
    return;
  }
  hub.setDialogs(server.dialogs);
  const begun = server.begin();
  try {
    const { url } = await web.serveWeb(hub, {
      ...options.web,
      token: webToken,
      maxMessageBytes: options.maxLineBytes ?? 128 * 1024 * 1024,
      log,
    });
    log(`web UI: ${url}`);
    writeStdout(`${url}\n`);
  } catch (error) {
    log(`--mode web could not listen on ${options.web.host}:${options.web.port}: ${errorMessage(error)}`);
    exitCode = 1;
    void server.shutdown();
  }
  await begun;
}
