/**
 * "Did you mean": the known flag a misspelt one most likely meant. Typing errors are a letter
 * wrong, missing, extra, or two letters swapped (`--mdoe`), so the distance counts a swap as one
 * edit (optimal string alignment); short names allow one edit, longer ones two.
 */

/** Edits (insert, delete, substitute, swap two neighbours) from `a` to `b`. */
function typoDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** The closest of `known` to `name` (flag names without dashes), if it is close enough to be a typo of it. */
export function likelyFlag(name: string, known: readonly string[]): string | undefined {
  const allowed = name.length <= 4 ? 1 : 2;
  let best: { flag: string; distance: number } | undefined;
  for (const flag of known) {
    if (flag === name) continue;
    const distance = typoDistance(name.toLowerCase(), flag.toLowerCase());
    if (distance <= allowed && (best === undefined || distance < best.distance)) best = { flag, distance };
  }
  return best?.flag;
}
