/**
 * One writer per session file. A parley that writes a session holds `<file>.lock` beside it (the
 * file a symlink leads to, so two links to one file share it): a small file naming the holder's
 * pid and host, created whole (written beside, then hard-linked into place, so nobody reads it
 * half written). A second parley opening the file is refused at once, saying who holds it and
 * what to do. A lock whose holder is gone (a parley killed with SIGKILL) is taken over. Within one
 * process the lock is counted, so the same file may be opened again there (ACP sessions, a
 * switch back to it). pi keeps no such lock: a pi on the same file is not refused, and parley
 * appends after what pi appended (see Session's checks before each write).
 */
import { closeSync, linkSync, lstatSync, openSync, readFileSync, realpathSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";

export class SessionLockedError extends Error {
  override name = "SessionLockedError";
}

interface Owner {
  pid: number;
  host: string;
}

/** Locks this process holds: lock path → how many sessions hold it. */
const held = new Map<string, number>();
let exitHook = false;

/** The file writes would reach: links followed (a missing file: its folder's real path). */
function realTarget(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    try {
      return join(realpathSync(dirname(file)), basename(file));
    } catch {
      return file;
    }
  }
}

function readOwner(path: string): Owner | undefined {
  try {
    const data: unknown = JSON.parse(readFileSync(path, "utf8"));
    if (typeof data !== "object" || data === null) return undefined;
    const { pid, host } = data as Record<string, unknown>;
    return typeof pid === "number" && typeof host === "string" ? { pid, host } : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the holder may still be running: another host's cannot be told, so it counts as alive. */
function alive(owner: Owner): boolean {
  if (owner.host !== hostname()) return true;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Creates the lock file whole; false when one exists. */
function create(path: string): boolean {
  const text = `${JSON.stringify({ pid: process.pid, host: hostname() })}\n`;
  const temp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  const fd = openSync(temp, "wx", 0o644);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temp, path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP") throw error;
    // No hard links here: created exclusively in place (a reader may see it empty for a moment).
    try {
      const direct = openSync(path, "wx", 0o644);
      try {
        writeSync(direct, text);
      } finally {
        closeSync(direct);
      }
      return true;
    } catch (inner) {
      if ((inner as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw inner;
    }
  } finally {
    rmSync(temp, { force: true });
  }
}

/**
 * Takes the lock of the session file `file`; returns its release (to call once). Throws
 * SessionLockedError when another running process holds it. A folder that cannot hold a lock
 * (not made yet, read-only): undefined, and the caller tries again when it writes there.
 */
export function lockSessionFile(file: string): (() => void) | undefined {
  const path = `${realTarget(file)}.lock`;
  const count = held.get(path);
  if (count !== undefined) {
    held.set(path, count + 1);
    return releaser(path);
  }
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      if (create(path)) {
        held.set(path, 1);
        hookExit();
        return releaser(path);
      }
    } catch {
      // A folder that does not exist yet, or where nothing can be created (read-only, not
      // ours): no lock now. Writing the session there fails the same way and is told as a save
      // failure; the lock is tried again with the next save.
      return undefined;
    }
    let ino: number;
    try {
      ino = lstatSync(path).ino;
    } catch {
      continue; // released meanwhile
    }
    const owner = readOwner(path);
    if (owner === undefined || alive(owner)) {
      const who = owner === undefined ? "another process" : `another process (pid ${owner.pid}${owner.host !== hostname() ? ` on ${owner.host}` : ""})`;
      throw new SessionLockedError(
        `the session file ${file} is open in ${who}, which writes to it; a second writer would lose one of the two conversations. End the other one first, or continue in a copy of the session (--fork ${file}). If no parley runs with that pid, remove ${path}.`,
      );
    }
    // Left by a process that is gone: removed, unless someone took it over meanwhile.
    try {
      if (lstatSync(path).ino === ino) unlinkSync(path);
    } catch {
      // gone already
    }
  }
  throw new SessionLockedError(`cannot lock the session file ${file}: ${path} keeps changing`);
}

function releaser(path: string): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const count = held.get(path) ?? 0;
    if (count > 1) {
      held.set(path, count - 1);
      return;
    }
    held.delete(path);
    removeIfOurs(path);
  };
}

function removeIfOurs(path: string): void {
  const owner = readOwner(path);
  if (owner?.pid === process.pid && owner.host === hostname()) rmSync(path, { force: true });
}

function hookExit(): void {
  if (exitHook) return;
  exitHook = true;
  process.on("exit", () => {
    for (const path of held.keys()) removeIfOurs(path);
    held.clear();
  });
}
