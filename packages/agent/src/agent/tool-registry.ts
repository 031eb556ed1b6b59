/**
 * The tools the model can call: parley's built-ins plus those extensions register (an extension
 * tool with a built-in's name replaces it). New extension tools start active, as in pi.
 */
import type { AgentTool } from "@earendil-works/pi-agent-core";
import type { ToolDefinition, ToolName, ToolsOptions } from "../tools/index.js";
import type { ToolLoadout } from "../tools/types.js";
import { allToolNames } from "../tools/names.js";
import type { ExtensionToolContext } from "../extensions/types.js";
import type { ToolPolicy } from "./agent-config.js";
import { isMcpToolName } from "../mcp/names.js";
import { applyToolModifiers, selectTools, type ToolSelection } from "./tool-selection.js";
import { requireToolsModule, type ToolsModule } from "../tools/tools-require.js";

type AnyDefinition = ToolDefinition<any, any, any, any>;

/** The context one call of a tool gets: its extension's, plus the calling id and signal for executeTool. */
export type ToolContextFactory = (extensionPath: string | undefined, toolCallId: string, signal: AbortSignal | undefined) => ExtensionToolContext;

const exposureOf = (definition: AnyDefinition) => definition.exposure ?? "direct";
const builtInNames: ReadonlySet<string> = allToolNames;

export interface RegisteredToolInfo {
  definition: AnyDefinition;
  /** The extension that registered it; undefined for built-ins. */
  extensionPath?: string | undefined;
}

export class ToolRegistry {
  #cwd: string;
  readonly #builtIns = new Map<string, AnyDefinition>();
  /** Whether the built-ins' definitions have been made (some may not be registered at all). */
  #made = false;
  #extensionTools = new Map<string, RegisteredToolInfo>();
  #active: string[];
  readonly #context: ToolContextFactory;
  /** What the start-up selection (tool-selection.ts) says of tools as they appear. */
  #selection: ToolSelection;
  /** Options for the built-ins (settings' shellPath and shellCommandPrefix reach the bash tool). */
  #toolOptions: ToolsOptions;

  /** `policy`: pi's --tools / --exclude-tools / --no-tools / --no-builtin-tools and settings' defaultTools, applied to tools as they appear. */
  constructor(cwd: string, context: ToolContextFactory, policy: ToolPolicy = {}, toolOptions: ToolsOptions = {}) {
    this.#cwd = cwd;
    this.#toolOptions = toolOptions;
    this.#context = context;
    this.#selection = selectTools(policy);
    this.#active = this.#startingNames();
  }

  /** The built-in and named tools a session starts with (extension tools join as they are registered). */
  #startingNames(): string[] {
    const { initial, allowed, excluded } = this.#selection;
    // A built-in the allowlist names or matches starts active too; a name of neither kind may come from an extension.
    const matched = allowed ? [...allToolNames].filter((n) => allowed(n) && !excluded(n)) : [];
    return [...new Set([...initial, ...matched])];
  }

  /**
   * A new session (new, switch, fork, or the start once the project's settings apply): pi builds
   * a fresh runtime for it, so the tools start from the start-up selection again, whatever the last
   * session activated; the current extension tools are taken as newly registered.
   */
  restart(): void {
    this.#active = this.#startingNames();
    this.#extensionTools = new Map();
  }

  /**
   * Settings read again (ctx.reload(), a switch, the project trusted): the selection later
   * sessions start from. As pi's reload, the active set stays as it is, plus the tools newly added
   * to `defaultTools` (when the defaults are in use at all) and, with an allowlist, every tool it
   * admits (pi activates those whenever it refreshes its registry; extension tools come back as
   * newly registered).
   */
  setPolicy(policy: ToolPolicy): void {
    const before = new Set(this.#selection.fromDefaults);
    this.#selection = selectTools(policy);
    const added = this.#selection.fromDefaults.filter((name) => !before.has(name));
    const admitted = this.#selection.allowed ? this.#startingNames() : [];
    for (const name of [...added, ...admitted]) if (this.#registrable(name) && !this.#active.includes(name)) this.#active.push(name);
  }

  /**
   * Whether the tool is registered at all: as in the newest pi, `--tools` (an allowlist, `--no-tools`
   * an empty one) and `--exclude-tools` keep a tool out of the registry, so neither the model, nor
   * `pi.getAllTools()`, nor `pi.setActiveTools()` can reach it.
   */
  #registrable(name: string): boolean {
    const { allowed, excluded, keepsMcp } = this.#selection;
    return !excluded(name) && (allowed === undefined || allowed(name) || (keepsMcp === true && isMcpToolName(name)));
  }

  /**
   * Whether the tool may be active (declared): an MCP tool the allowlist keeps without naming it
   * only through tool_search, so never when `direct` nor without tool_search (newest pi).
   */
  #activatable(name: string): boolean {
    const { allowed } = this.#selection;
    if (allowed === undefined || allowed(name) || !isMcpToolName(name)) return true;
    const definition = this.#extensionTools.get(name)?.definition;
    return definition !== undefined && exposureOf(definition) !== "direct" && this.#extensionTools.has("tool_search");
  }

  /**
   * Whether a tool that has just appeared starts enabled: the allowlist (--tools) names or matches
   * it; else the start-up selection names it, or it is a direct or model-only tool not registered
   * with `defaultActive: false` (newest pi).
   */
  #startsActive(name: string, definition: AnyDefinition): boolean {
    if (!this.#registrable(name)) return false;
    if (this.#selection.allowed) return this.#selection.allowed(name);
    if (this.#selection.initial.includes(name)) return true;
    return this.#activatedOnRegistration(definition);
  }

  /**
   * Creates the built-in tools' definitions (their schemas load TypeBox, so this waits until the
   * loop or an extension needs them). Until then the built-ins are known by name only.
   */
  async load(): Promise<void> {
    if (this.loadNow()) return;
    this.#create(await import("../tools/index.js"));
  }

  /**
   * The same, synchronously, where the tools module can be loaded so (the CLI bundle, see
   * requireToolsModule): what `all()` needs for an extension's synchronous `pi.getAllTools()` or
   * `ctx.getSystemPrompt()`. Returns whether the definitions exist.
   */
  loadNow(): boolean {
    if (this.#made) return true;
    const tools = requireToolsModule();
    if (tools !== undefined) this.#create(tools);
    return tools !== undefined;
  }

  #create({ createToolDefinition }: ToolsModule): void {
    if (this.#made) return;
    this.#made = true;
    for (const name of allToolNames) {
      if (this.#registrable(name)) this.#builtIns.set(name, createToolDefinition(name as ToolName, this.#cwd, this.#toolOptions));
    }
  }

  /** New options for the built-ins (settings that apply once the project is trusted); made again if they exist. */
  async setBuiltInOptions(options: ToolsOptions): Promise<void> {
    this.#toolOptions = options;
    await this.#remake();
  }

  /** The built-ins work in another folder (a switch to another folder's session); made again if they exist. */
  async moveTo(cwd: string): Promise<void> {
    this.#cwd = cwd;
    await this.#remake();
  }

  /** The built-ins made again with the current folder and options, if they were made at all. */
  async #remake(): Promise<void> {
    if (!this.#made) return;
    this.#made = false;
    this.#builtIns.clear();
    await this.load();
  }

  /** Takes the runtime's current extension tools; ones not seen before become active. */
  sync(extensionTools: Map<string, { tool: { name: string; [key: string]: unknown }; extensionPath: string }>): void {
    const next = new Map<string, RegisteredToolInfo>();
    for (const [name, { tool, extensionPath }] of extensionTools) {
      if (this.#registrable(name)) next.set(name, { definition: tool as unknown as AnyDefinition, extensionPath });
    }
    for (const [name, { definition }] of next)
      if (!this.#extensionTools.has(name) && !this.#active.includes(name) && this.#startsActive(name, definition)) this.#active.push(name);
    this.#extensionTools = next;
  }

  all(): RegisteredToolInfo[] {
    this.loadNow();
    const merged = new Map<string, RegisteredToolInfo>();
    for (const [name, definition] of this.#builtIns) merged.set(name, { definition });
    for (const [name, info] of this.#extensionTools) merged.set(name, info);
    return [...merged.values()];
  }

  /** The built-ins registered here, by name (known before their definitions are made). */
  #builtInNames(): string[] {
    return [...allToolNames].filter((n) => this.#registrable(n));
  }

  /** A hidden tool (newest pi's exposure "hidden") is never active, even when named. */
  activeNames(): string[] {
    const known = new Set<string>([...this.#builtInNames(), ...this.#extensionTools.keys()]);
    const hidden = (n: string) => {
      const info = this.#extensionTools.get(n);
      return info !== undefined && exposureOf(info.definition) === "hidden";
    };
    return this.#active.filter((n) => known.has(n) && !hidden(n));
  }

  /**
   * The loadout a session's transcript records, taken up as pi 1.6 does when a stored session is
   * opened (`atStart`: only with the default selection, `--tools` +name/-name applied) or the tree
   * navigated: the tools its system messages declare now, plus the extension tools it never
   * mentioned (registered since: they start as newly registered ones). A recorded tool not
   * registered yet (an MCP server's) becomes active when it registers.
   */
  restore(recorded: readonly string[], mentioned: ReadonlySet<string>, atStart: boolean): void {
    const modifiers = atStart ? this.#selection.restoreModifiers : [];
    if (modifiers === undefined) return;
    const fresh = [...this.#extensionTools]
      .filter(([name, { definition }]) => !mentioned.has(name) && !builtInNames.has(name) && this.#activatedOnRegistration(definition))
      .map(([name]) => name);
    this.setActive(applyToolModifiers([...recorded, ...fresh], modifiers).filter((name) => this.#registrable(name)));
  }

  /** Whether registering the tool declares it to the model (newest pi): direct or model-only, not `defaultActive: false`. */
  #activatedOnRegistration(definition: AnyDefinition): boolean {
    const exposure = exposureOf(definition);
    return (exposure === "direct" || exposure === "model-only") && definition.defaultActive !== false;
  }

  /** Unknown names are ignored (pi does the same): a typo must not disable every tool. */
  setActive(names: string[]): void {
    this.#active = [...new Set(names)].filter((name) => this.#activatable(name));
  }

  /**
   * The active tools as the agent loop runs them (a hidden tool stays out even when named active),
   * with what active tools' `prepareLoadout` hooks make of their declarations (newest pi): new
   * descriptions, and names to leave out of requests (`hiddenDeclarations()`).
   */
  activeTools(): AgentTool<any, any>[] {
    const active = new Set(this.activeNames());
    const infos = this.all().filter((t) => active.has(t.definition.name));
    const tools = infos.map((info) => this.#agentTool(info));
    this.#hidden = new Set();
    const hooks = infos.filter((info) => info.definition.prepareLoadout !== undefined);
    if (hooks.length === 0) return tools;
    const definitionOf = (name: string) => this.all().find((info) => info.definition.name === name)?.definition;
    const loadout: ToolLoadout = {
      declared: tools,
      callable: this.callableTools(),
      registered: this.all().map((info) => this.#agentTool(info)),
      getExposure: (name) => {
        const definition = definitionOf(name);
        return definition ? exposureOf(definition) : "direct";
      },
      getNamespace: (name) => definitionOf(name)?.namespace,
      getPromptGuidelines: (name) => definitionOf(name)?.promptGuidelines ?? [],
    };
    const descriptions = new Map<string, string>();
    for (const { definition, extensionPath } of hooks) {
      try {
        const changes = definition.prepareLoadout?.(loadout);
        for (const [name, description] of Object.entries(changes?.descriptions ?? {})) descriptions.set(name, description);
        for (const name of changes?.hiddenDeclarations ?? []) this.#hidden.add(name);
      } catch (error) {
        this.onLoadoutError?.(extensionPath, error);
      }
    }
    return tools.map((tool) => {
      const description = descriptions.get(tool.name);
      return description === undefined ? tool : { ...tool, description };
    });
  }

  /** Declared tools the last `activeTools()` says to leave out of requests (they still run). */
  hiddenDeclarations(): ReadonlySet<string> {
    return this.#hidden;
  }

  #hidden = new Set<string>();
  /** Told of a `prepareLoadout` hook that threw (pi reports it as an extension error). */
  onLoadoutError: ((extensionPath: string | undefined, error: unknown) => void) | undefined;

  /**
   * The tools a tool may call through `ctx.executeTool` (its `ctx.tools`), as the newest pi
   * chooses them: active direct tools, and codemode or deferred tools whether active or not.
   */
  callableTools(): AgentTool<any, any>[] {
    const active = new Set(this.activeNames());
    return this.all()
      .filter(({ definition }) => {
        const exposure = exposureOf(definition);
        return exposure === "codemode" || exposure === "deferred" || (exposure === "direct" && active.has(definition.name));
      })
      .map((info) => this.#agentTool(info));
  }

  /** A definition as pi-agent-core's AgentTool; each call gets its extension's tool context. */
  #agentTool({ definition, extensionPath }: RegisteredToolInfo): AgentTool<any, any> {
    return {
      name: definition.name,
      label: definition.label ?? definition.name,
      description: definition.description ?? "",
      parameters: definition.parameters,
      ...(definition.prepareArguments ? { prepareArguments: definition.prepareArguments } : {}),
      ...(definition.executionMode ? { executionMode: definition.executionMode } : {}),
      ...(definition.outputSchema ? { outputSchema: definition.outputSchema } : {}),
      ...(definition.constrainedSampling !== undefined ? { constrainedSampling: definition.constrainedSampling } : {}),
      // A caller may pass its own context (as pi's wrapped tools accept); otherwise the tool's extension's.
      execute: (id, params, signal, onUpdate, ctx?: unknown) =>
        definition.execute(id, params, signal, onUpdate, ctx ?? this.#context(extensionPath, id, signal)),
    };
  }

  get cwd(): string {
    return this.#cwd;
  }
}
