/**
 * The loaded extensions and everything they registered: event handlers, commands, tools,
 * flags. Emits events to handlers in load order; a throwing handler is reported, never fatal.
 */
import { parseVirtualModel } from "../models/virtual-models.js";
import { createModelRegistry } from "./model-registry.js";
import { dirname, resolve } from "node:path";
import type { ExtensionHost } from "./host.js";
import type {
  EventBus,
  ExtensionAPI,
  ExtensionCommandContext,
  ExtensionContext,
  ExtensionFactory,
  ExtensionHandler,
  HookEvent,
  HookName,
  HookResult,
  ProjectTrustHandler,
  ReadonlySessionManager,
  RegisteredCommandOptions,
  ReplacedSessionContext,
  SetupSessionManager,
  SlashCommandInfo,
  SessionBoundaryDraft,
  SourceInfo,
  WithSession,
  BoundaryContextPreview,
  BoundaryState,
  ContextWithSystemEvent,
} from "./types.js";

/** A checked boundary proposal and the context it would make. */
export interface BoundaryPreview {
  drafts: SessionBoundaryDraft[];
  context: BoundaryContextPreview;
}
import { exec } from "./exec.js";
import { contextEntries, sessionProjection } from "../session/context.js";
import type { Session } from "../session/session.js";
import { errorText } from "../error-text.js";
import { extendResources, NO_RESOURCES, type Resources } from "../resources/index.js";
import { McpServerRegistry } from "./mcp-servers.js";
import { loadSettings } from "../config/settings.js";
import { agentDir } from "../config/agent-dir.js";
import { UiPromptEvents } from "./ui-prompt-events.js";
import { AwaitedCode, isLetGoAtShutdown } from "./awaited-code.js";

type AnyHandler = (event: never, ctx: ExtensionContext) => unknown;

export interface LoadedExtension {
  path: string;
  sourceInfo: SourceInfo;
  handlers: Map<string, AnyHandler[]>;
  /** Its commands by name: registering a name again replaces its own earlier one. */
  commands: Map<string, RegisteredCommand>;
  /**
   * Set once a session switch or a reload has replaced this instance with a fresh one (as pi does):
   * its `pi` and every `ctx` it was given then throw this instead of acting on a session it no
   * longer belongs to.
   */
  stale?: string;
}

/** What a replaced extension instance's `pi` and `ctx` throw (see LoadedExtension.stale). */
export const STALE_EXTENSION_MESSAGE =
  "This extension's pi and ctx belong to a session that has since been replaced (ctx.newSession, ctx.fork, ctx.switchSession, ctx.reload, or the client's new_session, switch_session, fork, clone): " +
  "the extension was loaded again for the new session. Do the work that follows a replacement in withSession, with the ctx it is given, and do not use a captured ctx after await ctx.reload().";

function assertActive(extension: LoadedExtension): void {
  if (extension.stale !== undefined) throw new Error(extension.stale);
}

/**
 * `target` with each of its methods checking first that `extension` is still the live instance.
 * Getters are left alone (not read here): they check for themselves when read.
 */
function guardMethods<T extends object>(target: T, extension: LoadedExtension): T {
  for (const [key, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(target))) {
    const member: unknown = descriptor.value;
    if (typeof member !== "function") continue;
    const guarded = (...args: unknown[]): unknown => {
      assertActive(extension);
      return Reflect.apply(member, target, args);
    };
    Object.defineProperty(target, key, { ...descriptor, value: guarded });
  }
  return target;
}

export interface RegisteredCommand {
  name: string;
  extension: LoadedExtension;
  options: RegisteredCommandOptions;
}

/** A command as clients invoke it: pi suffixes a name several extensions share with `:1`, `:2`, … */
export interface ResolvedCommand extends RegisteredCommand {
  invocationName: string;
}

export interface RegisteredFlag {
  name: string;
  type: "boolean" | "string";
  description?: string | undefined;
  default?: boolean | string | undefined;
  extensionPath: string;
}

export class ExtensionRuntime {
  readonly extensions: LoadedExtension[] = [];
  /** Skills and prompt templates (the CLI loads them; get_commands and prompts use them). */
  resources: Resources = NO_RESOURCES;
  /** Whether the project's `.pi/` resources are used (the start-up trust decision); ctx.isProjectTrusted(). */
  projectTrusted = true;
  /** What the command line found, before extensions added theirs (a reload starts again from it). */
  #baseResources: Resources | undefined;
  readonly tools = new Map<string, { tool: { name: string; [key: string]: unknown }; extensionPath: string }>();
  readonly flags = new Map<string, RegisteredFlag>();
  readonly shortcuts: { shortcut: string; extensionPath: string }[] = [];
  readonly #host: ExtensionHost;
  #bus = createEventBus();
  readonly #resourcesReported = new Set<string>();
  /** Providers extensions registered, so a reload can take them away again. */
  readonly #providers = new Set<string>();
  /** Virtual models extensions registered (provider and id), for the same reason. */
  readonly #virtualModels = new Map<string, { provider: string; id: string }>();
  /** MCP servers extensions (and an ACP client) registered; the built-in MCP support connects them. */
  #mcpServers: McpServerRegistry;
  /** The client's MCP servers (setClientMcpServers), kept across reloads. */
  #clientMcpServers: { name: string; config: Record<string, unknown>; owner: string }[] = [];
  /** ui_prompt_start / ui_prompt_end around every extension's dialogs (one nesting count for all, as pi). */
  readonly #uiPrompts = new UiPromptEvents((event) => void this.emit(event));
  /** A handler's or command's failure, reported; one let go of at shutdown is not (nobody is left to be told). */
  #reportFailure(extensionPath: string, event: string, error: unknown): void {
    if (isLetGoAtShutdown(error)) return;
    this.#host.reportError({ extensionPath, event, ...errorText(error) });
  }

  /** The shared event bus as one extension uses it; a stale instance's handlers report nothing. */
  #events(extension: LoadedExtension): EventBus {
    const bus = reportingBus(this.#bus, (channel, error) => {
      if (!extension.stale) this.#reportFailure(extension.path, `events:${channel}`, error);
    });
    // As pi: a stale instance's pi.events throws, like the rest of its pi.
    return guardMethods(bus, extension);
  }

  /** The handlers and commands being waited on, let go of when the agent aborts or shuts down. */
  readonly awaited = new AwaitedCode();

  constructor(host: ExtensionHost) {
    this.#host = host;
    this.#mcpServers = new McpServerRegistry((report) => host.reportError(report));
  }

  /** Runs one extension factory; a throw is reported and leaves what it registered before. */
  /** Runs an extension's factory. A factory that throws is reported, or handed to `onError` when given. */
  async add(
    path: string,
    factory: ExtensionFactory,
    scope: SourceInfo["scope"] = "temporary",
    onError?: (error: { error: string; stack?: string }) => void,
    source?: SourceInfo,
  ): Promise<boolean> {
    // Where it was found, as pi reports it (the CLI's resolution says); without it: -e files
    // come from the CLI, others are local to the user or project.
    const sourceInfo: SourceInfo =
      source ??
      (scope === "temporary"
        ? { path, source: "cli", scope, origin: "top-level" }
        : { path, source: "local", scope, origin: "top-level", baseDir: dirname(path) });
    const extension: LoadedExtension = { path, sourceInfo, handlers: new Map(), commands: new Map() };
    this.extensions.push(extension);
    try {
      await factory(this.#api(extension));
      return true;
    } catch (error) {
      if (onError) onError(errorText(error));
      else this.#host.reportError({ extensionPath: path, event: "load", ...errorText(error) });
      return false;
    }
  }

  /**
   * resources_discover after session_start, as pi emits it. The skill and prompt folders handlers
   * name join the resources; themes belong to a terminal UI, so those are reported once per
   * extension (stderr) and otherwise ignored.
   */
  async emitResourcesDiscover(cwd: string, reason: "startup" | "reload"): Promise<void> {
    const skillPaths: string[] = [];
    const promptTemplatePaths: string[] = [];
    for (const extension of this.extensions) {
      for (const handler of this.#handlers(extension, "resources_discover")) {
        try {
          const result = (await handler({ type: "resources_discover", cwd, reason }, this.context(extension))) ?? undefined;
          const base = dirname(extension.path);
          const paths = (list: unknown): string[] =>
            Array.isArray(list) ? list.filter((p): p is string => typeof p === "string").map((p) => resolve(base, p)) : [];
          skillPaths.push(...paths(result?.skillPaths));
          promptTemplatePaths.push(...paths(result?.promptPaths));
          if (Array.isArray(result?.themePaths) && result.themePaths.length > 0 && !this.#resourcesReported.has(extension.path)) {
            this.#resourcesReported.add(extension.path);
            this.#host.diagnostic(`${extension.path}: resources_discover returned themePaths, which parley ignores (themes belong to a terminal UI)`);
          }
        } catch (error) {
          this.#reportFailure(extension.path, "resources_discover", error);
        }
      }
    }
    this.#baseResources ??= this.resources;
    this.resources =
      skillPaths.length + promptTemplatePaths.length > 0 ? extendResources(this.#baseResources, { cwd, skillPaths, promptTemplatePaths }) : this.#baseResources;
  }

  /** The skills and prompt templates of settings and discovery (start-up, trust, ctx.reload()); resources_discover adds to these. */
  setResources(resources: Resources): void {
    this.#baseResources = resources;
    this.resources = resources;
  }

  /**
   * Forgets every extension and what it registered (before a reload or a session switch loads
   * them again); the instances forgotten are stale from here on.
   */
  reset(): void {
    for (const extension of this.extensions) extension.stale = STALE_EXTENSION_MESSAGE;
    for (const name of this.#providers) this.#host.unregisterProvider(name);
    this.#providers.clear();
    for (const { provider, id } of this.#virtualModels.values()) this.#host.unregisterVirtualModel(provider, id);
    this.#virtualModels.clear();
    this.extensions.length = 0;
    this.tools.clear();
    this.flags.clear();
    this.shortcuts.length = 0;
    // Listeners of the old instances must not hear the new ones.
    this.#bus = createEventBus();
    this.#mcpServers = new McpServerRegistry((report) => this.#host.reportError(report));
    for (const server of this.#clientMcpServers) this.#registerClientServer(server);
  }

  /** A client's server that cannot be registered (its name taken by an extension's) is reported, not thrown at the client. */
  #registerClientServer({ name, config, owner }: { name: string; config: Record<string, unknown>; owner: string }): void {
    try {
      this.#mcpServers.register(name, config, owner);
    } catch (error) {
      this.#host.reportError({ extensionPath: owner, event: "register_mcp_server", ...errorText(error) });
    }
  }

  /**
   * MCP servers the client offers (ACP's session/new): registered as an extension's would be, under
   * `owner`, and again after every reload, for the session's whole life.
   */
  setClientMcpServers(servers: readonly { name: string; config: Record<string, unknown> }[], owner: string): void {
    const same = JSON.stringify(servers) === JSON.stringify(this.#clientMcpServers.map(({ name, config }) => ({ name, config })));
    if (same && this.#clientMcpServers.every((server) => server.owner === owner)) return;
    for (const { name } of this.#clientMcpServers) this.#mcpServers.unregister(name, owner);
    this.#clientMcpServers = servers.map((server) => ({ ...server, owner }));
    for (const server of this.#clientMcpServers) this.#registerClientServer(server);
  }

  /**
   * The extensions are bound (session_start has run, at start-up or after a reload): MCP servers
   * registered from now on are announced with mcp_servers_change, and servers nothing connects
   * are reported, as in pi.
   */
  bindMcpServers(): void {
    const registry = this.#mcpServers;
    registry.bind(() => {
      void this.emit({ type: "mcp_servers_change", servers: registry.list() });
      registry.reportUnconnected(this.hasHandlers("mcp_servers_change"));
    });
    registry.reportUnconnected(this.hasHandlers("mcp_servers_change"));
  }

  /** An extension_error for something an extension's resource caused (a skill that cannot be read). */
  reportError(report: Parameters<ExtensionHost["reportError"]>[0]): void {
    this.#host.reportError(report);
  }

  /** The project_trust handlers in load order, each with its extension (project-trust.ts asks them). */
  projectTrustHandlers(): { extensionPath: string; handler: ProjectTrustHandler }[] {
    // pi.on("project_trust", h) files h under that name, and its overload types h as a ProjectTrustHandler.
    return this.extensions.flatMap((e) =>
      (e.handlers.get("project_trust") ?? []).map((h) => ({ extensionPath: e.path, handler: h as unknown as ProjectTrustHandler })),
    );
  }

  /**
   * Once project trust is decided, the extensions loaded before it (`preloaded`: the user's files)
   * are kept as pi keeps them in its final set: one the final resolution still loads takes its
   * final `sourceInfo` (the project's entry, when both settings name the package); one it no longer
   * loads (replaced by the project's copy of the package, or turned off by the project's settings)
   * is dropped, with the tools, flags and shortcuts it registered, though its factory ran so that
   * its project_trust handler could be asked. The instances dropped are stale.
   */
  settleTrusted(preloaded: ReadonlySet<string>, final: ReadonlyMap<string, SourceInfo>): void {
    const dropped = new Set([...preloaded].filter((path) => !final.has(path)));
    for (const extension of this.extensions) {
      if (dropped.has(extension.path)) extension.stale = STALE_EXTENSION_MESSAGE;
      else if (preloaded.has(extension.path)) extension.sourceInfo = final.get(extension.path) ?? extension.sourceInfo;
    }
    if (dropped.size === 0) return;
    this.extensions.splice(0, this.extensions.length, ...this.extensions.filter((e) => !dropped.has(e.path)));
    for (const [name, { extensionPath }] of this.tools) if (dropped.has(extensionPath)) this.tools.delete(name);
    for (const [name, flag] of this.flags) if (dropped.has(flag.extensionPath)) this.flags.delete(name);
    this.shortcuts.splice(0, this.shortcuts.length, ...this.shortcuts.filter((s) => !dropped.has(s.extensionPath)));
  }

  /**
   * The extensions in pi's load order (`order`: their paths), whatever order they were loaded in:
   * the project's load after project_trust, last. Unknown paths keep their place at the end.
   */
  orderByPaths(order: readonly string[]): void {
    const rank = new Map(order.map((path, i) => [path, i]));
    const at = (e: LoadedExtension) => rank.get(e.path) ?? order.length;
    const ordered = [...this.extensions].sort((a, b) => at(a) - at(b));
    this.extensions.splice(0, this.extensions.length, ...ordered);
  }

  hasHandlers(event: HookName): boolean {
    return this.extensions.some((e) => (e.handlers.get(event)?.length ?? 0) > 0);
  }

  /** An extension's handlers for one event, typed by the hook map. */
  #handlers<K extends HookName>(extension: LoadedExtension, event: K): ExtensionHandler<HookEvent<K>, HookResult<K>>[] {
    // pi.on(name, handler) files each handler under the name it was given, so the ones under `event`
    // take that event; what they return is extension code's, and every caller checks it before use.
    return (extension.handlers.get(event) ?? []) as ExtensionHandler<HookEvent<K>, HookResult<K>>[];
  }

  /**
   * Emits to every handler in load order. For cancellable `*_before_*` events the first result
   * with `cancel: true` wins and stops the chain; otherwise the last non-empty result is returned.
   */
  async emit<K extends HookName>(event: HookEvent<K> & { type: K }): Promise<HookResult<K> | undefined> {
    let result: HookResult<K> | undefined;
    for (const extension of this.extensions) {
      for (const handler of this.#handlers(extension, event.type)) {
        try {
          const value = await handler(event, this.context(extension));
          if (value && typeof value === "object") {
            result = value;
            if ("cancel" in value && value.cancel === true) return result;
          }
        } catch (error) {
          this.#reportFailure(extension.path, event.type, error);
        }
      }
    }
    return result;
  }

  /**
   * tool_call: handlers in load order until one blocks; each sees the event as the previous ones
   * left it (they may patch `input` in place). Unlike emit, a handler's error propagates: pi blocks
   * the call with it rather than running a call a failing check was meant to stop.
   */
  async emitUntilBlocked(event: HookEvent<"tool_call">): Promise<HookResult<"tool_call"> | undefined> {
    let result: HookResult<"tool_call"> | undefined;
    for (const extension of this.extensions) {
      for (const handler of this.#handlers(extension, "tool_call")) {
        const value = await handler(event, this.context(extension));
        if (!value || typeof value !== "object") continue;
        result = value;
        if (value.block === true) return value;
      }
    }
    return result;
  }

  /**
   * Emits to every handler in load order, letting each see the event as the previous ones left
   * it: `step` folds a handler's result into the event and says whether to stop.
   */
  async emitChained<K extends HookName>(
    event: HookEvent<K> & { type: K },
    step: (event: HookEvent<K>, result: NonNullable<HookResult<K>>) => { event: HookEvent<K>; stop?: boolean },
  ): Promise<HookEvent<K>> {
    let current: HookEvent<K> = event;
    for (const extension of this.extensions) {
      for (const handler of this.#handlers(extension, event.type)) {
        try {
          const value = await handler(current, this.context(extension));
          if (value === undefined || value === null) continue;
          const next = step(current, value);
          current = next.event;
          if (next.stop) return current;
        } catch (error) {
          this.#reportFailure(extension.path, event.type, error);
        }
      }
    }
    return current;
  }

  /**
   * turn_end and agent_before_settle, as the newest pi runs them: each handler sees the entries
   * proposed so far and the context rebuilt from them; a result's `entries`/`continue` replace
   * the proposal's. `preview` checks a proposal (what handlers returned, still unchecked) and
   * throws for one that cannot be appended; a proposal left invalid after the last handler is
   * dropped (no entries, no continuation), as in pi.
   */
  async emitBoundary<K extends "turn_end" | "agent_before_settle">(
    type: K,
    make: (state: BoundaryState) => HookEvent<K> & { type: K },
    outcome: BoundaryState["outcome"],
    preview: (proposal: unknown) => BoundaryPreview,
  ): Promise<{ entries: SessionBoundaryDraft[]; continue: boolean }> {
    let proposal: unknown = [];
    let shouldContinue = false;
    let current = preview(proposal);
    let valid = true;
    for (const extension of this.extensions) {
      for (const handler of this.#handlers(extension, type)) {
        try {
          const state = { entries: current.drafts, continue: shouldContinue, context: current.context, outcome };
          const result: unknown = await handler(make(state), this.context(extension));
          if (typeof result === "object" && result !== null) {
            const entries = field(result, "entries");
            const wanted = field(result, "continue");
            if (entries !== undefined) proposal = entries;
            if (wanted !== undefined) shouldContinue = wanted === true;
          }
        } catch (error) {
          this.#reportFailure(extension.path, type, error);
        }
        try {
          current = preview(proposal);
          valid = true;
        } catch (error) {
          valid = false;
          const { error: text, stack } = errorText(error);
          this.#host.reportError({ extensionPath: extension.path, event: type, error: `Invalid boundary entries: ${text}`, ...(stack ? { stack } : {}) });
        }
      }
    }
    return valid ? { entries: current.drafts, continue: shouldContinue } : { entries: [], continue: false };
  }

  /**
   * context_with_system: each handler gets the transcript (leading system message first) as the
   * previous one left it, and what it returns is used as returned. Dropping the leading system
   * message is reported (pi's words) but honoured.
   */
  async emitContextWithSystem(messages: ContextWithSystemEvent["messages"]): Promise<ContextWithSystemEvent["messages"]> {
    let current = messages;
    for (const extension of this.extensions) {
      for (const handler of this.#handlers(extension, "context_with_system")) {
        try {
          const hadLeadingSystemMessage = current[0]?.role === "system";
          const result = await handler({ type: "context_with_system", messages: current }, this.context(extension));
          const returned = typeof result === "object" && result !== null ? field(result, "messages") : undefined;
          if (
            Array.isArray(returned) &&
            returned.every(
              (m: unknown): m is ContextWithSystemEvent["messages"][number] => typeof m === "object" && m !== null && typeof field(m, "role") === "string",
            )
          )
            current = returned;
          if (hadLeadingSystemMessage && current[0]?.role !== "system") {
            this.#host.reportError({
              extensionPath: extension.path,
              event: "context_with_system",
              error:
                "Handler removed the leading system message; the request has no prompt or initial tool declarations. Keep it at index 0 or replace a dropped prefix with getCurrentSystemMessage().",
            });
          }
        } catch (error) {
          this.#reportFailure(extension.path, "context_with_system", error);
        }
      }
    }
    return current;
  }

  /** pi's two forms: (name, config), or one provider object named by its `id` (or `name`). */
  #registerProvider(nameOrProvider: unknown, config?: unknown): void {
    const provider = typeof nameOrProvider === "object" && nameOrProvider !== null ? nameOrProvider : undefined;
    const name = provider ? String(field(provider, "id") ?? field(provider, "name") ?? "") : String(nameOrProvider);
    if (!name) throw new TypeError("registerProvider(provider): the provider needs an id");
    this.#host.registerProvider(name, provider ?? config);
    this.#providers.add(name);
  }

  #unregisterProvider(name: string): void {
    this.#host.unregisterProvider(name);
    this.#providers.delete(name);
  }

  /** As pi: a virtual model that cannot be registered is reported (extension_error); the extension's other registrations stay. */
  #registerVirtualModel(model: unknown, extensionPath: string): void {
    try {
      const definition = parseVirtualModel(model, () => this.contextFor(extensionPath));
      this.#host.registerVirtualModel(definition);
      this.#virtualModels.set(`${definition.provider}/${definition.id}`, { provider: definition.provider, id: definition.id });
    } catch (error) {
      this.#host.reportError({ extensionPath, event: "register_virtual_model", ...errorText(error) });
    }
  }

  #unregisterVirtualModel(provider: string, id: string): void {
    this.#host.unregisterVirtualModel(provider, id);
    this.#virtualModels.delete(`${provider}/${id}`);
  }

  /** The context a tool or handler of this extension gets (a neutral one for built-ins). */
  contextFor(extensionPath: string | undefined): ExtensionContext {
    const extension = this.extensions.find((e) => e.path === extensionPath);
    return this.context(
      extension ?? {
        path: extensionPath ?? "<builtin>",
        sourceInfo: { path: "<builtin>", source: "builtin", scope: "temporary", origin: "top-level" },
        handlers: new Map(),
        commands: new Map(),
      },
    );
  }

  /**
   * Every extension command in load order, each with the name clients invoke it by: a name that
   * several extensions register becomes `name:1`, `name:2`, … (skipping names already taken).
   */
  get commands(): ResolvedCommand[] {
    const all = this.extensions.flatMap((e) => [...e.commands.values()]);
    const counts = new Map<string, number>();
    for (const c of all) counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
    const seen = new Map<string, number>();
    const taken = new Set<string>();
    return all.map((command) => {
      const occurrence = (seen.get(command.name) ?? 0) + 1;
      seen.set(command.name, occurrence);
      let invocationName = (counts.get(command.name) ?? 0) > 1 ? `${command.name}:${occurrence}` : command.name;
      for (let n = occurrence + 1; taken.has(invocationName); n++) invocationName = `${command.name}:${n}`;
      taken.add(invocationName);
      return { ...command, invocationName };
    });
  }

  /** get_commands and pi.getCommands(): extension commands, then prompt templates, then skills. */
  commandList(): SlashCommandInfo[] {
    return [
      ...this.commands.map((c) => ({
        name: c.invocationName,
        ...(c.options.description !== undefined ? { description: c.options.description } : {}),
        source: "extension" as const,
        sourceInfo: c.extension.sourceInfo,
      })),
      ...this.resources.prompts.map((p) => ({ name: p.name, description: p.description, source: "prompt" as const, sourceInfo: p.sourceInfo })),
      ...this.resources.skills.map((s) => ({ name: `skill:${s.name}`, description: s.description, source: "skill" as const, sourceInfo: s.sourceInfo })),
    ];
  }

  /** The extension command `/name args` invokes, with its args; undefined for anything else. */
  findCommand(text: string): { command: ResolvedCommand; args: string } | undefined {
    const match = /^\/(\S+)(?:\s([\s\S]*))?$/.exec(text);
    const command = match ? this.commands.find((c) => c.invocationName === match[1]) : undefined;
    return command ? { command, args: match?.[2] ?? "" } : undefined;
  }

  async runCommand(text: string): Promise<boolean> {
    const found = this.findCommand(text);
    if (!found) return false;
    const { command, args } = found;
    try {
      await this.awaited.guard(command.options.handler(args, this.commandContext(command.extension)), `The command /${command.name}`);
    } catch (error) {
      this.#reportFailure(command.extension.path, `command:${command.name}`, error);
    }
    return true;
  }

  /**
   * The `ctx` an extension's handlers get. Its members are read when used (the model, the signal,
   * the session are the current ones), and once the instance is stale each of them throws.
   */
  context(extension: LoadedExtension): ExtensionContext {
    const host = this.#host;
    const live = <T>(value: () => T): T => {
      assertActive(extension);
      return value();
    };
    // As in pi, dialogs are announced (ui_prompt_start/end) only where someone can answer them.
    const ui = host.mode === "rpc" ? this.#uiPrompts.wrap(host.ui(extension.path)) : host.ui(extension.path);
    const thinkingLevel = host.thinkingLevel();
    // Registrations through ctx.modelRegistry count as the extension's own (a reload takes them away).
    const registry = () =>
      createModelRegistry({
        models: host.models(),
        registerProvider: (nameOrProvider, config) => this.#registerProvider(nameOrProvider, config),
        unregisterProvider: (name) => this.#unregisterProvider(name),
        registerVirtualModel: (model) => this.#registerVirtualModel(model, extension.path),
        unregisterVirtualModel: (provider, id) => this.#unregisterVirtualModel(provider, id),
      });
    const context: ExtensionContext = {
      get ui() {
        return live(() => ui);
      },
      get hasUI() {
        return live(() => host.mode === "rpc");
      },
      mode: host.mode,
      get cwd() {
        return live(() => host.cwd);
      },
      get thinkingLevel() {
        return live(() => thinkingLevel);
      },
      get scopedModels() {
        return live(() => host.scopedModels());
      },
      isProjectTrusted: () => this.projectTrusted,
      get sessionManager() {
        return live(() => readonlyManager(host.session()));
      },
      get modelRegistry() {
        return live(registry);
      },
      get model() {
        return live(() => host.model());
      },
      isIdle: () => host.isIdle(),
      get signal() {
        return live(() => host.signal());
      },
      abort: () => host.abort(),
      hasPendingMessages: () => host.hasPendingMessages(),
      shutdown: () => host.requestShutdown(),
      getContextUsage: () => host.contextUsage(),
      compact: (options) => host.compact(options ?? {}),
      getSystemPrompt: () => host.systemPrompt(),
    };
    return guardMethods(context, extension);
  }

  /** A command's `ctx`: the handlers' one plus session control (assigned, so the getters stay getters). */
  commandContext(extension: LoadedExtension): ExtensionCommandContext {
    const host = this.#host;
    const commands: Omit<ExtensionCommandContext, keyof ExtensionContext> = {
      getSystemPromptOptions: () => ({ cwd: host.cwd, skills: this.resources.skills, contextFiles: [] }),
      waitForIdle: () => host.waitForIdle(),
      newSession: async (options) => {
        const setup = options?.setup;
        const result = await host.newSession({
          ...(options?.parentSession !== undefined ? { parentSession: options.parentSession } : {}),
          // As in pi: the new session is seeded before its session_start, so handlers see the seed.
          ...(setup !== undefined ? { setup: (session: Session) => setup(setupManager(session)) } : {}),
        });
        if (result.cancelled) return result;
        await this.#withSession(extension, options?.withSession);
        return result;
      },
      fork: async (entryId, options) => {
        const result = await host.forkSession(entryId, options?.position ?? "before");
        if (!result.cancelled) await this.#withSession(extension, options?.withSession);
        return result;
      },
      navigateTree: (targetId, options) => host.navigateTree(targetId, options),
      switchSession: async (path, options) => {
        const result = await host.switchSession(path);
        if (!result.cancelled) await this.#withSession(extension, options?.withSession);
        return result;
      },
      reload: () => host.reload(),
    };
    return Object.assign(this.context(extension), guardMethods(commands, extension));
  }

  /**
   * pi's `withSession`: runs after the switch, with a context of the new session's instance of
   * the extension that asked (the old one is stale by then).
   */
  async #withSession(extension: LoadedExtension, withSession: WithSession | undefined): Promise<void> {
    if (!withSession) return;
    const host = this.#host;
    const current = this.extensions.find((e) => e.path === extension.path) ?? extension;
    const replaced: Pick<ReplacedSessionContext, "sendMessage" | "sendUserMessage"> = {
      sendMessage: async (message, options) => host.sendMessage(message, options),
      sendUserMessage: async (content, options) => host.sendUserMessage(content, options),
    };
    const ctx: ReplacedSessionContext = Object.assign(this.commandContext(current), guardMethods(replaced, current));
    await withSession(ctx);
  }

  #api(extension: LoadedExtension): ExtensionAPI {
    const host = this.#host;
    const on = (event: string, handler: AnyHandler): (() => void) => {
      if (typeof handler !== "function") throw new TypeError(`pi.on("${event}", handler): handler must be a function`);
      // Filed as a wrapper of its own, so the returned unsubscribe removes this registration only
      // (one function registered twice is two registrations, as in pi).
      // Every wait on it can be let go of (see AwaitedCode), whichever emit calls it.
      const registered: AnyHandler = (e, ctx) => this.awaited.guard(handler(e, ctx), `The ${event} handler of ${extension.path}`);
      const list = extension.handlers.get(event) ?? [];
      list.push(registered);
      extension.handlers.set(event, list);
      return () => {
        const current = extension.handlers.get(event);
        const at = current?.indexOf(registered) ?? -1;
        if (current && at !== -1) current.splice(at, 1);
      };
    };
    const api: ExtensionAPI = {
      on,
      registerCommand: (name, options) => {
        const clean = String(name).replace(/^\//, "");
        if (!/^\S+$/.test(clean)) throw new TypeError(`registerCommand: "${name}" is not a valid command name (no spaces)`);
        if (typeof options?.handler !== "function") throw new TypeError(`registerCommand("${clean}"): options.handler must be a function`);
        extension.commands.set(clean, { name: clean, extension, options });
      },
      registerTool: (tool) => {
        if (!tool || typeof tool.name !== "string") throw new TypeError("registerTool: the tool needs a string name");
        this.tools.set(tool.name, { tool, extensionPath: extension.path });
      },
      registerShortcut: (shortcut) => {
        // Key bindings belong to a terminal UI; kept for listing, never triggered in RPC mode.
        this.shortcuts.push({ shortcut: String(shortcut), extensionPath: extension.path });
      },
      registerFlag: (name, options) => {
        this.flags.set(name, { name, type: options.type, description: options.description, default: options.default, extensionPath: extension.path });
      },
      getFlag: (name) => {
        const flag = this.flags.get(name);
        const given = host.cliFlag(name);
        if (given !== undefined) return flag?.type === "boolean" && typeof given === "string" ? given !== "false" : given;
        return flag?.default;
      },
      // Rendering belongs to a terminal UI: accepted and kept out of the way, as pi's RPC mode does.
      registerMessageRenderer: () => {},
      registerMarkdownTransformer: () => {},
      registerEntryRenderer: () => {},
      registerToolRenderer: () => {},
      sendMessage: (message, options) => host.sendMessage(message, options),
      sendUserMessage: (content, options) => host.sendUserMessage(content, options),
      appendEntry: (customType, data) => {
        const entry = host.session().append({ type: "custom", customType: String(customType), ...(data !== undefined ? { data } : {}) });
        // The newest pi tells the client about the entry.
        host.emitEntryAppended(entry);
      },
      setSessionName: (name) => host.setSessionName(String(name)),
      getSessionName: () => host.session().name,
      setLabel: (entryId, label) => {
        host.session().append({ type: "label", targetId: entryId, label });
      },
      exec: (command, args, options) => exec(command, args, options ?? {}, host.cwd),
      // Read when asked, so it is current: pi's effective settings (global, then the project's when trusted).
      getSettings: () => structuredClone(loadSettings({ cwd: host.cwd, agentDir: agentDir(), projectTrusted: this.projectTrusted }).merged),
      getActiveTools: () => host.activeToolNames(),
      getAllTools: () => host.allTools(),
      setActiveTools: (names) => host.setActiveTools(names.map(String)),
      getCommands: () => this.commandList(),
      setModel: (model) => host.setModel(model),
      getThinkingLevel: () => host.thinkingLevel(),
      setThinkingLevel: (level) => host.setThinkingLevel(level),
      registerProvider: (nameOrProvider: unknown, config?: unknown) => this.#registerProvider(nameOrProvider, config),
      unregisterProvider: (name) => this.#unregisterProvider(String(name)),
      registerMcpServer: (name, config) => this.#mcpServers.register(String(name), config, extension.path),
      unregisterMcpServer: (name) => this.#mcpServers.unregister(String(name), extension.path),
      getMcpServers: () => this.#mcpServers.list(),
      registerVirtualModel: (model) => this.#registerVirtualModel(model, extension.path),
      unregisterVirtualModel: (provider, id) => this.#unregisterVirtualModel(String(provider), String(id)),
      events: this.#events(extension),
    };
    return guardMethods(api, extension);
  }
}

/** A property of an object whose shape is not known (what extension code passed). */
function field(value: object, key: string): unknown {
  return key in value ? Reflect.get(value, key) : undefined;
}

/** pi.events for one extension: a handler's throw or rejection is reported as pi reports it (extension_error, event `events:<channel>`). */
function reportingBus(bus: EventBus, report: (channel: string, error: unknown) => void): EventBus {
  return {
    emit: (channel, data) => bus.emit(channel, data),
    on: (channel, handler) =>
      bus.on(channel, (data) => {
        try {
          const result: unknown = handler(data);
          if (result instanceof Promise) result.catch((error: unknown) => report(channel, error));
        } catch (error) {
          report(channel, error);
        }
      }),
  };
}

function createEventBus(): EventBus {
  const channels = new Map<string, Set<(data: unknown) => void>>();
  return {
    on(channel, handler) {
      const set = channels.get(channel) ?? new Set();
      set.add(handler);
      channels.set(channel, set);
      return () => set.delete(handler);
    },
    emit(channel, data) {
      for (const handler of [...(channels.get(channel) ?? [])]) {
        try {
          handler(data);
        } catch {
          // One listener's failure must not stop the others; the emitter has no one to tell.
        }
      }
    },
  };
}

function readonlyManager(session: Session): ReadonlySessionManager {
  return {
    getSessionId: () => session.id,
    getSessionFile: () => session.file,
    getSessionName: () => session.name,
    getCwd: () => session.header.cwd,
    getEntries: () => session.entries(),
    getBranch: () => session.branch(),
    getLeafId: () => session.leafId,
    getEntry: (id) => session.entry(id),
    getLeafEntry: () => (session.leafId === null ? undefined : session.entry(session.leafId)),
    getLabel: (id) => session.label(id),
    getTree: () => session.tree(),
    getSessionDir: () => (session.file !== undefined ? dirname(session.file) : ""),
    getHeader: () => session.header,
    // The rest of pi's SessionManager that reads (pi hands extensions the manager itself).
    getChildren: (parentId) => session.entries().filter((e) => e.parentId === parentId),
    getEntryCount: () => session.entries().length,
    isPersisted: () => session.file !== undefined,
    buildContextEntries: () => contextEntries(session.branch()),
    buildSessionProjection: () => sessionProjection(session.branch()),
  };
}

/** The new session's manager for ctx.newSession's `setup`: appends advance the leaf, as in pi. */
function setupManager(session: Session): SetupSessionManager {
  return {
    ...readonlyManager(session),
    appendMessage: (message) => session.append({ type: "message", message }).id,
    appendThinkingLevelChange: (thinkingLevel) => session.append({ type: "thinking_level_change", thinkingLevel }).id,
    appendModelChange: (provider, modelId) => session.append({ type: "model_change", provider, modelId }).id,
    appendCustomEntry: (customType, data) => session.append({ type: "custom", customType, ...(data !== undefined ? { data } : {}) }).id,
    appendCustomMessageEntry: (customType, content, display, details) =>
      session.append({ type: "custom_message", customType, content, display, ...(details !== undefined ? { details } : {}) }).id,
    appendSessionInfo: (name) => session.append({ type: "session_info", name }).id,
    appendLabelChange: (targetId, label) => session.setLabel(targetId, label).id,
  };
}
