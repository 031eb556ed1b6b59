/** How sessions are made and opened: files under --session-dir, or memory with --no-session. */
import { Session } from "./session.js";

export interface SessionFactory {
  create(options: { parentSession?: string | undefined }): Session;
  open(path: string): Session;
  /** Where new session files go now (forks too); absent (or undefined) in memory, where a fork stays beside its source. */
  sessionDir?(): string | undefined;
}

export const memorySessions = (cwd: string): SessionFactory => ({
  create: (options) => new Session(cwd, options.parentSession !== undefined ? { parentSession: options.parentSession } : {}),
  open: () => {
    throw new Error("--no-session keeps sessions in memory: there are no session files to open");
  },
});
