/**
 * Tests wait for events, never for speed; where a wait needs a ceiling (so a broken agent fails
 * rather than hangs), the ceiling is generous and scales: PARLEY_TEST_DEADLINE_SCALE=3 triples
 * every one (a slow or shared machine). Used by every wait of these helpers.
 */
export const DEADLINE_SCALE = ((): number => {
  const scale = Number(process.env["PARLEY_TEST_DEADLINE_SCALE"] ?? "1");
  return Number.isFinite(scale) && scale > 0 ? scale : 1;
})();
/** `ms` scaled by PARLEY_TEST_DEADLINE_SCALE. */
export const deadline = (ms: number): number => Math.round(ms * DEADLINE_SCALE);
/**
 * The ceiling for anything a spawned agent must do: a minute (scaled). A wait given a shorter
 * `ms` still gets this much: a test names what it waits for, never how fast it must come.
 */
export const AGENT_CEILING_MS = 60_000;
