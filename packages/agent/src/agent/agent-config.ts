/**
 * What the agent takes from pi's settings and flags at start-up: queue modes, compaction and
 * retry settings, the shell, the system prompt's sources, which tools start enabled, the options
 * of every provider request, images and branch summaries.
 * Absent fields keep pi's defaults.
 */
import type { ThinkingBudgets, Transport } from "@earendil-works/pi-ai";
import type { QueueMode, ThinkingLevel } from "@parley/protocol";
import type { CompactionSettings } from "./compaction-cut.js";

export interface ToolPolicy {
  /** --tools: names and `*` patterns that alone start enabled (built-in or extension), or only `+name`/`-name` entries changing the defaults. */
  allow?: string[] | undefined;
  /** --exclude-tools: names and `*` patterns never enabled at start. */
  exclude?: string[] | undefined;
  /** settings.json `defaultTools`, resolved to names: the tools a session starts with instead of read, bash, edit, write. */
  defaults?: string[] | undefined;
  /** --no-tools ("all") or --no-builtin-tools ("builtin"). */
  none?: "all" | "builtin" | undefined;
}

export interface PromptSources {
  /** SYSTEM.md or --system-prompt (text, or the contents of the file it names): replaces the built-in text. */
  custom?: string | undefined;
  /** APPEND_SYSTEM.md or each --append-system-prompt, in order. */
  append?: string[] | undefined;
  /** AGENTS.md / CLAUDE.md files, global first, then from the outermost folder in; undefined: from cwd up. */
  contextFiles?: { path: string; content: string }[] | undefined;
}

/**
 * What reaches pi-ai's stream options on every model call of the loop, as pi passes them:
 * `retry.provider`, `httpIdleTimeoutMs` (the timeout unless `retry.provider.timeoutMs` is set),
 * `transport` and `thinkingBudgets`.
 */
export interface ProviderRequestConfig {
  timeoutMs?: number | undefined;
  maxRetries?: number | undefined;
  maxRetryDelayMs?: number | undefined;
  transport?: Transport | undefined;
  thinkingBudgets?: ThinkingBudgets | undefined;
}

export interface AgentConfig {
  steeringMode?: QueueMode | undefined;
  followUpMode?: QueueMode | undefined;
  compaction?: (Partial<CompactionSettings> & { modelOverrides?: Record<string, Partial<Omit<CompactionSettings, "enabled">>> | undefined }) | undefined;
  retry?:
    | { enabled?: boolean | undefined; maxRetries?: number | undefined; baseDelayMs?: number | undefined; maxAgentDelayMs?: number | undefined }
    | undefined;
  shellPath?: string | undefined;
  /** settings.json `shellCommandPrefix`: put on its own line before every command (bash tool and `bash` command), as in pi. */
  shellCommandPrefix?: string | undefined;
  prompt?: PromptSources | undefined;
  tools?: ToolPolicy | undefined;
  provider?: ProviderRequestConfig | undefined;
  /** settings.json `images.autoResize` (default true): the read tool scales down images over the providers' limits. */
  autoResizeImages?: boolean | undefined;
  /** settings.json `images.blockImages`: images never reach the model (each becomes a short text), as in pi. */
  blockImages?: boolean | undefined;
  /** settings.json `branchSummary.reserveTokens`: the part of the context window a branch summary leaves free. */
  branchSummaryReserveTokens?: number | undefined;
  /** settings.json `cacheWarming` (global only): "idle" (pi's default), "streaming" or "off". */
  cacheWarming?: "off" | "streaming" | "idle" | undefined;
  /** settings.json `defaultThinkingLevel`: the level a model switch takes (unless the model has its own). */
  defaultThinkingLevel?: ThinkingLevel | undefined;
  /** settings.json `modelThinkingLevels` (the newest pi's): a model's own default level, keyed "provider/modelId". */
  modelThinkingLevels?: Readonly<Record<string, ThinkingLevel>> | undefined;
}
