import { realpathSync } from "node:fs";
import { resolve } from "node:path";

// Tail of the pending-operation chain per canonical file path.
const queues = new Map<string, Promise<void>>();

// Synchronous on purpose: an await here would let two calls made in order
// enqueue out of order.
function queueKey(filePath: string): string {
  const abs = resolve(filePath);
  try {
    // Symlink aliases of one file must share a queue.
    return realpathSync(abs);
  } catch {
    return abs; // new file: nothing to canonicalise yet
  }
}

/**
 * Run `fn` after every earlier mutation queued for the same file has settled.
 *
 * Tool calls run in parallel; without this two edits of one file could both
 * read the old content and the later write would silently drop the other
 * change. Different files still proceed in parallel. A failing operation does
 * not block the ones queued after it.
 */
export async function withFileMutationQueue<T>(filePath: string, fn: () => Promise<T>): Promise<T> {
  const key = queueKey(filePath);
  const previous = queues.get(key) ?? Promise.resolve();
  const result = previous.then(() => fn());
  const tail = result.then(
    () => undefined,
    () => undefined,
  );
  queues.set(key, tail);
  try {
    return await result;
  } finally {
    // Drop the entry once nothing newer has been chained, so the map does not grow.
    if (queues.get(key) === tail) queues.delete(key);
  }
}
