/**
 * Which tools a session starts with, as the newest pi chooses them: settings' `defaultTools`
 * (plain names replace the built-in defaults; `+name`/`-name` entries add and remove), `--tools`
 * (an allowlist of names and `*` patterns, or only `+name`/`-name` entries applied to the
 * defaults), `--exclude-tools` (names and patterns) and `--no-tools`/`--no-builtin-tools`.
 */
import { codingToolNames } from "../tools/names.js";
import type { ToolPolicy } from "./agent-config.js";

/** A `+name` or `-name` entry: it changes the default selection instead of replacing it. */
export const isToolModifier = (entry: string): boolean => entry.startsWith("+") || entry.startsWith("-");

/** What is wrong with a `--tools` list, as pi words it; undefined when it is valid. */
export function toolListError(entries: readonly string[]): string | undefined {
  const modifiers = entries.filter(isToolModifier);
  if (modifiers.length === 0) return undefined;
  if (modifiers.length < entries.length) return "tool names cannot be mixed with +name or -name entries";
  const pattern = modifiers.find((entry) => entry.includes("*"));
  return pattern === undefined ? undefined : `+name and -name entries take exact tool names, not patterns: ${pattern}`;
}

/** `base` with the `+name` and `-name` entries applied in order (other entries are ignored). */
export function applyToolModifiers(base: readonly string[], entries: readonly string[]): string[] {
  const tools = [...base];
  for (const entry of entries) {
    if (!isToolModifier(entry)) continue;
    const name = entry.slice(1);
    const index = tools.indexOf(name);
    if (entry.startsWith("+") && index === -1 && name) tools.push(name);
    else if (entry.startsWith("-") && index !== -1) tools.splice(index, 1);
  }
  return tools;
}

/** Whether a tool's name is one of `entries`, each an exact name or a pattern where `*` is any text. */
export function toolNameMatcher(entries: readonly string[]): (name: string) => boolean {
  const names = new Set(entries.filter((entry) => !entry.includes("*")));
  const patterns = entries.filter((entry) => entry.includes("*")).map((pattern) => new RegExp(`^${pattern.split("*").map(escapeRegExp).join(".*")}$`));
  return (name) => names.has(name) || patterns.some((pattern) => pattern.test(name));
}

const escapeRegExp = (text: string): string => text.replace(/[.+?^${}()|[\]\\]/g, "\\$&");

/** The project's `defaultTools` over the user's: a list of plain names replaces, a list of only modifiers adds to it. */
export function mergeDefaultTools(base: string[] | undefined, override: string[] | undefined): string[] | undefined {
  if (override === undefined) return base;
  if (base === undefined || !override.every(isToolModifier)) return override;
  return [...base, ...override];
}

/** A merged `defaultTools` list as tool names: its plain names (else pi's defaults), then its modifiers. */
export function resolveDefaultTools(entries: readonly string[]): string[] {
  const plain = entries.filter((entry) => !isToolModifier(entry));
  return applyToolModifiers(plain.length > 0 || entries.length === 0 ? plain : codingToolNames, entries);
}

export interface ToolSelection {
  /** The tools active at the start (names; some may be registered later, by extensions). */
  initial: string[];
  /** With an allowlist: every tool it names or matches starts active, and no other tool is activated on registration. */
  allowed?: (name: string) => boolean;
  /**
   * An allowlist none of whose entries starts with `mcp__` keeps MCP tools registered (newest pi):
   * they are not declared at the start, but tool_search (or codemode) can still reach them.
   */
  keepsMcp?: boolean;
  /** Never active at the start. */
  excluded: (name: string) => boolean;
  /** The tools settings' `defaultTools` (or pi's defaults) select, with `--tools` +name/-name applied; empty when --tools or --no-tools replace them. */
  fromDefaults: string[];
  /**
   * With the default selection (no --tools list but +name/-name entries, no --no-tools), a resumed
   * session takes up the tools its transcript recorded, with these `--tools` entries applied
   * (pi 1.6); undefined when the command line chose the tools.
   */
  restoreModifiers?: string[];
}

/** The newest pi's start-up selection (createAgentSession), from the command line and settings. */
export function selectTools(policy: ToolPolicy): ToolSelection {
  const defaults = policy.none !== undefined ? [] : (policy.defaults ?? [...codingToolNames]);
  const modifiers = policy.allow?.some(isToolModifier) ? policy.allow : undefined;
  const selected = modifiers ? applyToolModifiers(defaults, modifiers) : policy.allow;
  const allowList = modifiers ? (policy.none === "all" ? selected : undefined) : (policy.allow ?? (policy.none === "all" ? [] : undefined));
  const excluded = policy.exclude ? toolNameMatcher(policy.exclude) : () => false;
  const initial = (selected ?? defaults).filter((name) => !name.includes("*") && !excluded(name));
  // pi's "uses default tools": no --tools list other than +name/-name entries, and no --no-tools.
  const usesDefaults = (policy.allow === undefined || modifiers !== undefined) && policy.none === undefined;
  const fromDefaults = usesDefaults ? (selected ?? defaults) : [];
  const keepsMcp = allowList !== undefined && allowList.length > 0 && !allowList.some((entry) => entry.startsWith("mcp__"));
  return {
    initial,
    ...(allowList !== undefined ? { allowed: toolNameMatcher(allowList), keepsMcp } : {}),
    excluded,
    fromDefaults,
    ...(usesDefaults ? { restoreModifiers: modifiers ?? [] } : {}),
  };
}
