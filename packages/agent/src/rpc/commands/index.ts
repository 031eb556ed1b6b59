import { notYetCommands } from "./not-yet.js";
import { promptCommands } from "./prompt.js";
import { sessionCommands } from "./session.js";
import { stateCommands } from "./state.js";
import type { CommandTable } from "./types.js";
import type { CommandType } from "@parley/protocol";

/** Every command type has exactly one handler; the type checker enforces completeness. */
export const COMMANDS: CommandTable<CommandType> = {
  ...stateCommands,
  ...sessionCommands,
  ...promptCommands,
  ...notYetCommands,
};
