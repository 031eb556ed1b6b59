/**
 * `parley --mode rpc`: parse flags, load extensions, serve RPC on stdio until stdin ends.
 * stdout carries protocol records only; everything for humans goes to stderr.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { discoverExtensions, loadExtension } from "../extensions/loader.js";
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
import { parseArgs, resolveExtensionFlags, USAGE, UsageError, type CliOptions } from "./args.js";
import { errorMessage, errorText } from "../error-text.js";
import { whileSayingSlow } from "../slow-notice.js";
import { loadResources, piAgentDir } from "../resources/index.js";

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
function openSessions(options: CliOptions, cwd: string): { session: Session; sessions: SessionFactory } {
  if (options.noSession) {
    const sessions = memorySessions(cwd);
    return { session: sessions.create({}), sessions };
  }
  const sessionDir = options.sessionDir ?? defaultSessionDir(cwd);
  const sessions: SessionFactory = {
    create: ({ parentSession }) => createSession({ cwd, sessionDir, persist: true, onWarning: warn, ...(parentSession !== undefined ? { parentSession } : {}) }),
    // As pi's SessionManager.open: a path with no file yet starts a session to be written there.
    open: (path) => openSession(path, { onWarning: warn, createIfMissing: { cwd } }),
  };
  if (options.session !== undefined) {
    try {
      return { session: openSession(options.session, { onWarning: warn, createIfMissing: { cwd } }), sessions };
    } catch (error) {
      throw new UsageError(`--session ${options.session}: ${errorMessage(error)}`);
    }
  }
  if (options.continue) return { session: continueSession({ cwd, sessionDir, onWarning: warn }), sessions };
  return { session: sessions.create({}), sessions };
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

  // Before any extension code runs: from here on process.stdin is a stand-in, and fd 0 is read
  // for the protocol alone (not before the server starts).
  const stdin = claimStdin();
  const cwd = process.cwd();
  let models: ModelResolution;
  let session: Session;
  let sessions: SessionFactory;
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
    ({ session, sessions } = openSessions(options, cwd));
  } catch (error) {
    if (error instanceof ModelResolutionError || error instanceof ModelScriptError || error instanceof UsageError) {
      log(error.message);
      process.exit(2);
    }
    throw error;
  }
  for (const warning of models.warnings) log(warning);
  if (models.offlineNotice) log(models.offlineNotice);
  const extensions = extensionSources;
  for (const ext of extensions) if (ext.error !== undefined) log(ext.error);

  const transport = new StdioTransport({
    stdin,
    ...(options.maxLineBytes !== undefined ? { maxLineBytes: options.maxLineBytes } : {}),
    // The client closed our stdout: nobody can hear us, so finish quietly.
    onOutputClosed: () => void server.shutdown().then(() => process.exit(0)),
  });
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
      const sources = await loadAll(options);
      for (const ext of sources) if (ext.error !== undefined) log(ext.error);
      return sources;
    },
  });

  // Skills and prompt templates, where pi finds them (get_commands, /name expansion, the system prompt).
  const resources = loadResources({
    cwd,
    agentDir: piAgentDir(),
    skillPaths: options.skillPaths ?? [],
    promptTemplatePaths: options.promptTemplatePaths ?? [],
    noSkills: options.noSkills ?? false,
    noPromptTemplates: options.noPromptTemplates ?? false,
  });
  for (const w of resources.warnings) log(`${w.path}: ${w.message}`);
  server.runtime.resources = resources;

  await server.loadExtensions();
  try {
    // Only now are the extensions' flags known, so only now can unknown options be judged.
    server.setExtensionFlags(resolveExtensionFlags(options, server.runtime.flags));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    log(`${error.message}\n\n${USAGE}`);
    process.exit(2);
  }

  // Third-party code must not take the agent down: report what escapes it, keep serving.
  // Anything can be thrown (null, a string): errorText describes it without throwing again.
  process.on("uncaughtException", (thrown: unknown) => server.reportError({ extensionPath: "<unknown>", event: "uncaughtException", ...errorText(thrown) }));
  process.on("unhandledRejection", (reason) => server.reportError({ extensionPath: "<unknown>", event: "unhandledRejection", ...errorText(reason) }));
  // The conventional 128+n status says which signal ended us; stdin EOF and ctx.shutdown() exit 0.
  let exitCode = 0;
  for (const [signal, code] of [["SIGTERM", 143], ["SIGINT", 130], ["SIGHUP", 129]] as const) {
    process.once(signal, () => {
      exitCode = code;
      void server.shutdown();
    });
  }

  void server.closed.then(() => process.exit(exitCode));
  await server.begin();
}
