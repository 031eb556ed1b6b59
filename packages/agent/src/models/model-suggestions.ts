/** Close matches for a name that is not known: typos of a provider, or of a model id or part of one. */
import type { Api, Model } from "@earendil-works/pi-ai";
import { distance as levenshtein } from "fastest-levenshtein";
import { isAlias } from "./model-patterns.js";

/** Smallest edit distance between `needle` and any same-length window of `hay` (fuzzy substring). */
function windowDistance(needle: string, hay: string): number {
  if (hay.length <= needle.length) return levenshtein(needle, hay);
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i + needle.length <= hay.length; i++) {
    best = Math.min(best, levenshtein(needle, hay.slice(i, i + needle.length)));
    if (best === 0) break;
  }
  return best;
}

/** Names within a small edit distance of `input`, closest first. */
export function closest(input: string, names: string[], max: number): string[] {
  const needle = input.toLowerCase();
  const limit = Math.max(2, Math.floor(needle.length * 0.4));
  return names
    .map((name) => ({ name, d: Math.min(levenshtein(needle, name.toLowerCase()), windowDistance(needle, name.toLowerCase()) + 1) }))
    .filter((x) => x.d <= limit)
    .sort((a, b) => a.d - b.d || a.name.localeCompare(b.name))
    .slice(0, max)
    .map((x) => x.name);
}

/** `provider/id` references close to a pattern: typos of a whole id, or of a part of one. */
export function suggestModels(pattern: string, models: Model<Api>[], max: number): string[] {
  const needle = pattern.trim().toLowerCase();
  if (needle === "") return [];
  const wholeLimit = Math.max(2, Math.floor(needle.length * 0.4));
  const partLimit = Math.max(1, Math.floor(needle.length * 0.25));
  const scored: { ref: string; score: number; alias: boolean }[] = [];
  for (const m of models) {
    const id = m.id.toLowerCase();
    const ref = `${m.provider}/${m.id}`;
    const whole = Math.min(levenshtein(needle, id), levenshtein(needle, ref.toLowerCase()));
    const part = needle.length >= 3 ? windowDistance(needle, id) : Number.POSITIVE_INFINITY;
    let score = Number.POSITIVE_INFINITY;
    if (whole <= wholeLimit) score = whole;
    if (part <= partLimit) score = Math.min(score, part + 0.5);
    if (Number.isFinite(score)) scored.push({ ref, score, alias: isAlias(m.id) });
  }
  scored.sort((a, b) => a.score - b.score || Number(b.alias) - Number(a.alias) || a.ref.localeCompare(b.ref));
  return [...new Set(scored.map((s) => s.ref))].slice(0, max);
}
