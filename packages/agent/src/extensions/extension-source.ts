/** An extension as the CLI hands it to a mode: its loaded factory, or why it could not be loaded. */
import type { ExtensionFactory, SourceInfo } from "./types.js";

export interface ExtensionSource {
  path: string;
  factory?: ExtensionFactory;
  /** Set when the file could not be loaded; reported as an extension_error. */
  error?: string;
  /** Where it was found: -e (temporary), the user's places or settings (user), the project's (project). */
  scope?: "temporary" | "user" | "project";
  /** How get_commands reports its commands' origin (pi's sourceInfo); derived from `scope` when absent. */
  sourceInfo?: SourceInfo;
  /** A built-in that is not loaded when an extension loaded before it registered this command or tool (as in pi). */
  replaceable?: { command?: string; tool?: string };
}

/** An extension given with -e that could not be loaded or whose factory threw. */
export interface ExtensionLoadFailure {
  path: string;
  error: string;
  stack?: string;
}
