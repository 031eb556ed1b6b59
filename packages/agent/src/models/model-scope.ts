/**
 * pi's model scope: `--models` (or settings.json `enabledModels`) limits `cycle_model` to these
 * models, and extensions see them as `ctx.scopedModels`. Each pattern is matched as pi matches
 * it, against the models that have credentials now: a glob (`*`, `?`, `[…]`) over `provider/id`
 * or the id selects every model it matches; anything else is a `--model` pattern and selects one.
 * A `:<thinking level>` suffix gives the level the model is used with.
 */
import type { Api, Model } from "@earendil-works/pi-ai";
import { THINKING_LEVEL_NAMES, type ThinkingLevel } from "./model-patterns.js";
import type { ModelResolution } from "./resolve.js";

export interface ScopedModelChoice {
  model: Model<Api>;
  /** Set when the pattern named one; otherwise a switch keeps the current level. */
  thinkingLevel?: ThinkingLevel;
}

export interface ModelScope {
  models: ScopedModelChoice[];
  /** One line each for patterns that select nothing. */
  warnings: string[];
}

const isLevel = (s: string): s is ThinkingLevel => (THINKING_LEVEL_NAMES as readonly string[]).includes(s);

/** A shell-style glob as a case-insensitive regular expression over the whole text. */
function globRegex(glob: string): RegExp {
  let source = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "*") source += ".*";
    else if (c === "?") source += ".";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 2);
      if (end === -1) source += "\\[";
      else {
        const body = glob.slice(i + 1, end).replace(/\\/g, "\\\\");
        source += `[${body.startsWith("!") ? `^${body.slice(1)}` : body}]`;
        i = end;
      }
    } else source += c.replace(/[.+^${}()|\\/]/g, "\\$&");
  }
  return new RegExp(`^${source}$`, "i");
}

const same = (a: Model<Api>, b: Model<Api>): boolean => a.provider === b.provider && a.id === b.id;

/** The scope for these patterns; the models must be known (extension providers registered, catalogue loaded). */
export function resolveModelScope(patterns: readonly string[], models: Pick<ModelResolution, "availableModels" | "hasAuth" | "matchModel">): ModelScope {
  const usable = models.availableModels().filter((m) => models.hasAuth(m));
  const scope: ScopedModelChoice[] = [];
  const warnings: string[] = [];
  const add = (model: Model<Api>, thinkingLevel: ThinkingLevel | undefined): void => {
    if (!scope.some((s) => same(s.model, model))) scope.push({ model, ...(thinkingLevel !== undefined ? { thinkingLevel } : {}) });
  };
  for (const raw of patterns) {
    const pattern = raw.trim();
    if (pattern === "") continue;
    if (/[*?[]/.test(pattern)) {
      const colon = pattern.lastIndexOf(":");
      const suffix = colon !== -1 ? pattern.slice(colon + 1) : "";
      const level = isLevel(suffix) ? suffix : undefined;
      const regex = globRegex(level !== undefined ? pattern.slice(0, colon) : pattern);
      const hits = usable.filter((m) => regex.test(`${m.provider}/${m.id}`) || regex.test(m.id));
      if (hits.length === 0) warnings.push(`No models match pattern "${raw}"`);
      for (const m of hits) add(m, level);
      continue;
    }
    let found: { model: Model<Api>; thinkingLevel?: ThinkingLevel } | undefined;
    try {
      const match = models.matchModel(pattern);
      // A custom id on a known provider is not a model the user has: pi's scope skips it.
      if (match.warning === undefined) found = match;
    } catch {
      found = undefined;
    }
    const model = found ? usable.find((m) => same(m, found.model)) : undefined;
    if (!model || !found) {
      warnings.push(`No models match pattern "${raw}"`);
      continue;
    }
    add(model, found.thinkingLevel);
  }
  return { models: scope, warnings };
}
