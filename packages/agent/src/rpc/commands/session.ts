/** Session lifecycle commands. new_session waits for extensions (which may ask the user). */
import { async, type CommandTable } from "./types.js";

export const sessionCommands: CommandTable<"new_session"> = {
  new_session: async((c, server) => server.newSession(c.parentSession !== undefined ? { parentSession: c.parentSession } : {})),
};
