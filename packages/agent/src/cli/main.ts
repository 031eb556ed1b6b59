/**
 * `parley`: parse flags, read pi's files, open the session, load extensions, then start the mode
 * the command line selects (mode-table.ts), which makes its front door and has `startAgent` choose
 * the model. stdout carries protocol records only; everything for humans goes to stderr, and every
 * flag error comes before anything else is said.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { isThinkingLevel } from "@parley/protocol/constants";
import type { AgentConfig, ProviderRequestConfig } from "../agent/agent-config.js";
import type { AgentSession } from "../agent/agent-session.js";
import { contextFiles, promptText } from "../agent/system-prompt.js";
import { agentDir as findAgentDir, ENV_SESSION_DIR, expandTilde, PROJECT_DIR_NAME } from "../config/agent-dir.js";
import { loadAuthFile } from "../config/auth-file.js";
import { adjustBuiltIn, adjustBuiltInTyped, loadModelsFile, providerHeaders, providerKey } from "../config/models-file.js";
import { askProjectTrust, trustWithoutAsking } from "../config/project-trust.js";
import { applyHttpProxySetting, configureHttpDispatcher } from "../config/http-dispatcher.js";
import { loadSettings, type Settings } from "../config/settings.js";
import { loadExtension } from "../extensions/loader.js";
import { builtinSources } from "../extensions/builtin-extensions.js";
import { extensionStack } from "../extensions/extension-stack.js";
import { catalogUserAgent } from "../models/remote-catalog.js";
import { builtinTypedModels } from "../models/typed-models.js";
import { ModelResolutionError, ModelScriptError, resolveModels, type ModelResolution, type ResolveEnvironment, type ThinkingLevel } from "../models/index.js";
import { resolveModelScope } from "../models/model-scope.js";
import type { ExtensionSource } from "../extensions/extension-source.js";
import type { ExtensionMode } from "../extensions/types.js";
import type { AgentCore, FrontDoor, LoadingCore, ReloadedExtensions, TrustedProject } from "../core/agent-core.js";
import type { StartedCoreSettings } from "../core/mode-context.js";
import { RpcServer } from "../modes/rpc/server.js";
import type { Transport } from "../core/transport.js";
import type { SessionWarning } from "../session/format.js";
import { defaultSessionDir, legacySessionDir, openSession } from "../session/store.js";
import { claimStdin } from "../transport/claim-stdin.js";
import { separateSocketStdout } from "../transport/socket-stdout.js";
import { writeStderr } from "../transport/stderr.js";
import { parseArgs, resolveExtensionFlags, UsageError, USAGE, type CliOptions, type CliThinkingLevel } from "./args.js";
import { ProcessLifetime } from "../core/process-lifetime.js";
import { forwardedStdin, startStuckWatchdog, stuckWatchdogReady } from "../stuck-watchdog.js";
import { selectMode, type StartMode } from "./mode-table.js";
import { openStartupSession, sessionFactory, sessionsRoot } from "./startup-session.js";
import { listFolder } from "../resources/fs-entries.js";
import { errorMessage, errorText } from "../error-text.js";
import { whileSayingSlow } from "../slow-notice.js";
import { loadResources, resolveCliSources, resolveResources, type ResolvedResources } from "../resources/index.js";
import { askNpmGlobalRoot } from "../resources/npm-global-root.js";
import { needsGlobalRoot } from "../resources/package-sources.js";
import { userPath } from "../resources/paths.js";
import { NEWEST_PI_VERSION } from "../extensions/compat/pi-versions.js";
import { assertSessionCwdExists, MissingSessionCwdError } from "../session/session-cwd.js";
import { resolveDefaultTools } from "../agent/tool-selection.js";

// pi's own diagnostics ("Warning: …", "Error: …") are printed in pi's words, for scripts that read them.
const log = (message: string): void => {
  writeStderr(/^(Warning|Error): /.test(message) ? `${message}\n` : `parley: ${message.replace(/^parley: /, "")}\n`);
};

/** pi's exit status for every start-up error, flag errors included (pi 0.73.1 and 1.6.0 alike): clients and scripts written for pi test for it. */
const STARTUP_ERROR_STATUS = 1;

/** A flag error: said once, with where to look (nothing else was said before it). */
function usageExit(error: UsageError): never {
  log(`${error.message}\nRun \`parley --help\` for the options.`);
  process.exit(STARTUP_ERROR_STATUS);
}

/** A flag error, or a model script or model the command line names that cannot be used: said once, pi's exit status. Anything else is thrown on. */
function exitOnStartupError(error: unknown): never {
  if (error instanceof UsageError) usageExit(error);
  if (error instanceof ModelScriptError || error instanceof ModelResolutionError) {
    log(error.message);
    process.exit(STARTUP_ERROR_STATUS);
  }
  throw error;
}

/** The agent package's version: its package.json is the first one above this file (dist/cli, or dist/bundle in the bundle). */
function version(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dirname(dir) !== dir; dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (existsSync(file)) return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
  }
  return "unknown";
}

/** pi's files as this run sees them. */
interface Setup {
  /** The run's folder (the session's): its project settings, resources, context files, tools. */
  cwd: string;
  /** The folder parley was started in: paths given on the command line start there, as in pi. */
  launchCwd: string;
  agentDir: string;
  settings: Settings;
  /** Each settings file's `extensions`, `skills`, `prompts` and `packages` (resources/resource-resolver.ts). */
  resources: ReturnType<typeof loadSettings>["resources"];
  warnings: string[];
  auth: ReturnType<typeof loadAuthFile>;
  modelsFile: ReturnType<typeof loadModelsFile>;
}

function readSetup(options: CliOptions, cwd: string, launchCwd: string): Setup {
  const agentDir = findAgentDir();
  // An untrusted project's .pi/ files are not used (pi's project trust, decided before this).
  const loaded = loadSettings({ cwd, agentDir, projectTrusted: options.projectTrust !== false });
  const auth = loadAuthFile(agentDir);
  const modelsFile = loadModelsFile(agentDir);
  return {
    cwd,
    launchCwd,
    agentDir,
    settings: loaded.settings,
    resources: loaded.resources,
    warnings: [...loaded.warnings, ...auth.warnings, ...modelsFile.warnings],
    auth,
    modelsFile,
  };
}

/**
 * Where the models' keys and adjustments come from: auth.json (API keys and OAuth logins), then
 * the environment, then models.json's keys; models.json's overrides and OAuth logins adjust the
 * built-in models.
 */
async function modelEnvironment(setup: Setup): Promise<ResolveEnvironment> {
  const file = setup.modelsFile;
  return {
    cwd: setup.cwd,
    launchCwd: setup.launchCwd,
    authKey: setup.auth.apiKey,
    freshAuth: setup.auth.freshAuth,
    fallbackKey: (provider) => providerKey(file, provider),
    adjustTyped: (model) => adjustBuiltInTyped(file, model),
    typedBuiltIns: builtinTypedModels,
    configuredHeaders: (provider) => providerHeaders(file, provider),
    modelsStore: join(setup.agentDir, "models-store.json"),
    // pi-ai 1.6 has no OAuth model adjustment of its own any more (its providers read the login).
    ...(file.overrides.size > 0 ? { adjustBuiltIn: (model) => adjustBuiltIn(file, model) } : {}),
  };
}

/**
 * The flags and pi's files as start-up sees them. While project trust is pending (the project has
 * `.pi/` resources and neither a flag nor the lack of them decides), `options.projectTrust` is
 * false: only the user's files and extensions and the -e files are used, until the loaded
 * extensions' project_trust handlers, trust.json or defaultProjectTrust decide (settleTrust).
 */
interface Startup {
  options: CliOptions;
  setup: Setup;
  /**
   * Where the extensions, skills and prompts come from, resolved once per trust state (again only
   * when project trust adds the project's, or ctx.reload() reads the files again): loading,
   * ordering, resources and warnings all read this one answer.
   */
  resources: SetupResources;
  trustPending: boolean;
  /** --approve / --no-approve as given: a switch to another folder's session decides that folder's trust again. */
  trustFlag: boolean | undefined;
  /** Each folder's trust once decided: a switch back to a folder keeps its decision. */
  trustByFolder: Map<string, boolean>;
}

/** Start-up for the run's folder `cwd` (project trust is the trust of that folder); `lookup`: its setup when already read. */
async function readStartup(options: CliOptions, cwd: string, launchCwd: string, lookup?: Setup): Promise<Startup> {
  const decided = trustWithoutAsking(options.projectTrust, cwd);
  const settled = { ...options, projectTrust: decided ?? false };
  const setup = lookup ?? readSetup(settled, cwd, launchCwd);
  return {
    options: settled,
    setup,
    resources: await resolveSetupResources(settled, setup),
    trustPending: decided === undefined,
    trustFlag: options.projectTrust,
    trustByFolder: new Map(decided === undefined ? [] : [[cwd, decided]]),
  };
}

/**
 * Asks the loaded extensions (the user's and -e ones, each factory having run once) about the
 * project, as pi does between loading those and the project's; when trusted, the project's
 * settings, SYSTEM.md / APPEND_SYSTEM.md and extensions join the same agent and runtime.
 */
async function settleTrust(server: FrontDoor, start: Startup): Promise<void> {
  if (!start.trustPending) return;
  const trusted = await askLoadedExtensions(server, start);
  const project = trusted ? await trustProject(server, start, {}) : undefined;
  if (!trusted) useResources(server, start);
  if (project) {
    server.runtime.settleTrusted(project.settle.preloaded, project.settle.final);
    await server.addExtensions(project.sources, project.order);
    // pi chooses the session's tools once the project's settings count (its defaultTools may replace the user's).
    server.agent.restartTools();
  }
}

/** Project trust for the folder start.setup reads, from the loaded extensions' project_trust handlers (then trust.json, defaultProjectTrust). */
async function askLoadedExtensions(server: LoadingCore, start: Startup): Promise<boolean> {
  const { cwd, agentDir, settings } = start.setup;
  const trusted = await askProjectTrust({
    cwd,
    agentDir,
    defaultProjectTrust: settings.defaultProjectTrust,
    handlers: server.runtime.projectTrustHandlers(),
    log,
    mode: extensionMode(start.options.mode),
  });
  start.trustPending = false;
  start.trustByFolder.set(cwd, trusted);
  return trusted;
}

/** ctx.mode for a run in `mode`: pi's names; ACP and web serve clients as RPC does. */
function extensionMode(mode: CliOptions["mode"]): ExtensionMode {
  return mode === "print" || mode === "json" ? mode : "rpc";
}

/**
 * The folder is trusted after the user's extensions loaded: its settings, SYSTEM.md /
 * APPEND_SYSTEM.md and resources apply from here, and its extensions are returned to be added.
 * `keep`: what RPC commands set this run, kept over the new settings (see commandChoices).
 */
async function trustProject(server: LoadingCore, start: Startup, keep: ReturnType<typeof commandChoices>): Promise<TrustedProject> {
  start.options = { ...start.options, projectTrust: true };
  // Loaded before trust (the user's): a file the project's settings name too (the same package in
  // both, the project's entry winning) is not loaded a second time, and one they replace or turn
  // off (the same package installed for the project) is dropped, as pi leaves it out of its final set.
  const loaded = new Set(start.resources.resolved.extensions.filter((r) => r.enabled).map((r) => r.path));
  const idleBefore = start.setup.settings.httpIdleTimeoutMs;
  start.setup = readSetup(start.options, start.setup.cwd, start.setup.launchCwd);
  start.resources = await resolveSetupResources(start.options, start.setup);
  // The project's httpIdleTimeoutMs applies from here (its httpProxy never does: pi reads that globally).
  if (start.setup.settings.httpIdleTimeoutMs !== idleBefore) await configureHttpDispatcher({ idleTimeoutMs: start.setup.settings.httpIdleTimeoutMs });
  await server.agent.configure(agentConfig(start.options, start.setup));
  Object.assign(server.agent, keep);
  useResources(server, start);
  const sources = (await loadAll(start.options, start.resources, start.setup, "project")).filter((source) => !loaded.has(source.path));
  const final = new Map(start.resources.resolved.extensions.filter((r) => r.enabled).map((r) => [r.path, r.sourceInfo] as const));
  return { sources, order: extensionOrder(start.options, start.resources), settle: { preloaded: loaded, final } };
}

/** Before any request: pi's proxy and HTTP idle timeout (see http-dispatcher.ts). httpProxy is read from the user's file only, so a later project trust decision cannot change it. */
async function applyHttpSettings(settings: Settings): Promise<void> {
  applyHttpProxySetting(settings.httpProxy);
  await configureHttpDispatcher({ idleTimeoutMs: settings.httpIdleTimeoutMs });
}

/** `max` is the model's highest level: xhigh, clamped to the model later. */
function wireLevel(level: CliThinkingLevel | string | undefined): ThinkingLevel | undefined {
  if (level === "max") return "xhigh";
  return isThinkingLevel(level) ? level : undefined;
}

/** settings.json `modelThinkingLevels`, the levels parley knows (pi's `max` as its highest); others are left out. */
function modelLevels(levels: Record<string, string> | undefined): Record<string, ThinkingLevel> | undefined {
  if (levels === undefined) return undefined;
  const known = Object.entries(levels).flatMap(([model, level]) => {
    const wire = wireLevel(level);
    return wire === undefined ? [] : [[model, wire] as const];
  });
  return Object.fromEntries(known);
}

/** This run's resources: settings lists, discovery and installed packages; and the `-e` sources. */
interface SetupResources {
  resolved: ResolvedResources;
  cli: ReturnType<typeof resolveCliSources>;
}

/**
 * Where this run's extensions, skills and prompt templates come from (pi's package manager rules).
 * It walks folders and packages on disk: called once per trust state, see `Startup.resources`.
 */
async function resolveSetupResources(
  options: CliOptions,
  setup: Pick<Setup, "cwd" | "launchCwd" | "agentDir" | "resources" | "settings">,
): Promise<SetupResources> {
  const places = { cwd: setup.cwd, agentDir: setup.agentDir, home: homedir() };
  const resolved = resolveResources({
    ...places,
    npmGlobalRoot: await npmCommandRoot(setup),
    user: setup.resources.user,
    project: options.projectTrust === false ? undefined : setup.resources.project,
    legacyExtensionDirs: true,
  });
  // -e paths start from where parley was started, as in pi.
  const cli = resolveCliSources(options.extensions, { ...places, cwd: setup.launchCwd });
  // What -e sources had to say (a built-in extension parley lacks) is said with the rest.
  return { resolved: { ...resolved, warnings: [...resolved.warnings, ...cli.warnings] }, cli };
}

/**
 * settings.json `npmCommand`'s global folder, asked of that package manager only when a user
 * package is not in the agent directory's npm folder (never at a plain start-up). On failure,
 * said on stderr (once per run), and npm's own global folder is looked in instead.
 */
async function npmCommandRoot(setup: Pick<Setup, "cwd" | "agentDir" | "resources" | "settings">): Promise<string | undefined> {
  const command = setup.settings.npmCommand;
  if (!command || !needsGlobalRoot(setup.resources.user.packages ?? [], setup.agentDir)) return undefined;
  let first = false;
  const answer = await askNpmGlobalRoot(command, setup.cwd, () => (first = true));
  if ("root" in answer) return answer.root;
  if (first) log(`settings.json npmCommand: ${answer.error}; looking in npm's global folder instead`);
  return undefined;
}

/** The enabled extension files in pi's load order: `-e` ones first, then (unless --no-extensions) settings, discovery and packages. */
function extensionOrder(options: CliOptions, { resolved, cli }: SetupResources): string[] {
  const listed = [...cli.extensions, ...(options.noExtensions ? [] : resolved.extensions)];
  return listed.filter((r) => r.enabled).map((r) => resolve(r.path));
}

/**
 * The extension modules, in pi's order: `-e` ones first, then (unless --no-extensions) the enabled
 * ones of settings, discovery and packages. Packages that are not installed are said by startAgent.
 * `only: "project"`: the project's alone (they join once project_trust has trusted it).
 */
async function loadAll(
  options: CliOptions,
  { resolved, cli }: SetupResources,
  setup: Pick<Setup, "agentDir" | "resources">,
  only?: "project",
): Promise<ExtensionSource[]> {
  const sources: ExtensionSource[] = [];
  const load = async (path: string) => {
    // Extension code may hold the main thread from here on: the watchdog must watch the signals
    // by then. It boots meanwhile, while start-up goes on (the model catalogue loads alongside).
    await stuckWatchdogReady();
    return whileSayingSlow(loadExtension(path), `extension ${path} (loading the module)`, log);
  };
  if (only === undefined) {
    // An -e source parley cannot load (a package pi would install) stops it, as an -e file that fails does.
    for (const { source, error } of cli.unavailable) sources.push({ path: source, error, scope: "temporary" });
    for (const r of cli.extensions) if (r.enabled) sources.push({ ...(await load(r.path)), scope: "temporary", sourceInfo: r.sourceInfo });
  }
  if (!options.noExtensions) {
    for (const r of resolved.extensions) {
      if (!r.enabled) continue;
      const scope = r.sourceInfo.scope === "project" ? "project" : "user";
      if (only !== undefined && scope !== only) continue;
      sources.push({ ...(await load(r.path)), scope, sourceInfo: r.sourceInfo });
    }
  }
  // The built-in extensions (MCP, tool_search) load last, as in pi.
  if (only === undefined) {
    sources.push(
      ...builtinSources({
        agentDir: setup.agentDir,
        version: version(),
        noExtensions: options.noExtensions,
        noMcp: options.noMcp,
        requested: cli.builtins,
        userPatterns: setup.resources.user.extensions,
        projectPatterns: options.projectTrust === false ? undefined : setup.resources.project?.extensions,
      }),
    );
  }
  return sources;
}

/** SYSTEM.md / APPEND_SYSTEM.md (project's .pi/ first, then the agent directory), unless flags replace them. */
function promptSources(options: CliOptions, setup: Setup): AgentConfig["prompt"] {
  const { cwd, launchCwd, agentDir } = setup;
  const projectDir = options.projectTrust === false ? undefined : join(cwd, PROJECT_DIR_NAME);
  const discover = (name: string): string | undefined =>
    [projectDir && join(projectDir, name), join(agentDir, name)].find((p): p is string => typeof p === "string" && existsSync(p));
  const systemFile = options.systemPrompt === undefined ? discover("SYSTEM.md") : undefined;
  const custom =
    options.systemPrompt !== undefined ? promptText(options.systemPrompt, launchCwd) : systemFile !== undefined ? readFileSync(systemFile, "utf8") : undefined;
  const appendFile = options.appendSystemPrompt.length === 0 ? discover("APPEND_SYSTEM.md") : undefined;
  const append =
    options.appendSystemPrompt.length > 0
      ? options.appendSystemPrompt.map((a) => promptText(a, launchCwd))
      : appendFile !== undefined
        ? [readFileSync(appendFile, "utf8")]
        : [];
  return {
    ...(custom !== undefined ? { custom } : {}),
    append,
    contextFiles: options.noContextFiles ? [] : contextFiles(cwd, agentDir),
  };
}

/** pi's HTTP idle timeout: 5 minutes unless settings say otherwise. */
const HTTP_IDLE_TIMEOUT_MS = 300_000;
/** The SDKs take a timeout of 0 as "at once"; "disabled" is the largest timer Node accepts. */
const NO_TIMEOUT_MS = 2_147_483_647;

/** The options every provider request of the loop gets, from settings as the newest pi derives them. */
function providerRequestConfig(settings: Settings): ProviderRequestConfig {
  const idle = settings.httpIdleTimeoutMs ?? HTTP_IDLE_TIMEOUT_MS;
  const provider = settings.retry?.provider;
  return {
    timeoutMs: provider?.timeoutMs ?? (idle === 0 ? NO_TIMEOUT_MS : idle),
    // The newest pi leaves retrying to its own auto-retry: the SDKs' retries are off unless asked for.
    maxRetries: provider?.maxRetries ?? 0,
    maxRetryDelayMs: provider?.maxRetryDelayMs ?? 60_000,
    transport: settings.transport ?? "auto",
    thinkingBudgets: settings.thinkingBudgets,
  };
}

function agentConfig(options: CliOptions, setup: Setup): AgentConfig {
  const { settings } = setup;
  return {
    steeringMode: settings.steeringMode,
    followUpMode: settings.followUpMode,
    compaction: settings.compaction,
    retry: settings.retry,
    shellPath: settings.shellPath,
    shellCommandPrefix: settings.shellCommandPrefix,
    provider: providerRequestConfig(settings),
    blockImages: settings.images?.blockImages,
    autoResizeImages: settings.images?.autoResize,
    branchSummaryReserveTokens: settings.branchSummary?.reserveTokens,
    cacheWarming: settings.cacheWarming,
    defaultThinkingLevel: wireLevel(settings.defaultThinkingLevel),
    modelThinkingLevels: modelLevels(settings.modelThinkingLevels),
    prompt: promptSources(options, setup),
    tools: {
      allow: options.tools,
      exclude: options.excludeTools,
      none: options.noTools ? "all" : options.noBuiltinTools ? "builtin" : undefined,
      defaults: settings.defaultTools !== undefined ? resolveDefaultTools(settings.defaultTools) : undefined,
    },
  };
}

/** The start-up model, chosen once extensions have registered their providers (pi's order), applied to the agent. */
async function chooseStartupModel(
  agent: AgentSession,
  options: CliOptions,
  settings: Settings,
): Promise<{ warnings: string[]; offlineNotice?: string | undefined }> {
  const scope = await startupScope(agent, options.models ?? settings.enabledModels, settings);
  const chosen = await agent.models.chooseStartup({
    provider: options.provider,
    model: options.model,
    apiKey: options.apiKey,
    thinking: wireLevel(options.thinking),
    scoped: scope.first,
    defaultProvider: settings.defaultProvider,
    defaultModel: settings.defaultModel,
    defaultThinkingLevel: wireLevel(settings.defaultThinkingLevel),
  });
  agent.applyStartupModel(chosen);
  return { ...chosen, warnings: [...scope.warnings, ...chosen.warnings] };
}

/**
 * --models / enabledModels, resolved as pi does once the extensions' providers are known: the
 * agent's scope (cycle_model, ctx.scopedModels), and the start-up model it implies (settings'
 * default model when it is in the scope, else the scope's first), as an exact reference.
 */
async function startupScope(
  agent: AgentSession,
  patterns: string[] | undefined,
  settings: Settings,
): Promise<{ first: string[] | undefined; warnings: string[] }> {
  if (!patterns || patterns.length === 0) return { first: undefined, warnings: [] };
  await agent.models.loadCatalog();
  const scope = resolveModelScope(patterns, agent.models);
  agent.scopedModels = scope.models;
  const preferred = scope.models.find((s) => s.model.provider === settings.defaultProvider && s.model.id === settings.defaultModel) ?? scope.models[0];
  const first = preferred ? [`${preferred.model.provider}/${preferred.model.id}${preferred.thinkingLevel ? `:${preferred.thinkingLevel}` : ""}`] : undefined;
  return { first, warnings: scope.warnings };
}

/** --export FILE [out.html]: pi's one-shot export. */
async function exportAndExit(file: string, output: string | undefined): Promise<never> {
  try {
    const { exportHtml, reportedExportPath } = await import("../session/export-html.js");
    const session = openSession(file, { lock: false });
    exportHtml(session, output, process.cwd());
    process.stdout.write(`Exported to: ${reportedExportPath(session, output)}\n`);
    process.exit(0);
  } catch (error) {
    log(`--export ${file}: ${errorText(error).error}`);
    process.exit(1);
  }
}

/** Takes records and drops them: --list-models runs extension factories with no client to hear them. */
const silentTransport: Transport = {
  backedUp: false,
  whenWritable: () => Promise.resolve(),
  start: () => {},
  send: () => {},
  flush: () => Promise.resolve(),
};

/**
 * --list-models [search]: the models this setup can use, as a table, then exit. As pi does, the
 * extensions load first, so the models of the providers they register are listed too.
 */
async function listModelsAndExit(start: Startup): Promise<never> {
  const [models, sources] = await Promise.all([
    modelEnvironment(start.setup).then((environment) => resolveModels({ loadCatalog: true }, environment)),
    loadAll(start.options, start.resources, start.setup),
  ]);
  const server = new RpcServer({ transport: silentTransport, cwd: start.setup.cwd, extensions: sources, log, models });
  for (const failure of await server.loadExtensions({ explicitFailuresFatal: true })) log(`Failed to load extension ${failure.path}: ${failure.error}`);
  await settleTrust(server, start);
  const { options, setup } = start;
  const agent = server.agent;
  for (const { name, config } of setup.modelsFile.providers) agent.models.register(name, config);
  const search = typeof options.listModels === "string" ? options.listModels.toLowerCase() : undefined;
  const rows = agent.models
    .availableModels()
    .filter((m) => search === undefined || `${m.provider}/${m.id} ${m.name}`.toLowerCase().includes(search))
    .map((m) => [m.provider, m.id, String(m.contextWindow), String(m.maxTokens), m.reasoning ? "yes" : "no", m.input.includes("image") ? "yes" : "no"]);
  const table = [["provider", "model", "context", "max-out", "thinking", "images"], ...rows];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  process.stdout.write(
    table
      .map((r) =>
        r
          .map((c, i) => c.padEnd(widths[i]!))
          .join("  ")
          .trimEnd(),
      )
      .join("\n") + "\n",
  );
  process.exit(0);
}

export async function main(argv: string[]): Promise<void> {
  // As pi 1.6 marks its process, for every command and mode: extensions and every child (tools,
  // pi.exec, MCP servers, package managers) can tell they run under a coding agent.
  process.env["PI_CODING_AGENT"] = "true";
  process.env["AI_AGENT"] = "pi";
  // Offline (`--offline` anywhere on the line, or PI_OFFLINE 1/true/yes): pi 1.6 normalises both
  // markers so every child sees the same switch.
  const offlineFlag = process.env["PI_OFFLINE"]?.toLowerCase();
  if (argv.includes("--offline") || offlineFlag === "1" || offlineFlag === "true" || offlineFlag === "yes") {
    process.env["PI_OFFLINE"] = "1";
    process.env["PI_SKIP_VERSION_CHECK"] = "1";
  }
  // `parley auth …`, as `pi auth …`: sign in and out, print or check credentials; no agent.
  if (argv[0] === "auth") {
    const { runAuthCommand } = await import("./auth-command.js");
    const write = (stream: NodeJS.WriteStream) => (line: string) => stream.write(`${line}\n`);
    const code = await runAuthCommand(argv, {
      agentDir: findAgentDir(),
      out: write(process.stdout),
      err: write(process.stderr),
      interactive: process.stdin.isTTY === true && process.stdout.isTTY === true,
    });
    process.exit(code);
  }
  // `parley mcp …`, as `pi mcp …`: a shell command of its own, no agent.
  if (argv[0] === "mcp") {
    // The servers it starts end with it, whichever way it ends.
    new ProcessLifetime();
    const { runMcpCommand } = await import("../mcp/mcp-cli.js");
    const write = (stream: NodeJS.WriteStream) => (line: string) => stream.write(`${line}\n`);
    const code = await runMcpCommand(argv.slice(1), {
      agentDir: findAgentDir(),
      cwd: process.cwd(),
      version: version(),
      out: write(process.stdout),
      err: write(process.stderr),
    });
    process.exit(code);
  }
  // `parley install|remove|uninstall|update|list|config`, as pi's package commands: no agent.
  if (argv[0] !== undefined && ["install", "remove", "uninstall", "update", "list", "config"].includes(argv[0])) {
    // The npm and git children it starts end with it, whichever way it ends.
    new ProcessLifetime();
    const { runPackageCommand } = await import("../packages/package-cli.js");
    const write = (stream: NodeJS.WriteStream) => (line: string) => stream.write(`${line}\n`);
    const code = await runPackageCommand(argv, {
      agentDir: findAgentDir(),
      cwd: process.cwd(),
      out: write(process.stdout),
      err: write(process.stderr),
      color: process.stdout.isTTY === true && !process.env["NO_COLOR"],
    });
    process.exit(code ?? 1);
  }
  let options: CliOptions;
  try {
    options = parseArgs(argv);
  } catch (error) {
    exitOnStartupError(error);
  }
  if (options.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (options.version) {
    process.stdout.write(`${version()}\n`);
    return;
  }
  // A socket stdout gets a copy for the protocol, fd 1 pointing at stderr (socket-stdout.ts):
  // first, while nothing else of parley's runs; not where stdout carries a listing or an export.
  if (options.listModels === undefined && options.export === undefined) await separateSocketStdout();
  // However parley ends, in any mode, no child process it started outlives it; signals and the
  // exit status are handled alike in every mode (process-lifetime.ts). First: start-up may start
  // children (a package manager asked for its global folder, extension code).
  const lifetime = new ProcessLifetime();
  // Now that the main thread handles the signals: they (and, in rpc and acp modes, the end of
  // stdin) end parley within seconds even while an extension holds the main thread in a loop.
  // Without extensions no code but parley's runs there: the worker's start-up is spared.
  if (!options.noExtensions || options.extensions.length > 0) startStuckWatchdog();
  if (options.export !== undefined) await exportAndExit(options.export, options.messages[0]);
  // Paths on the command line start here; the run itself works in its session's folder, as in pi.
  const launchCwd = process.cwd();
  // The settings that find the session (its directory) are the start folder's, as in pi.
  const lookup = readSetup({ ...options, projectTrust: trustWithoutAsking(options.projectTrust, launchCwd) ?? false }, launchCwd, launchCwd);
  if (options.listModels !== undefined) {
    const start = await readStartup(options, launchCwd, launchCwd, lookup);
    await applyHttpSettings(start.setup.settings);
    await listModelsAndExit(start);
  }

  // The mode's own flag checks come before the session opens; its modules load only in its mode.
  const mode = selectMode(options);
  let startMode: StartMode;
  try {
    startMode = await mode.prepare(options, log);
  } catch (error) {
    exitOnStartupError(error);
  }

  const { agentDir } = lookup;
  const warn = (w: SessionWarning): void => log(`session file: ${w.message}`);
  const envSessionDir = process.env[ENV_SESSION_DIR];
  const chosenDir = options.sessionDir ?? (envSessionDir ? expandTilde(envSessionDir) : undefined) ?? lookup.settings.sessionDir;
  // Sessions earlier parley versions wrote stay in reach of -c and ids (read, never written there).
  const legacyDirs = chosenDir === undefined ? [legacySessionDir(launchCwd)] : [];
  let startup: ReturnType<typeof openStartupSession>;
  try {
    startup = openStartupSession(
      options,
      {
        cwd: launchCwd,
        sessionDir: chosenDir ?? defaultSessionDir(launchCwd, agentDir),
        readOnlyDirs: legacyDirs,
        // An id is also looked for among every project's sessions in pi's place, as pi does.
        allSessionsRoot: sessionsRoot(agentDir),
      },
      warn,
    );
    // A session whose recorded folder is gone stops start-up with pi's words (RPC mode cannot ask).
    assertSessionCwdExists(startup.session, launchCwd);
  } catch (error) {
    if (error instanceof MissingSessionCwdError) {
      writeStderr(`${error.message}\n`);
      process.exit(STARTUP_ERROR_STATUS);
    }
    exitOnStartupError(error);
  }
  // The run's folder decides its settings, project trust, resources, context files and tools.
  const cwd = startup.cwd;
  const start = await readStartup(options, cwd, launchCwd, cwd === launchCwd ? lookup : undefined);
  options = start.options;
  const setup = start.setup;
  const { settings } = setup;
  await applyHttpSettings(settings);

  // Before any extension code runs: from here on process.stdin is a stand-in, and fd 0 is read
  // for the protocol alone. Web mode does not read it. In rpc and acp modes, where the end of
  // input ends parley, the watchdog's thread reads fd 0 (as soon as it is up, a bounded amount
  // ahead) and hands its bytes on, so that it sees the end even while the main thread is stuck.
  // The main thread never reads fd 0 then: one reader, so no byte is reordered.
  const stdin = claimStdin(options.mode === "rpc" || options.mode === "acp" ? forwardedStdin(true) : undefined);
  // New sessions record the folder the agent is in (a switch to another folder's session moves it:
  // reloadExtensions below) and go beside the current session, as pi's do (its session directory
  // is the one the current session was made in, or the folder of the file it opened).
  // The folder the agent works in is the one whose files were read last (start.setup: reloadSetup
  // reads the folder of each session switched to).
  const runCwd = (): string => start.setup.cwd;
  const newSessionDir = (): string => {
    const fallback = chosenDir ?? defaultSessionDir(runCwd(), agentDir);
    const current = front?.agent.session ?? startup.session;
    if (current.file === undefined) return fallback;
    // pi opens the start-up session in the chosen directory (switches open theirs in the file's folder).
    if (current === startup.session && chosenDir !== undefined) return chosenDir;
    const beside = dirname(current.file);
    // Earlier parley versions' folders are read, never written.
    return legacyDirs.includes(beside) ? fallback : beside;
  };
  const sessions = sessionFactory(options.noSession, runCwd, newSessionDir, warn, () => (front?.agent.session ?? startup.session).file);
  // list_sessions: the folder's session directory (and the current session's, and the legacy one), or all of pi's.
  const sessionDirs = (scope: "folder" | "all"): string[] => {
    const folder = chosenDir ?? defaultSessionDir(runCwd(), agentDir);
    const current = front?.agent.session.file;
    const here = [folder, ...(chosenDir === undefined ? [legacySessionDir(runCwd())] : []), ...(current !== undefined ? [dirname(current)] : [])];
    if (scope === "folder") return here;
    return [...here, ...listFolder(sessionsRoot(agentDir)).flatMap((entry) => (entry.isDirectory ? [entry.path] : []))];
  };
  // refresh_models: models.json again; providers it no longer names are dropped.
  const refreshModels = (agent: AgentSession): void => {
    const before = new Set(start.setup.modelsFile.providers.map((p) => p.name));
    const file = loadModelsFile(agentDir);
    for (const warning of file.warnings) log(warning);
    const now = new Set(file.providers.map((p) => p.name));
    for (const name of before) if (!now.has(name)) agent.models.unregister(name);
    for (const { name, config } of file.providers) agent.models.register(name, config);
    start.setup = { ...start.setup, modelsFile: file };
  };
  let models: ModelResolution;
  let extensionSources: ExtensionSource[];
  try {
    // Model loading (pi-ai) and extension loading (jiti) are independent: overlap them. The
    // start-up model is chosen once the extensions have registered their providers.
    [models, extensionSources] = await Promise.all([
      modelEnvironment(setup).then((environment) => resolveModels(options.modelScript !== undefined ? { modelScript: options.modelScript } : {}, environment)),
      loadAll(options, start.resources, setup),
    ]);
  } catch (error) {
    exitOnStartupError(error);
  }
  // As in pi, an extension named with -e that cannot be loaded stops parley (once, exit 1).
  const failed = extensionSources.flatMap((ext) => (ext.scope === "temporary" && ext.error !== undefined ? [ext.error] : []));
  if (failed.length > 0) {
    for (const error of failed) log(error);
    process.exit(1);
  }

  // The mode's front door, once it exists (ctx.reload() needs it).
  let front: FrontDoor | undefined;
  // What every mode's agent starts from (core/agent-core.ts).
  const core = {
    cwd,
    launchCwd,
    extensions: extensionSources,
    models,
    session: startup.session,
    sessions,
    agentConfig: agentConfig(options, setup),
    ...(options.name !== undefined ? { sessionName: options.name } : {}),
    log,
    // ctx.reload() and every switch: settings, resources and extensions again, those of the folder
    // the agent is in (another one after a switch to its session, as pi builds its new runtime there).
    // ACP mode runs one agent per session: `target` is the one loading.
    reloadExtensions: (folder, target) => {
      if (!front) throw new Error("ctx.reload() before start-up ended");
      return reloadSetup(target, start, folder);
    },
  } satisfies StartedCoreSettings;
  const notes = [...startup.notes, ...models.warnings];
  await startMode({
    core,
    stdin,
    maxLineBytes: options.maxLineBytes,
    lifetime,
    log,
    startAgent: async (server) => {
      front = server;
      await startAgent(server, start, notes, models);
      if (options.mode === "rpc") refreshCatalogInBackground(models);
    },
    options,
    version: version(),
    sessionDirs,
    refreshModels,
    // --no-session: nothing is stored, so nothing is listed or loaded (ACP does not advertise loadSession).
    sessionDir: options.noSession ? undefined : (chosenDir ?? defaultSessionDir(cwd, agentDir)),
    startSessionAgent: (sessionCore) => startSessionAgent(sessionCore, start),
  });
}

/**
 * RPC mode's live catalogue refresh, as pi 1.6 starts it once start-up is done (models/remote-catalog.ts):
 * in the background (the first command is not waited on it), at most 15 s, failures silent.
 * With --offline / PI_OFFLINE (any value: pi then turns its model network off) the saved
 * catalogues are only read, which makes the file as pi's start-up does. Set off on the next turn
 * of the event loop, so the server reads its first line first.
 */
function refreshCatalogInBackground(models: ModelResolution): void {
  const allowNetwork = process.env["PI_OFFLINE"] === undefined;
  setImmediate(() => {
    const signal = AbortSignal.timeout(15_000);
    void models.refreshCatalog({ userAgent: catalogUserAgent(NEWEST_PI_VERSION), signal, allowNetwork }).catch(() => undefined);
  });
}

/** Skills and prompt templates, where pi finds them (get_commands, /name expansion, the system prompt). */
function useResources(server: LoadingCore, start: Startup): void {
  const { options, setup } = start;
  const { cwd, launchCwd, agentDir } = setup;
  const resources = loadResources({
    cwd,
    agentDir,
    // --skill and --prompt-template paths start from where parley was started, as in pi.
    skillPaths: options.skills.map((p) => userPath(p, launchCwd)),
    promptTemplatePaths: options.promptTemplates.map((p) => userPath(p, launchCwd)),
    ...start.resources,
    projectTrusted: options.projectTrust !== false,
    noSkills: options.noSkills,
    noPromptTemplates: options.noPromptTemplates,
  });
  for (const w of resources.warnings) log(`${w.path}: ${w.message}`);
  server.runtime.setResources(resources);
  server.runtime.projectTrusted = options.projectTrust !== false;
}

/**
 * ctx.reload(), as the newest pi reloads in RPC mode: settings.json is read again (queue modes,
 * compaction, retry, shell, images, provider request options take effect), resources are resolved
 * again (skills, prompts, context files, SYSTEM.md / APPEND_SYSTEM.md: the system prompt is
 * rebuilt), and the extensions' modules are loaded fresh. The folder's trust, once decided, stands.
 * Every session switch does the same, in the folder of the session switched to (`cwd`): when
 * that is another folder whose trust is not decided yet (by the flags, an earlier decision, or a
 * folder without project resources), pi's new runtime asks its own extensions: the user's and -e
 * ones load first, untrusted, and their project_trust handlers decide (then trust.json and
 * defaultProjectTrust); the project's join once trusted (settleTrust).
 */
async function reloadSetup(server: LoadingCore, start: Startup, cwd: string): Promise<ReloadedExtensions> {
  const idleBefore = start.setup.settings.httpIdleTimeoutMs;
  const keep = commandChoices(server.agent, start.setup.settings);
  let ask = false;
  if (cwd !== start.setup.cwd) {
    const decided = start.trustByFolder.get(cwd) ?? trustWithoutAsking(start.trustFlag, cwd);
    if (decided !== undefined) start.trustByFolder.set(cwd, decided);
    ask = decided === undefined;
    start.options = { ...start.options, projectTrust: decided ?? false };
  }
  start.trustPending = ask;
  start.setup = readSetup(start.options, cwd, start.setup.launchCwd);
  start.resources = await resolveSetupResources(start.options, start.setup);
  for (const warning of [...start.setup.warnings, ...start.resources.resolved.warnings]) log(warning);
  if (start.setup.settings.httpIdleTimeoutMs !== idleBefore) await configureHttpDispatcher({ idleTimeoutMs: start.setup.settings.httpIdleTimeoutMs });
  await server.agent.configure(agentConfig(start.options, start.setup));
  Object.assign(server.agent, keep);
  useResources(server, start);
  const sources = await loadAll(start.options, start.resources, start.setup);
  if (!ask) return { sources };
  return {
    sources,
    settleTrust: async () => ((await askLoadedExtensions(server, start)) ? trustProject(server, start, keep) : undefined),
  };
}

/**
 * What RPC commands set this run, where the agent differs from the settings it started from
 * (set_steering_mode, set_follow_up_mode, set_auto_compaction, set_auto_retry). pi saves those
 * commands' values to settings.json, so its reload reads them back; parley writes no settings, so
 * it keeps them over a reload instead.
 */
function commandChoices(
  agent: AgentSession,
  settings: Settings,
): Partial<Pick<AgentSession, "steeringMode" | "followUpMode" | "autoCompactionEnabled" | "autoRetryEnabled">> {
  return {
    ...(agent.steeringMode !== (settings.steeringMode ?? "one-at-a-time") ? { steeringMode: agent.steeringMode } : {}),
    ...(agent.followUpMode !== (settings.followUpMode ?? "one-at-a-time") ? { followUpMode: agent.followUpMode } : {}),
    ...(agent.autoCompactionEnabled !== (settings.compaction?.enabled ?? true) ? { autoCompactionEnabled: agent.autoCompactionEnabled } : {}),
    ...(agent.autoRetryEnabled !== (settings.retry?.enabled ?? true) ? { autoRetryEnabled: agent.autoRetryEnabled } : {}),
  };
}

/**
 * Start-up after the front door exists, the same for every mode: skills and prompt templates, the
 * extension factories (an -e file that fails stops parley) with project trust settled between the
 * user's and the project's, models.json's providers, the extensions' flags, the start-up model;
 * then, all being valid, the notes and warnings.
 */
async function startAgent(server: FrontDoor, start: Startup, notes: string[], models: ModelResolution): Promise<void> {
  if (!start.trustPending) useResources(server, start);
  // An -e file whose factory throws stops parley too, with the extension's own stack.
  const fatal = (await server.loadExtensions({ explicitFailuresFatal: true }))[0];
  if (fatal !== undefined) {
    log(`Failed to load extension ${fatal.path}: ${fatal.stack !== undefined ? extensionStack(fatal.stack) : fatal.error}`);
    process.exit(1);
  }
  await settleTrust(server, start);
  const { options, setup } = start;
  const { settings } = setup;
  const agent = server.agent;
  for (const { name, config } of setup.modelsFile.providers) agent.models.register(name, config);
  // Packages pi has not installed are said with the other warnings.
  const said = [...options.warnings, ...setup.warnings, ...start.resources.resolved.warnings, ...notes];
  let offlineNotice = options.modelScript === undefined ? undefined : models.offlineNotice;
  try {
    // Only now are the extensions' flags known, so only now can unknown options be judged.
    server.setExtensionFlags(resolveExtensionFlags(options, server.runtime.flags));
    if (options.modelScript === undefined) {
      const chosen = await chooseStartupModel(agent, options, settings);
      said.push(...chosen.warnings);
      // A resumed session's own model may have replaced the offline one.
      if (agent.model === models.offlineModel) offlineNotice = chosen.offlineNotice;
    }
  } catch (error) {
    exitOnStartupError(error);
  }
  // Everything is known to be valid: now the notes, warnings and the offline banner.
  for (const warning of said) log(warning);
  if (offlineNotice) log(offlineNotice);
}

/**
 * An ACP session after the first gets its own agent, started as startAgent starts the first: its
 * extensions loaded fresh for its folder through reloadExtensions (settings, resources, the
 * folder's trust as already decided), models.json's providers, the command line's extension flags,
 * the start-up model. What startAgent said (warnings, notes) is not said again.
 */
async function startSessionAgent(core: AgentCore, start: Startup): Promise<void> {
  await core.loadFresh();
  const agent = core.agent;
  for (const { name, config } of start.setup.modelsFile.providers) agent.models.register(name, config);
  try {
    core.host.setExtensionFlags(resolveExtensionFlags(start.options, core.runtime.flags));
    if (start.options.modelScript === undefined) await chooseStartupModel(agent, start.options, start.setup.settings);
  } catch (error) {
    // Start-up accepted the same flags and model for the same extensions: this is unexpected, not fatal.
    log(`a new session's start-up: ${errorMessage(error)}`);
  }
}
