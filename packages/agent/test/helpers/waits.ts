/**
 * The two waits a test may need besides waiting for a record (spawn.ts's waitFor/until):
 * - `poll`: for a state no event announces (a paused stream's buffer, a file's size).
 * - `quietFor`: to show that something does NOT happen. Nothing to wait for exists, so time must
 *   pass; keep it generous. A slow machine only makes such a check weaker, never a false failure.
 */
import { AGENT_CEILING_MS, deadline } from "./deadline.js";

const tick = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `condition()` holds (checked every 50 ms); rejects after the (scaled) ceiling. */
export async function poll(condition: () => boolean, what: string, ms = AGENT_CEILING_MS): Promise<void> {
  const end = Date.now() + deadline(ms);
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await tick(50);
  }
}

/**
 * Lets `ms` (scaled) pass so that a test can then check that something did not happen meanwhile
 * (no record, no frame, no answer). The caller says in a comment what it is watching for.
 */
export const quietFor = (ms: number): Promise<void> => tick(deadline(ms));
