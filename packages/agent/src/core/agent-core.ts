/**
 * What every mode (RPC, web, ACP) runs: the extension host with its runtime, the agent, and the
 * loading and reloading of extensions. A mode adds only its front door: where the host's records,
 * the agent's events and its dialogs go, and how requests come in.
 */
import type { AgentConfig } from "../agent/agent-config.js";
import { AgentSession, type Emit } from "../agent/agent-session.js";
import type { ExtensionLoadFailure, ExtensionSource } from "../extensions/extension-source.js";
import type { ExtensionErrorReport } from "../extensions/host.js";
import type { ExtensionRuntime } from "../extensions/runtime.js";
import type { ExtensionMode, SourceInfo } from "../extensions/types.js";
import { resolveModels, type ModelResolution } from "../models/index.js";
import { RpcExtensionHost } from "./extension-host.js";
import type { OutputPressure, Transport } from "./transport.js";
import type { Session } from "../session/session.js";
import { memorySessions, type SessionFactory } from "../session/session-factory.js";
import type { DialogRegistry } from "../ui/dialog-registry.js";
import { whileSayingSlow } from "../slow-notice.js";
import { whileOptimizerPaused } from "../startup/module-loader.js";
import { canRequireTools, toolDefinitionsAreCheap } from "../tools/tools-require.js";

/**
 * The agent as a mode sees it: just the members the mode uses. The CLI's start-up takes the whole
 * agent (FrontDoor.agent); a mode's own code goes through its view, and no mode imports
 * agent-session.ts (import-graph.test.ts).
 */
export type AgentView<M extends keyof AgentSession> = Pick<AgentSession, M>;

/** What the CLI's start-up (`startAgent` in cli/main.ts) and process lifetime need of a mode's server. */
export interface FrontDoor {
  readonly agent: AgentSession;
  readonly runtime: ExtensionRuntime;
  loadExtensions(options?: { explicitFailuresFatal?: boolean }): Promise<ExtensionLoadFailure[]>;
  /** More extensions into the same runtime (the project's, once project_trust trusts it). */
  addExtensions(sources: readonly ExtensionSource[], order: readonly string[]): Promise<void>;
  setExtensionFlags(flags: Map<string, string | boolean>): void;
  /** An extension_error; the CLI also reports here what escapes third-party code. */
  reportError(report: ExtensionErrorReport): void;
  /** Idempotent; `closed` resolves once it is done and output is flushed. */
  shutdown(): Promise<void>;
  readonly closed: Promise<void>;
}

/** The agent and runtime whose extensions `reloadExtensions` loads. */
export type LoadingCore = Pick<FrontDoor, "agent" | "runtime">;

/** What `reloadExtensions` gives the core to load. */
export interface ReloadedExtensions {
  sources: readonly ExtensionSource[];
  /**
   * The folder's project trust is for the loaded extensions' project_trust handlers to decide (a
   * switch to another folder, as pi asks its new runtime's): called once `sources` have loaded, it
   * returns the project's extensions to add when trusted, in pi's load `order`, with what becomes
   * of those already loaded (`settle`, see ExtensionRuntime.settleTrusted).
   */
  settleTrust?: (() => Promise<TrustedProject | undefined>) | undefined;
}

/** The project's extensions once trusted, and what becomes of the extensions loaded before. */
export interface TrustedProject {
  sources: readonly ExtensionSource[];
  order: readonly string[];
  settle: { preloaded: ReadonlySet<string>; final: ReadonlyMap<string, SourceInfo> };
}

/** What a mode hands on from the command line (the same for every mode). */
export interface AgentCoreSettings {
  /** The folder the agent works in: its session's. */
  cwd: string;
  /** The folder parley was started in, where relative session paths a client sends start (as in pi); default `cwd`. */
  launchCwd?: string | undefined;
  extensions?: readonly ExtensionSource[] | undefined;
  /**
   * The extensions again, loaded fresh, for ctx.reload() and each session switch, with the settings
   * and resources of `cwd` (the folder the agent now works in); without it the same factories run again.
   * `core` is the agent and runtime being loaded (ACP mode runs one per session).
   */
  reloadExtensions?: ((cwd: string, core: LoadingCore) => Promise<ReloadedExtensions>) | undefined;
  /** The session to start with; a new in-memory one when absent. */
  session?: Session | undefined;
  sessions?: SessionFactory | undefined;
  sessionName?: string | undefined;
  /** Resolved models; the offline default when absent. */
  models?: ModelResolution | undefined;
  /** --system-prompt */
  systemPrompt?: string | undefined;
  /** pi's settings and start-up flags for the agent (see agent-config.ts). */
  agentConfig?: AgentConfig | undefined;
  /** Diagnostics for humans (stderr in the CLI); never the protocol stream. */
  log?: ((message: string) => void) | undefined;
  /**
   * How often to say on the log that an extension's factory has still not finished (default 10 s).
   * parley waits for it however long it takes, as pi does; requests wait with it.
   */
  slowExtensionNoticeMs?: number | undefined;
}

/** What the mode's front door supplies: where records go and what it does on the host's requests. */
export interface AgentCoreWiring {
  dialogs: DialogRegistry;
  /** The host's records: fire-and-forget UI, extension errors, session info. */
  send: Transport["send"];
  /** The agent's events. */
  emit: Emit;
  /** Whether the client keeps up (the loop waits while it does not). */
  output?: OutputPressure | undefined;
  /** ctx.shutdown(): the mode decides when stopping is safe. */
  requestShutdown: () => void;
  /** After ctx.reload() has run session_start again (ACP sends the new command list). */
  afterReload?: (() => void) | undefined;
  /** ctx.mode (default "rpc"); print and JSON mode have no UI (ctx.hasUI false, dialogs answer nothing). */
  mode?: ExtensionMode | undefined;
}

export class AgentCore {
  readonly host: RpcExtensionHost;
  readonly runtime: ExtensionRuntime;
  readonly initialSession: Session;
  readonly #settings: AgentCoreSettings;
  readonly #wiring: AgentCoreWiring;
  readonly #log: (message: string) => void;
  #agent: AgentSession | undefined;

  constructor(settings: AgentCoreSettings, wiring: AgentCoreWiring) {
    this.#settings = settings;
    this.#wiring = wiring;
    this.#log = settings.log ?? (() => {});
    const sessions = settings.sessions ?? memorySessions(settings.cwd);
    this.initialSession = settings.session ?? sessions.create({});
    if (settings.sessionName) this.initialSession.setName(settings.sessionName);
    this.host = new RpcExtensionHost({
      cwd: settings.cwd,
      agent: () => this.agent,
      sessions,
      dialogs: wiring.dialogs,
      send: wiring.send,
      log: this.#log,
      requestShutdown: wiring.requestShutdown,
      reload: () => this.reloadExtensions(),
      reloadForSession: () => this.#loadAgain(),
      moveTo: (cwd) => this.#moveTo(cwd),
      launchCwd: settings.launchCwd,
      mode: wiring.mode,
    });
    this.runtime = this.host.runtime;
  }

  /** The folder the agent works in: the current session's (a switch to another folder's session moves it, as in pi); the host keeps it. */
  get cwd(): string {
    return this.host.cwd;
  }

  /** A switch to a session of another folder: the agent's bash, tools and system prompt work there from now on. */
  async #moveTo(cwd: string): Promise<void> {
    await this.#agent?.moveTo(cwd);
  }

  /**
   * Before session_start: the first session a client chooses (ACP's session/load) is another
   * folder's. The agent moves there and the extensions load again with that folder's settings and
   * resources, as if started there (they have seen no session yet).
   */
  async startIn(cwd: string): Promise<void> {
    if (cwd === this.cwd) return;
    await this.host.moveTo(cwd);
    await this.#loadAgain();
  }

  /** The agent; exists once loadExtensions() has begun. */
  get agent(): AgentSession {
    if (!this.#agent) throw new Error("the agent exists once loadExtensions() has begun");
    return this.#agent;
  }

  /** Whether the agent exists yet (shutdown before start-up has nothing to stop). */
  get hasAgent(): boolean {
    return this.#agent !== undefined;
  }

  /** Creates the agent, then runs the extension factories (they register commands, handlers and flags). */
  async loadExtensions(options: { explicitFailuresFatal?: boolean } = {}): Promise<ExtensionLoadFailure[]> {
    await this.#createAgent();
    // The loop (pi-agent-core, pi-ai) loads with the first prompt, with or without extensions.
    return this.#addExtensions(this.#settings.extensions ?? [], options.explicitFailuresFatal ?? false);
  }

  /**
   * Creates the agent, then loads the extensions fresh for its folder, as a session switch does
   * (settings, resources and modules read again, factories run): an ACP session after the first
   * gets its own runtime this way, as pi builds one per session.
   */
  async loadFresh(): Promise<void> {
    await this.#createAgent();
    await this.#loadAgain();
  }

  async #createAgent(): Promise<void> {
    if (this.#agent) return;
    const models = this.#settings.models ?? (await resolveModels({}, { cwd: this.cwd }));
    // A resumed session may name a built-in model to continue with.
    if (this.initialSession.entryCount > 0) await models.loadCatalog();
    this.#agent ??= new AgentSession({
      cwd: this.cwd,
      runtime: this.runtime,
      models,
      session: this.initialSession,
      emit: this.#wiring.emit,
      ...(this.#wiring.output !== undefined ? { output: this.#wiring.output } : {}),
      customSystemPrompt: this.#settings.systemPrompt,
      config: this.#settings.agentConfig,
      log: this.#log,
    });
  }

  /**
   * Runs more factories into the same runtime after loadExtensions() (the project's extensions,
   * loaded once project_trust has trusted it): each factory runs once, and the extensions are then
   * put in `order` (their paths in pi's load order), as if all had loaded together. Failures are
   * reported, as for any discovered extension.
   */
  async addExtensions(sources: readonly ExtensionSource[], order: readonly string[]): Promise<void> {
    await this.#addExtensions(sources);
    this.runtime.orderByPaths(order);
  }

  /**
   * Runs the factories. With `explicitFailuresFatal`, a -e file that fails is not reported but
   * returned (the CLI stops on it, as pi does); discovered ones are reported and skipped.
   */
  #addExtensions(sources: readonly ExtensionSource[], explicitFailuresFatal = false): Promise<ExtensionLoadFailure[]> {
    // Code that runs once: no optimized compiles for it (startup/launch-bundle.ts, pauseOptimizer).
    return whileOptimizerPaused(() => this.#runFactories(sources, explicitFailuresFatal));
  }

  async #runFactories(sources: readonly ExtensionSource[], explicitFailuresFatal: boolean): Promise<ExtensionLoadFailure[]> {
    const failures: ExtensionLoadFailure[] = [];
    // Extensions may ask for the tools (pi.getAllTools) while they load. The CLI bundle creates
    // them then, synchronously (tool-registry.ts, loadNow); elsewhere they are created first.
    if (sources.some((ext) => ext.factory) && !canRequireTools()) await this.agent.tools.load();
    for (const ext of sources) {
      const fatal = explicitFailuresFatal && ext.scope === "temporary";
      if (ext.error !== undefined || !ext.factory) {
        const error = ext.error ?? "no factory";
        if (fatal) failures.push({ path: ext.path, error });
        else this.host.reportError({ extensionPath: ext.path, event: "load", error });
        continue;
      }
      const replacedBy = this.#replacement(ext);
      if (replacedBy !== undefined) {
        this.#log(`${replacedBy.path} registers ${replacedBy.what}, so built-in extension \`${ext.path}\` was not loaded`);
        continue;
      }
      const onError = fatal ? (e: { error: string; stack?: string }) => failures.push({ path: ext.path, ...e }) : undefined;
      await whileSayingSlow(
        this.runtime.add(ext.path, ext.factory, ext.scope, onError, ext.sourceInfo),
        `extension ${ext.path} (its factory)`,
        this.#log,
        this.#settings.slowExtensionNoticeMs,
      );
      if (failures.length > 0) break;
    }
    // Once an extension has loaded TypeBox (its own schemas, pi-ai), the definitions cost ~1 ms:
    // made here, at start-up as in pi, not on the first prompt. Else they wait (they would load
    // TypeBox, ~4 MiB, for an extension that never asks: pi's rpc-demo.ts).
    if (toolDefinitionsAreCheap()) this.agent.tools.loadNow();
    return failures;
  }

  /** The loaded extension that registered what a replaceable built-in would, and what it is. */
  #replacement({ replaceable }: ExtensionSource): { path: string; what: string } | undefined {
    if (replaceable === undefined) return undefined;
    const { command, tool } = replaceable;
    const commander = command === undefined ? undefined : this.runtime.extensions.find((extension) => extension.commands.has(command));
    if (commander) return { path: commander.path, what: `command \`/${command}\`` };
    const owner = tool === undefined ? undefined : this.runtime.tools.get(tool);
    if (owner) return { path: owner.extensionPath, what: `tool \`${tool}\`` };
    return undefined;
  }

  /**
   * ctx.reload(), as pi does it: session_shutdown (reason "reload") to the extensions as they are,
   * then everything they registered is dropped, they load again and get session_start (reason
   * "reload"). Flag values given on the command line still apply.
   */
  async reloadExtensions(): Promise<void> {
    await this.runtime.emit({ type: "session_shutdown", reason: "reload" });
    await this.#loadAgain();
    await this.runtime.emit({ type: "session_start", reason: "reload" });
    this.runtime.bindMcpServers();
    await this.runtime.emitResourcesDiscover(this.cwd, "reload");
    this.#wiring.afterReload?.();
  }

  /**
   * Drops the extensions (their instances go stale) and loads them again: settings, resources and
   * modules read afresh, factories run. ctx.reload() does it, and so does every session switch, as
   * pi builds a new runtime for each session.
   */
  async #loadAgain(): Promise<void> {
    this.runtime.reset();
    const loaded = this.#settings.reloadExtensions ? await this.#settings.reloadExtensions(this.cwd, this) : { sources: this.#settings.extensions ?? [] };
    await this.#addExtensions(loaded.sources);
    const project = await loaded.settleTrust?.();
    if (project) {
      this.runtime.settleTrusted(project.settle.preloaded, project.settle.final);
      await this.addExtensions(project.sources, project.order);
    }
  }

  /** session_start "startup" and resources_discover, once the client can hear what they show. */
  async startSession(): Promise<void> {
    // A stored session opened at start-up continues with the tools its transcript records (pi 1.6).
    this.agent.restoreTools(true);
    this.agent.recordSessionStart();
    await this.runtime.emit({ type: "session_start", reason: "startup" });
    this.runtime.bindMcpServers();
    await this.runtime.emitResourcesDiscover(this.cwd, "startup");
  }
}
