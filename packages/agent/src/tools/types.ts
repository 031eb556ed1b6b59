/**
 * Public shapes of parley's tools.
 *
 * These mirror the shapes pi 1.6 exposes (pi-agent-core's `AgentTool` /
 * `AgentToolResult` and pi-coding-agent's `ToolDefinition`) so that a pi
 * extension's tool objects are structurally assignable to them and vice versa.
 */
import type { ImageContent, JsonValue, TextContent, Tool } from "@earendil-works/pi-ai";
import type { Static, TSchema } from "typebox";

/** What a tool returns: content for the model plus structured details for logs/UI. */
export interface AgentToolResult<TDetails = unknown> {
  content: (TextContent | ImageContent)[];
  details: TDetails;
  /** Hint that the agent may stop after the current tool batch (all results must agree). */
  terminate?: boolean;
  /** Machine-readable result matching the tool's `outputSchema` (what a codemode script gets); not sent to the model. */
  structuredContent?: JsonValue;
  /** An error result returned rather than thrown (it may carry structured content, as bash's does for a failed command). */
  isError?: boolean;
}

/** Streams partial results while a tool runs (e.g. bash output so far). */
export type AgentToolUpdateCallback<TDetails = any> = (partialResult: AgentToolResult<TDetails>) => void;

export type ToolExecutionMode = "sequential" | "parallel";

/**
 * Renderers only matter for pi's terminal UI. parley runs headless and never
 * calls them, so they are typed loosely to accept whatever an extension passes.
 */
export type ToolRenderer = (...args: any[]) => unknown;

/**
 * A tool as registered by an extension (pi's `ToolDefinition`).
 *
 * `TCtx` is the context handed to `execute`; the extension layer instantiates it
 * with its `ExtensionContext`. Built-in tools ignore it, hence the `unknown` default.
 * `TState` is pi's per-row render state; kept only so pi's type arity type-checks.
 */
// biome-ignore lint/correctness/noUnusedVariables: TState keeps pi's type arity, so pi extensions that name it type-check.
export interface ToolDefinition<TParams extends TSchema = TSchema, TDetails = unknown, TState = any, TCtx = unknown> {
  /** Tool name used in LLM tool calls. */
  name: string;
  /** Human-readable label. */
  label: string;
  /** Description sent to the LLM. */
  description: string;
  /** One-line entry for the "Available tools" section of the default system prompt. */
  promptSnippet?: string;
  /** Bullets appended to the system prompt guidelines while the tool is active. */
  promptGuidelines?: string[];
  /** TypeBox schema of the arguments. */
  parameters: TParams;
  /** UI-only framing hint; ignored by parley. */
  renderShell?: "default" | "self";
  /** Compatibility shim run on raw arguments before schema validation. */
  prepareArguments?: (args: unknown) => Static<TParams>;
  executionMode?: ToolExecutionMode;
  /**
   * How the model reaches the tool (newest pi): `direct` (default) and `model-only` are declared
   * while active; `codemode` and `deferred` are not activated on registration but tools can call
   * them through `ctx.executeTool`; `hidden` is unreachable. `model-only` tools are never callable.
   */
  exposure?: "direct" | "model-only" | "codemode" | "deferred" | "hidden";
  /** Whether registering the tool activates it (default: true for direct and model-only). */
  defaultActive?: boolean;
  /** The group a tool belongs to (an MCP server): pi.getAllTools(), tool_search and codemode show it. */
  namespace?: ToolNamespace;
  /** JSON Schema of `structuredContent`: what a codemode script's call of the tool resolves to. */
  outputSchema?: object;
  /** Grammar- or strict-schema-constrained arguments, for providers that support them (pi-ai's). */
  constrainedSampling?: Tool["constrainedSampling"];
  /**
   * While the tool is active, called whenever the active tools change (newest pi): it may replace
   * declared tools' descriptions and leave declarations out of requests (the codemode tool does).
   */
  prepareLoadout?: (loadout: ToolLoadout) => ToolLoadoutChanges | undefined;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
  reachesTools?: (input: Record<string, unknown>) => "all" | readonly string[];
  /** Run the tool. Throw to report an error to the model. */
  execute(
    toolCallId: string,
    params: Static<TParams>,
    signal: AbortSignal | undefined,
    onUpdate: AgentToolUpdateCallback<TDetails> | undefined,
    ctx: TCtx,
  ): Promise<AgentToolResult<TDetails>>;
  /** Ignored by parley (terminal UI only). */
  renderCall?: ToolRenderer;
  /** Ignored by parley (terminal UI only). */
  renderResult?: ToolRenderer;
}

/** The runtime-facing tool (pi-agent-core's `AgentTool`): no extension context. */
export interface AgentTool<TParams extends TSchema = TSchema, TDetails = any> {
  name: string;
  label: string;
  description: string;
  parameters: TParams;
  prepareArguments?: (args: unknown) => Static<TParams>;
  executionMode?: ToolExecutionMode;
  /** JSON Schema of `structuredContent` (pi-agent-core 1.6). */
  outputSchema?: object;
  /** Grammar- or strict-schema-constrained arguments (pi-ai 1.6's tools). */
  constrainedSampling?: Tool["constrainedSampling"];
  execute: (
    toolCallId: string,
    params: Static<TParams>,
    signal?: AbortSignal,
    onUpdate?: AgentToolUpdateCallback<TDetails>,
  ) => Promise<AgentToolResult<TDetails>>;
}

export interface ToolNamespace {
  name: string;
  aliases?: readonly string[];
  description?: string;
  instructions?: string;
}

/** A tool as a loadout hook sees it: its declaration. */
export interface LoadoutTool {
  name: string;
  description: string;
  parameters: unknown;
  outputSchema?: object | undefined;
}

/** What a `prepareLoadout` hook is shown (pi 1.6's ToolLoadout). */
export interface ToolLoadout {
  /** The tools about to be declared. */
  declared: readonly LoadoutTool[];
  /** The tools `ctx.executeTool` can reach with this active set. */
  callable: readonly LoadoutTool[];
  registered: readonly LoadoutTool[];
  getExposure(name: string): "direct" | "model-only" | "codemode" | "deferred" | "hidden";
  getNamespace(name: string): ToolNamespace | undefined;
  getPromptGuidelines(name: string): readonly string[];
}

export interface ToolLoadoutChanges {
  descriptions?: Record<string, string>;
  hiddenDeclarations?: readonly string[];
}

export type ToolName = "read" | "bash" | "edit" | "write" | "grep" | "find" | "ls";
