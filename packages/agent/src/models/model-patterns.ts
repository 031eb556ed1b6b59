/**
 * Model patterns as pi reads them (`--model`, `--models`, enabledModels): `provider/id` or a bare
 * id (case-insensitive, exact), else a substring of the id or name, preferring an alias
 * (`claude-sonnet-4-5`) over a dated id (`claude-sonnet-4-5-20250929`), else the latest dated id;
 * a `:<thinking>` suffix (`sonnet:high`) sets the thinking level. One deviation from pi, on
 * purpose: when a fuzzy pattern matches models of several providers, providers with credentials
 * are preferred (pi takes the highest id across all providers, which for "opus-4-7" is a Bedrock
 * inference profile even when only ANTHROPIC_API_KEY is set).
 */
import type { Api, Model, ModelThinkingLevel } from "@earendil-works/pi-ai";

export type ThinkingLevel = ModelThinkingLevel;
export const THINKING_LEVEL_NAMES: readonly ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh"];

export interface ModelMatch {
  model: Model<Api>;
  /** From a `:<level>` suffix in the pattern, if any. */
  thinkingLevel?: ThinkingLevel;
  /** Set when the id is not in the catalogue and is used as a custom id of its provider. */
  warning?: string;
}

/** The models a `--models` pattern is matched against: those usable now. */
export interface UsableModels {
  usableModels(): Model<Api>[];
  usable: (model: Model<Api>) => boolean;
}

/**
 * A `--models`/`enabledModels` pattern, matched as pi matches it: against the models that can be
 * used now (with credentials), as a glob over `provider/id` (and id) or as --model takes a pattern.
 */
export function scopedMatch(pattern: string, c: UsableModels): ModelMatch | undefined {
  const text = pattern.trim();
  if (text === "") return undefined;
  const usable = c.usableModels();
  const colon = text.lastIndexOf(":");
  const suffix = colon > 0 ? text.slice(colon + 1) : undefined;
  const level = suffix !== undefined && isThinkingLevel(suffix) ? suffix : undefined;
  const bare = level !== undefined ? text.slice(0, colon) : text;
  if (/[*?]/.test(bare)) {
    const source = bare
      .replace(/[.+^$()|[\]\\{}]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".");
    const regex = new RegExp(`^${source}$`, "i");
    const model = usable.find((m) => regex.test(`${m.provider}/${m.id}`) || regex.test(m.id));
    return model ? { model, ...(level !== undefined ? { thinkingLevel: level } : {}) } : undefined;
  }
  return matchWithThinking(text, usable, c.usable);
}

export function isThinkingLevel(s: string): s is ThinkingLevel {
  return (THINKING_LEVEL_NAMES as readonly string[]).includes(s);
}

export function stripThinkingSuffix(pattern: string): string {
  const colon = pattern.lastIndexOf(":");
  return colon > 0 && isThinkingLevel(pattern.slice(colon + 1)) ? pattern.slice(0, colon) : pattern;
}

/**
 * `provider/id` or a bare id, case-insensitive. An id several providers share (`gpt-5`) is an
 * exact match all the same, as in pi: the first provider with credentials, else the first in
 * catalogue order. Never a longer id (`gpt-5.5-pro`): that would bill the user for another model.
 */
export function exactReference(reference: string, models: Model<Api>[], usable: (model: Model<Api>) => boolean): Model<Api> | undefined {
  const ref = reference.trim().toLowerCase();
  if (ref === "") return undefined;
  const canonical = models.filter((m) => `${m.provider}/${m.id}`.toLowerCase() === ref);
  if (canonical.length > 0) return canonical.find(usable) ?? canonical[0];
  const byId = models.filter((m) => m.id.toLowerCase() === ref);
  return byId.find(usable) ?? byId[0];
}

/** An id without a date suffix ("-20250929") is an alias; "-latest" is one too. */
export function isAlias(id: string): boolean {
  return id.endsWith("-latest") || !/-\d{8}$/.test(id);
}

function matchPattern(pattern: string, models: Model<Api>[], usable: (model: Model<Api>) => boolean): Model<Api> | undefined {
  const exact = exactReference(pattern, models, usable);
  if (exact) return exact;
  const needle = pattern.trim().toLowerCase();
  if (needle === "") return undefined;
  const allHits = models.filter((m) => m.id.toLowerCase().includes(needle) || m.name.toLowerCase().includes(needle));
  // Deviation from pi: when the hits span several providers, those with credentials win
  // ("opus-4-7" with ANTHROPIC_API_KEY set is anthropic's model, not a Bedrock inference profile).
  const withAuth = allHits.filter((m) => usable(m));
  const hits = withAuth.length > 0 ? withAuth : allHits;
  const aliases = hits.filter((m) => isAlias(m.id));
  const pool = aliases.length > 0 ? aliases : hits;
  return [...pool].sort((a, b) => b.id.localeCompare(a.id))[0];
}

/** The whole pattern first; failing that, a trailing `:<thinking level>` is peeled off (strictly). */
export function matchWithThinking(pattern: string, models: Model<Api>[], usable: (model: Model<Api>) => boolean): ModelMatch | undefined {
  const model = matchPattern(pattern, models, usable);
  if (model) return { model };
  const colon = pattern.lastIndexOf(":");
  if (colon <= 0) return undefined;
  const suffix = pattern.slice(colon + 1);
  if (!isThinkingLevel(suffix)) return undefined;
  const inner = matchWithThinking(pattern.slice(0, colon), models, usable);
  return inner ? { model: inner.model, thinkingLevel: suffix } : undefined;
}
