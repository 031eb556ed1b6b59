/**
 * The modes parley serves, one row each: its name, how the command line selects it, and how it
 * starts. A mode is a folder under modes/ and a row here; its modules load only in its own mode
 * (`await import(...)`), so RPC start-up does not pay for the others.
 */
import type { AgentCore } from "../core/agent-core.js";
import type { ModeContext } from "../core/mode-context.js";
import type { RpcModeOptions } from "../modes/rpc/run.js";
import { runRpc } from "../modes/rpc/run.js";
import type { CliOptions } from "./args.js";

/** What start-up hands a mode's row: what every mode gets, and the CLI's state the row picks the mode's own options from. */
export interface ModeRun extends ModeContext, RpcModeOptions {
  readonly options: CliOptions;
  /** The package's version (ACP's agent info). */
  readonly version: string;
  /** The folder stored sessions are listed from; undefined with --no-session. */
  readonly sessionDir: string | undefined;
  /** Starts an ACP session's agent after the first, as `startAgent` started the first. */
  readonly startSessionAgent: (core: AgentCore) => Promise<void>;
}

/** How a selected mode starts, once start-up has read pi's files and opened the session. */
export type StartMode = (run: ModeRun) => Promise<void>;

export interface ModeRow {
  readonly name: string;
  /** Whether the parsed command line runs this mode (exactly one row selects any command line). */
  readonly selects: (options: CliOptions) => boolean;
  /**
   * Called before the session opens: the mode's own flag checks (a `UsageError` stops parley with
   * pi's status before anything else is said) and warnings; returns how it starts.
   */
  readonly prepare: (options: CliOptions, log: (message: string) => void) => Promise<StartMode>;
}

export const MODE_TABLE: readonly ModeRow[] = [
  {
    name: "rpc",
    selects: (options) => options.mode === "rpc",
    prepare: async () => (run) => runRpc(run, { sessionDirs: run.sessionDirs, refreshModels: run.refreshModels }),
  },
  {
    name: "web",
    selects: (options) => options.mode === "web",
    // A non-loopback host without a token stops here, before the session opens.
    prepare: async (options, log) => {
      const web = await import("../modes/web/web-mode.js");
      const token = web.webToken(options.web);
      for (const warning of web.webWarnings(options.web)) log(warning);
      const maxMessageBytes = options.maxLineBytes ?? 128 * 1024 * 1024;
      return (run) => web.runWeb(run, { sessionDirs: run.sessionDirs, refreshModels: run.refreshModels, ...options.web, token, maxMessageBytes });
    },
  },
  {
    name: "acp",
    selects: (options) => options.mode === "acp",
    prepare: async () => async (run) => {
      const { runAcp } = await import("../modes/acp/run.js");
      await runAcp(run, { version: run.version, sessionDir: run.sessionDir, startSessionAgent: run.startSessionAgent });
    },
  },
  {
    name: "print",
    // `-p`, `--mode json`, or no mode where stdin or stdout is not a terminal (args.ts).
    selects: (options) => options.mode === "print" || options.mode === "json",
    prepare: async () => async (run) => {
      const { runPrint } = await import("../modes/print/run.js");
      const { options } = run;
      await runPrint(run, {
        output: options.mode === "json" ? "json" : "text",
        messages: options.messages,
        fileArgs: options.fileArgs,
        launchCwd: run.core.launchCwd,
      });
    },
  },
];

/** The row of the mode this command line runs. */
export function selectMode(options: CliOptions): ModeRow {
  const row = MODE_TABLE.find((candidate) => candidate.selects(options));
  if (row === undefined) throw new Error(`no mode serves --mode ${options.mode}`);
  return row;
}
