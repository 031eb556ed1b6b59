/**
 * Leaving the current session for another: a new one, a stored one, a fork or a clone. Every
 * front door (the RPC commands, ctx.newSession/fork/switchSession, ACP's session/new and
 * session/load, web mode through RPC) switches here, so extensions see the same events whoever
 * asked: session_before_switch or session_before_fork (a handler may cancel), then
 * session_shutdown, the swap, the extensions loaded again (as pi builds a new runtime for each
 * session: factories run again, module state starts afresh, the old instances' pi and ctx go
 * stale), session_start and resources_discover, once each.
 */
import { existsSync } from "node:fs";
import type { ExtensionRuntime } from "../extensions/runtime.js";
import type { ForkTarget, Session } from "../session/session.js";
import { wirePath } from "../resources/paths.js";
import { assertSessionCwdExists, sessionFolder } from "../session/session-cwd.js";

import type { SessionFactory } from "../session/session-factory.js";

export type { SessionFactory };

export type SessionSwitchEvents = {
  before:
    | { type: "session_before_switch"; reason: "new" | "resume"; targetSessionFile?: string }
    | { type: "session_before_fork"; entryId: string; position: "before" | "at" };
  reason: "new" | "resume" | "fork";
  /** Throws when the target is not valid; runs after the before-event, before anything changes. */
  check?: () => void;
  /**
   * Seeds the next session once it is the agent's and its extensions are loaded, before their
   * session_start (ctx.newSession's `setup`, in pi's order); the agent then takes up its context.
   */
  prepare?: (session: Session) => Promise<void> | void;
  /** The folder the agent works in with the next session; without it, the folder stays (new sessions and forks, as in pi). */
  folderOf?: (next: Session) => string;
};

/** What a switch needs from the agent (AgentSession is one). */
export interface SwitchingAgent {
  readonly session: Session;
  /** A run has started and not settled. */
  readonly isRunning: boolean;
  /** Ends the running turn (and waits for it). */
  abort(): Promise<void>;
  /** Cancels the user's running shell commands (each is recorded in the session it started in). */
  abortBash(): void;
  hasPendingMessages(): boolean;
  clearQueue(): unknown;
  readonly models: { loadCatalog(): Promise<void> };
  /** Continues from another session's context, with the model and level pi would start it with. */
  useSession(session: Session, resumed?: boolean): void;
  /** The start-up tool selection again (a new session's fresh runtime, in pi). */
  restartTools(): void;
  /** The tools the session's transcript records, taken up (pi 1.6, for a stored session). */
  restoreTools(atStart: boolean): void;
  /** Takes up the current session's context again once a seed has changed it. */
  refreshContext(): void;
  /** Runs a switch; a client's prompt or queued message that comes meanwhile waits for it to end. */
  switching<T>(work: () => Promise<T>): Promise<T>;
}

export interface SessionSwitchingOptions {
  /** The folder the agent works in now. */
  cwd: () => string;
  /** Where a relative session path a client sends starts (pi: its process's folder); default: the first `cwd()`. */
  pathBase?: string | undefined;
  /**
   * The agent moves to the folder of the session it switched to (its bash, tools, ctx.cwd, the
   * sessions it makes next), before the extensions load again there. Without it, it stays.
   */
  moveTo?: ((cwd: string) => Promise<void>) | undefined;
  /** The agent is made after the extension runtime, so it is reached lazily. */
  agent: () => SwitchingAgent;
  runtime: Pick<ExtensionRuntime, "emit" | "emitResourcesDiscover" | "bindMcpServers">;
  sessions: SessionFactory;
  /**
   * Drops the extensions and loads them again, fresh, for the next session (between its
   * session_shutdown and session_start). Without it the same instances carry on.
   */
  reloadExtensions?: (() => Promise<void>) | undefined;
}

export class SessionSwitching {
  readonly #cwd: () => string;
  readonly #pathBase: string;
  readonly #moveTo: ((cwd: string) => Promise<void>) | undefined;
  readonly #agent: () => SwitchingAgent;
  readonly #runtime: SessionSwitchingOptions["runtime"];
  readonly #sessions: SessionFactory;
  readonly #reloadExtensions: (() => Promise<void>) | undefined;

  constructor(options: SessionSwitchingOptions) {
    this.#cwd = options.cwd;
    this.#pathBase = options.pathBase ?? options.cwd();
    this.#moveTo = options.moveTo;
    this.#agent = options.agent;
    this.#runtime = options.runtime;
    this.#sessions = options.sessions;
    this.#reloadExtensions = options.reloadExtensions;
  }

  /**
   * Leaves the current session for another (new, opened or forked), unless a
   * session_before_switch/fork handler cancels: session_shutdown, swap, session_start — once each.
   */
  switchTo(make: () => Session, events: SessionSwitchEvents): Promise<{ cancelled: boolean }> {
    const agent = this.#agent();
    return agent.switching(() => this.#switch(agent, make, events));
  }

  async #switch(agent: SwitchingAgent, make: () => Session, events: SessionSwitchEvents): Promise<{ cancelled: boolean }> {
    const verdict = await this.#runtime.emit(events.before);
    if (verdict?.cancel === true) return { cancelled: true };
    // As in pi, the target is checked only once the extensions have let the switch go ahead.
    events.check?.();
    // The old session's run, shell commands and queued messages end with it.
    await agent.abort();
    agent.abortBash();
    if (agent.hasPendingMessages()) agent.clearQueue();
    // The session may name a built-in model to continue with.
    await agent.models.loadCatalog();
    const next = make();
    const previous = agent.session.file;
    await this.#runtime.emit({ type: "session_shutdown", reason: events.reason, ...(next.file !== undefined ? { targetSessionFile: next.file } : {}) });
    // A prompt being prepared when the abort above came may have started its run since: it ends
    // here too, so nothing of the old session's runs into the next (a later one is refused).
    while (agent.isRunning) await agent.abort();
    agent.useSession(next, events.reason === "resume");
    // pi's new runtime works in the opened session's folder: settings, resources and extensions are the ones there.
    const folder = events.folderOf?.(next);
    if (folder !== undefined && folder !== this.#cwd()) await this.#moveTo?.(folder);
    // pi builds a new runtime for the new session: fresh extension instances, which bind and
    // discover resources as at start-up.
    await this.#reloadExtensions?.();
    // ... and its own tools: the start-up selection, with the settings of the folder it works in.
    agent.restartTools();
    // A seed that throws still leaves a started session (its extensions get session_start); the
    // caller hears of the failure afterwards.
    let failed: { error: unknown } | undefined;
    if (events.prepare) {
      try {
        await events.prepare(next);
      } catch (error) {
        failed = { error };
      }
      agent.refreshContext();
    }
    // A resumed, forked or cloned session's transcript records the tools the model last saw: the
    // session continues with them, as pi 1.6's new runtime restores them.
    agent.restoreTools(true);
    await this.#runtime.emit({ type: "session_start", reason: events.reason, ...(previous !== undefined ? { previousSessionFile: previous } : {}) });
    if (this.#reloadExtensions) this.#runtime.bindMcpServers();
    await this.#runtime.emitResourcesDiscover(this.#cwd(), "startup");
    if (failed) throw failed.error;
    return { cancelled: false };
  }

  /** A new session; `setup` seeds it before its session_start (ctx.newSession). */
  newSession(
    options: { parentSession?: string | undefined; setup?: ((session: Session) => Promise<void> | void) | undefined } = {},
  ): Promise<{ cancelled: boolean }> {
    return this.switchTo(() => this.#sessions.create({ parentSession: options.parentSession }), {
      before: { type: "session_before_switch", reason: "new" },
      reason: "new",
      ...(options.setup !== undefined ? { prepare: options.setup } : {}),
    });
  }

  /**
   * Where a fork or clone goes, as in pi: the folder the agent works in, and the current session's
   * directory (the factory's; without one, beside the file forked).
   */
  #forkTarget(): ForkTarget {
    const sessionDir = this.#sessions.sessionDir?.();
    return { cwd: this.#cwd(), ...(sessionDir !== undefined ? { sessionDir } : {}) };
  }

  /** pi's order: session_before_switch names the path as given, then the file is opened. */
  switchSession(path: string): Promise<{ cancelled: boolean }> {
    let next: Session | undefined;
    // `~` and file:// URLs are read as the newest pi reads them (its SessionManager.open resolves the path).
    const file = wirePath(path, this.#pathBase);
    return this.switchTo(() => next ?? this.#sessions.open(file), {
      before: { type: "session_before_switch", reason: "resume", targetSessionFile: path },
      reason: "resume",
      check: () => {
        const opened = this.#sessions.open(file);
        // As pi: a session whose recorded folder is gone is refused, with pi's words (after session_before_switch).
        try {
          assertSessionCwdExists(opened, this.#cwd());
        } catch (error) {
          opened.release();
          throw error;
        }
        next = opened;
      },
      // A file without a recorded folder opens in the current one (pi's SessionManager.open).
      folderOf: (session) => sessionFolder(session, this.#cwd()),
    });
  }

  /** Continues in a new session holding the branch up to (or at) an entry; `text` is the forked user message. */
  async forkSession(entryId: string, position: "before" | "at"): Promise<{ cancelled: boolean; text?: string }> {
    const current = this.#agent().session;
    // pi's words: a client may match on them.
    const check = (): void => {
      const entry = current.entry(entryId);
      if (!entry || (position === "before" && (entry.type !== "message" || entry.message.role !== "user"))) throw new Error("Invalid entry ID for forking");
      // A fork before the first entry is a new session, which needs nothing of the file.
      if (position === "at" || entry.parentId !== null) assertSaved(current);
    };
    let text: string | undefined;
    const result = await this.switchTo(
      () => {
        // The fork records the folder the agent works in (pi's runtime cwd), which --continue may have made differ from the file's.
        const forked = current.fork(entryId, position, this.#forkTarget());
        text = forked.selectedText;
        return forked.session;
      },
      { before: { type: "session_before_fork", entryId, position }, reason: "fork", check },
    );
    return { ...(text !== undefined ? { text } : {}), cancelled: result.cancelled };
  }

  /**
   * Continues in a copy of the current session's active branch (a fork at its leaf). The leaf is
   * the one when the request came, as in pi, and the one session_before_fork names: the run that
   * switching aborts appends its tail to this session, not to the copy.
   */
  async cloneSession(): Promise<{ cancelled: boolean }> {
    const current = this.#agent().session;
    const leaf = current.leafId;
    if (!leaf) throw new Error("Cannot clone session: no current entry selected");
    return this.switchTo(() => current.fork(leaf, "at", this.#forkTarget()).session, {
      before: { type: "session_before_fork", entryId: leaf, position: "at" },
      reason: "fork",
      check: () => assertSaved(current),
    });
  }
}

/**
 * As pi 1.6 (after session_before_fork): a stored session is forked or cloned from its file, so
 * one not written yet (a new session's file waits for its first reply) is refused, in pi's words.
 * An in-memory session (--no-session) is copied in memory.
 */
function assertSaved(session: Session): void {
  if (session.file !== undefined && !existsSync(session.file)) {
    throw new Error("This session has not been saved yet. Send a message before cloning or forking it.");
  }
}
