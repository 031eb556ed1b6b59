/**
 * Waits for start-up work done by third-party code (loading an extension module, running its
 * factory), naming it on the log every `everyMs` while it has not settled. The notice's timer also
 * keeps the process alive: before input is read nothing else does, so a promise that never
 * settles (a module's top-level await, a factory's await) would otherwise let Node's event loop
 * run empty and exit 0 without a word.
 */
export async function whileSayingSlow<T>(work: Promise<T>, what: string, log: (message: string) => void, everyMs = 10_000): Promise<T> {
  const started = Date.now();
  const notice = setInterval(() => {
    log(`${what} has not finished after ${Math.round((Date.now() - started) / 1000)} s; commands wait until it does`);
  }, everyMs);
  try {
    return await work;
  } finally {
    clearInterval(notice);
  }
}
