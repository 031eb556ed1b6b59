/**
 * Commands of pi's set that need the agent loop, models or session files. Each answers an
 * honest error instead of pretending; they move to their own modules as those parts land.
 */
import type { CommandType } from "@parley/protocol";
import { CommandError } from "../responses.js";
import { sync, type CommandTable } from "./types.js";

export const NOT_YET = [
  "steer",
  "follow_up",
  "set_model",
  "cycle_model",
  "get_available_models",
  "compact",
  "bash",
  "abort_bash",
  "get_session_stats",
  "export_html",
  "switch_session",
  "fork",
  "clone",
  "get_fork_messages",
  "get_entries",
  "get_tree",
] as const satisfies readonly CommandType[];

type NotYet = (typeof NOT_YET)[number];

export const notYetCommands = Object.fromEntries(
  NOT_YET.map((type) => [
    type,
    sync(() => {
      throw new CommandError(`${type} is not implemented yet in this build of parley (it needs the agent loop and session files)`);
    }),
  ]),
) as CommandTable<NotYet>;
