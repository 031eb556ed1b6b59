/**
 * A session runs in the folder its header records, as in pi. When that folder no longer exists,
 * pi refuses the session (RPC mode cannot ask where to continue instead): the same text here, so a
 * client or script that matches on pi's words keeps working.
 */
import { existsSync } from "node:fs";
import type { Session } from "./session.js";

export class MissingSessionCwdError extends Error {
  constructor(
    readonly sessionCwd: string,
    readonly sessionFile: string,
    readonly fallbackCwd: string,
  ) {
    super(`Stored session working directory does not exist: ${sessionCwd}\nSession file: ${sessionFile}\nCurrent working directory: ${fallbackCwd}`);
    this.name = "MissingSessionCwdError";
  }
}

/** The folder a session runs in: the one its header records, else (a file without one) `current`, as pi's SessionManager.open. */
export function sessionFolder(session: Session, current: string): string {
  return session.cwd || current;
}

/** Throws MissingSessionCwdError when a stored session's recorded folder is gone; `fallbackCwd` is the one pi names as current. */
export function assertSessionCwdExists(session: Session, fallbackCwd: string): void {
  const file = session.file;
  if (file === undefined || session.cwd === "" || existsSync(session.cwd)) return;
  throw new MissingSessionCwdError(session.cwd, file, fallbackCwd);
}
