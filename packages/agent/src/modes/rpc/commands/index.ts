import type { CommandType } from "@parley/protocol";
import { maintenanceCommands } from "./maintenance.js";
import { modelCommands } from "./models.js";
import { promptCommands } from "./prompt.js";
import { sessionCommands } from "./session.js";
import { stateCommands } from "./state.js";
import type { CommandTable } from "./types.js";
import { workspaceCommands } from "./workspace.js";

/** Every command type has exactly one handler; the type checker enforces completeness. */
export const COMMANDS: CommandTable<CommandType> = {
  ...stateCommands,
  ...promptCommands,
  ...modelCommands,
  ...sessionCommands,
  ...maintenanceCommands,
  ...workspaceCommands,
};
