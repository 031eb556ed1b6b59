import type { CommandOf, CommandType, CommandWithData, PendingDialogState, ResponseData, RpcEvent, UiState } from "@parley/protocol";
import type { AgentSession } from "../../../agent/agent-session.js";
import type { ExtensionRuntime } from "../../../extensions/runtime.js";

export type { CommandOf };

/** The whole agent, as the server holds it. Handlers see only a view of it (handlersFor). */
type CommandAgent = AgentSession;

/** The members of the agent a group of handlers names (handlersFor). */
export type AgentMember = keyof CommandAgent;

/** The agent as handlers naming members `M` see it. */
export type AgentView<M extends AgentMember> = Pick<CommandAgent, M>;

/**
 * What a command handler reaches: a view of the agent naming just what the handler uses, and the
 * few server parts commands use, not the server.
 */
export interface CommandContext<Agent = CommandAgent> {
  readonly agent: Agent;
  /** Session switches and the other things commands do as an extension would (extension events run). */
  readonly sessions: CommandSessions;
  readonly runtime: Pick<ExtensionRuntime, "findCommand" | "runCommand" | "commandList">;
  /** get_ui_state: the folded fire-and-forget UI and the dialogs still waiting. */
  uiState(): UiState & { pendingDialogs: PendingDialogState[] };
  /** Writes one event outside the line order (the bash command's output). */
  emitEvent(event: RpcEvent): void;
  /** The folder, its stored sessions, reloading: what parley's own commands (list_sessions, reload, …) reach. */
  readonly workspace: CommandWorkspace;
}

export interface CommandWorkspace {
  /** The folder the agent works in. */
  readonly cwd: string;
  /** The session directories list_sessions reads: this folder's, or every project's. */
  sessionDirs(scope: "folder" | "all"): string[];
  /** ctx.reload(). */
  reload(): Promise<void>;
  /** models.json read again, its providers registered anew. */
  refreshModels(): void;
}

export interface CommandSessions {
  newSession(options: { parentSession?: string | undefined }): Promise<{ cancelled: boolean }>;
  switchSession(path: string): Promise<{ cancelled: boolean }>;
  forkSession(entryId: string, position: "before" | "at"): Promise<{ cancelled: boolean; text?: string }>;
  cloneSession(): Promise<{ cancelled: boolean }>;
  setSessionName(name: string): void;
}

/**
 * A handler's result: the command's response data as the protocol defines it. A command without
 * data returns `undefined`, and says so (`return undefined`): with `void` here, TypeScript would
 * accept a handler returning any value, which the server would then send.
 */
export type CommandResult<K extends CommandType> = K extends CommandWithData ? ResponseData<K> : undefined;

type SyncRun<K extends CommandType, Agent = CommandAgent> = (command: CommandOf<K>, ctx: CommandContext<Agent>) => CommandResult<K>;
/** `respond` answers early (e.g. when a prompt is accepted, before its events); otherwise the result answers. */
type AsyncRun<K extends CommandType, Agent = CommandAgent> = (
  command: CommandOf<K>,
  ctx: CommandContext<Agent>,
  respond: (data: CommandResult<K>) => void,
) => Promise<CommandResult<K>>;

/**
 * `sync` handlers answer before the next line is read, so their responses leave in arrival order.
 * `async` handlers are long-running by nature (they wait for a model, a shell or an extension's
 * dialog); their response leaves when they finish, and later lines do not wait for them.
 * Either returns the command's response data as the protocol defines it (`CommandResult<K>`),
 * so a handler that drifts from the wire format does not compile.
 */
export type CommandHandler<K extends CommandType> = ({ kind: "sync"; run: SyncRun<K> } | { kind: "async"; run: AsyncRun<K> }) & {
  /**
   * The handler uses the built-in model catalogue, which start-up does not load. Until it is
   * loaded, this line and every later one wait (in order) while it loads.
   */
  needsCatalog?: boolean;
  /**
   * The command changes the session the client is in (its model, level, name, context): sent
   * while a session switch is under way, it waits for the switch and applies to the session
   * switched to. Its answer then leaves when it is done; later lines do not wait for it (a
   * switch can be held by an extension's dialog, and get_state must still be answered).
   */
  sessionBound?: boolean;
};

/**
 * A handler for each command in `K`. `COMMANDS` (index.ts) is a `CommandTable<CommandType>`: a
 * command declared in the protocol's command table without a handler does not compile.
 */
export type CommandTable<K extends CommandType> = { [P in K]: CommandHandler<P> };

/** Some commands' handlers, as a group file holds them (`satisfies CommandGroup`): its keys name the commands. */
export type CommandGroup = Partial<CommandTable<CommandType>>;

/**
 * `sync` and `async` for handlers that see only the agent's members `M`: a group file names what
 * its handlers use (`handlersFor<"prompt" | "abort">()`), and reaching for anything else does
 * not compile.
 */
export function handlersFor<M extends AgentMember>(): {
  sync: <K extends CommandType>(run: SyncRun<K, AgentView<M>>) => CommandHandler<K>;
  async: <K extends CommandType>(run: AsyncRun<K, AgentView<M>>) => CommandHandler<K>;
} {
  return {
    sync: (run) => ({ kind: "sync", run }),
    async: (run) => ({ kind: "async", run }),
  };
}

/** Marks a handler as applying to the session switched to when a switch is under way (see CommandHandler.sessionBound). */
export const afterSwitch = <K extends CommandType>(handler: CommandHandler<K>): CommandHandler<K> => ({ ...handler, sessionBound: true });

/** Marks a handler as needing the model catalogue (see CommandHandler.needsCatalog). */
export const withCatalog = <K extends CommandType>(handler: CommandHandler<K>): CommandHandler<K> => ({ ...handler, needsCatalog: true });
