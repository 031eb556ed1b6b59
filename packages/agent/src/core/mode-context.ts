/**
 * What the CLI hands a mode once start-up has read pi's files, opened the session and loaded the
 * extension modules (cli/main.ts), the same for every mode. A mode makes its front door from
 * `core`, calls `startAgent` with it once, hands it to `lifetime.serve`, then serves.
 */
import type { ModelResolution } from "../models/index.js";
import type { Session } from "../session/session.js";
import type { SessionFactory } from "../session/session-factory.js";
import type { ClaimedStdin } from "../transport/claim-stdin.js";
import type { AgentCoreSettings, FrontDoor } from "./agent-core.js";
import type { ProcessLifetime } from "./process-lifetime.js";

/** The core settings start-up has filled in: the start folder, the models, the start-up session, where new sessions go, the log. */
export interface StartedCoreSettings extends AgentCoreSettings {
  launchCwd: string;
  models: ModelResolution;
  session: Session;
  sessions: SessionFactory;
  log: (message: string) => void;
}

export interface ModeContext {
  /** What the mode's agent starts from (in ACP, each session's). */
  readonly core: StartedCoreSettings;
  /** fd 0, claimed for the protocol before any extension code ran (web mode does not read it). */
  readonly stdin: ClaimedStdin;
  /** --max-line-bytes, when given. */
  readonly maxLineBytes: number | undefined;
  /** How the process ends, alike in every mode. */
  readonly lifetime: ProcessLifetime;
  /**
   * Start-up once the front door exists, the same for every mode: skills and prompt templates,
   * the extension factories with project trust settled, models.json's providers, the extensions'
   * flags, the start-up model, then the notes and warnings. It stops parley on what pi stops at.
   */
  startAgent(front: FrontDoor): Promise<void>;
  readonly log: (message: string) => void;
}

/** A stdio transport's options for a mode on fd 0 and stdout. */
export interface StdioSettings {
  stdin: ClaimedStdin;
  maxLineBytes?: number;
  /** The client closed our stdout: nobody can hear us, so the run ends quietly. */
  onOutputClosed: () => void;
}

export function stdioOptions(context: ModeContext): StdioSettings {
  return {
    stdin: context.stdin,
    ...(context.maxLineBytes !== undefined ? { maxLineBytes: context.maxLineBytes } : {}),
    onOutputClosed: context.lifetime.outputClosed,
  };
}
