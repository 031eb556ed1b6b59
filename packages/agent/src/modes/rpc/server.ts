/**
 * The RPC server: routes inbound lines to the dialog registry or the command table, keeps answers
 * in line order, and writes every outbound record through one transport. Knows nothing of stdio;
 * what extensions reach through is the host's job (extension-host.ts).
 */
import type { CommandType, ExtensionUiError, RpcEvent } from "@parley/protocol";
import { quickCheckCommand } from "@parley/protocol/quick-check";
import type { ExtensionLoadFailure, ExtensionSource } from "../../extensions/extension-source.js";
import type { ExtensionErrorReport } from "../../extensions/host.js";
import type { ExtensionRuntime } from "../../extensions/runtime.js";
import { AgentCore, type AgentCoreSettings, type AgentView, type FrontDoor } from "../../core/agent-core.js";
import { DialogRegistry } from "../../ui/dialog-registry.js";
import { COMMANDS } from "./commands/index.js";
import type { CommandContext, CommandOf } from "./commands/types.js";
import type { RpcExtensionHost } from "../../core/extension-host.js";
import { failure, success, type ResponseRecord } from "./responses.js";
import type { Transport, TransportSink } from "../../core/transport.js";
import { errorMessage } from "../../error-text.js";
import { withTimeout } from "../../with-timeout.js";

// Their homes are the modules named; re-exported for those who import them from here.
export type { ExtensionLoadFailure, ExtensionSource } from "../../extensions/extension-source.js";
export { memorySessions, type SessionFactory } from "../../session/session-factory.js";

/** What every mode takes (agent-core.ts), and what is the RPC server's own. */
export interface RpcServerOptions extends AgentCoreSettings {
  transport: Transport;
  /** list_sessions: the session directories of this folder, or of every project (none when absent). */
  sessionDirs?: ((scope: "folder" | "all") => string[]) | undefined;
  /** refresh_models: models.json read again and its providers registered on this agent anew. */
  refreshModels?: ((agent: FrontDoor["agent"]) => void) | undefined;
  /** How long shutdown waits for running commands and session_shutdown handlers. */
  shutdownGraceMs?: number;
}

/**
 * Where the server is in its life. Lines are held (answered later, in order) while `starting`
 * (session_start handlers run) and while `holding` (a line waits for something loading, the model
 * catalogue); `serving` answers them as they come; `shutting_down` ignores input; `closed` is the end.
 */
export type ServerPhase = "starting" | "holding" | "serving" | "shutting_down" | "closed";

/** The phases each phase may move to; #enter() refuses anything else. */
const PHASE_TRANSITIONS: Record<ServerPhase, readonly ServerPhase[]> = {
  starting: ["serving", "shutting_down"],
  holding: ["serving", "shutting_down"],
  serving: ["holding", "shutting_down"],
  shutting_down: ["closed"],
  closed: [],
};

/** Something ended input or asked to stop before the server could: when to shut down. */
type StopRequest =
  | "none"
  /** stdin ended while lines were held: shut down once they are answered, not before. */
  | "after-held-lines"
  /** ctx.shutdown(): shut down once running commands have answered and no line is held. */
  | "when-idle";

type HeldInput = string | { bytes: number; maxLineBytes: number };

const RUN_CUT_SHORT = "input ended while a prompt was running, so the run is cancelled (RPC mode ends with its input).";

/** Where a newcomer's one-shot question belongs. */
const ONE_SHOT_HINT = 'For a one-shot answer use print mode: `parley -p "question"` or `echo "question" | parley -p`.';

/** The agent as the server's own code uses it (handlers get theirs through handlersFor). */
type RpcServerAgent = AgentView<"isStreaming" | "isCompacting" | "isSwitching" | "afterSwitches" | "models" | "abort" | "abortBash">;

export class RpcServer implements TransportSink, FrontDoor {
  readonly dialogs: DialogRegistry;
  /** What extensions (and the commands that do what they can do) reach through. */
  readonly host: RpcExtensionHost;
  readonly runtime: ExtensionRuntime;
  /** The host, the agent and extension loading, as every mode has them. */
  readonly #core: AgentCore;
  /** The folder the agent works in (the current session's). */
  get cwd(): string {
    return this.#core.cwd;
  }
  readonly #transport: Transport;
  readonly #options: RpcServerOptions;
  readonly #log: (message: string) => void;
  #phase: ServerPhase = "starting";
  /**
   * Lines (and overflow reports) held while starting or holding; handled in order right after.
   * Dialog answers never wait.
   */
  #held: HeldInput[] = [];
  #stopRequest: StopRequest = "none";
  /** The plain-text hint was said (once per run). */
  #saidPlainText = false;
  /** The model catalogue failed to load (then commands that need it fail with this). */
  #catalogError: string | undefined;
  readonly #inFlight = new Set<Promise<void>>();
  #shutdown: Promise<void> | undefined;
  /** What command handlers reach (see CommandContext). */
  readonly #commands: CommandContext;
  #resolveClosed!: () => void;
  /** Resolves when the server has shut down and flushed its output. */
  readonly closed = new Promise<void>((resolve) => (this.#resolveClosed = resolve));

  constructor(options: RpcServerOptions) {
    this.#options = options;
    this.#transport = options.transport;
    this.#log = options.log ?? (() => {});
    // A refused answer is a reply to its line, so it keeps line order like a command's response.
    this.dialogs = new DialogRegistry({
      send: (record) => (record.type === "extension_ui_error" ? this.#answer(record) : this.#transport.send(record)),
    });
    this.#core = new AgentCore(options, {
      dialogs: this.dialogs,
      send: (record) => this.#transport.send(record),
      emit: (record) => this.#transport.send(record),
      output: this.#transport,
      requestShutdown: () => this.#requestShutdown(),
    });
    this.host = this.#core.host;
    this.runtime = this.#core.runtime;
    const server = this;
    this.#commands = {
      get agent() {
        return server.agent;
      },
      sessions: this.host,
      runtime: this.runtime,
      uiState: () => ({ ...this.host.uiState(), pendingDialogs: this.dialogs.snapshot() }),
      emitEvent: (event) => this.emitEvent(event),
      workspace: {
        get cwd() {
          return server.cwd;
        },
        sessionDirs: (scope) => options.sessionDirs?.(scope) ?? [],
        reload: () => this.host.reload(),
        refreshModels: () => options.refreshModels?.(this.agent),
      },
    };
  }

  /** Where the server is in its life (see ServerPhase). */
  get phase(): ServerPhase {
    return this.#phase;
  }

  /** Every phase change goes through here, so the transitions above are the only ones. */
  #enter(next: ServerPhase): void {
    if (!PHASE_TRANSITIONS[this.#phase].includes(next)) throw new Error(`RpcServer: cannot go from ${this.#phase} to ${next}`);
    this.#phase = next;
  }

  /** Lines wait (starting, or holding for something a line needs). */
  get #holding(): boolean {
    return this.#phase === "starting" || this.#phase === "holding";
  }

  /** The whole agent, for the CLI's start-up and the command handlers (each group sees a view: commands/types.ts); exists once loadExtensions() has begun. */
  get agent(): FrontDoor["agent"] {
    return this.#core.agent;
  }

  /** The agent as the server's own code uses it: the line order around switches and the catalogue, stopping. */
  get #agent(): RpcServerAgent {
    return this.#core.agent;
  }

  /** Creates the agent, then runs the extension factories (they register commands, handlers and flags). */
  loadExtensions(options: { explicitFailuresFatal?: boolean } = {}): Promise<ExtensionLoadFailure[]> {
    return this.#core.loadExtensions(options);
  }

  addExtensions(sources: readonly ExtensionSource[], order: readonly string[]): Promise<void> {
    return this.#core.addExtensions(sources, order);
  }

  /** ctx.reload() (agent-core.ts). */
  reloadExtensions(): Promise<void> {
    return this.#core.reloadExtensions();
  }

  /** Values given on the command line for the flags extensions registered. */
  setExtensionFlags(flags: Map<string, string | boolean>): void {
    this.host.setExtensionFlags(flags);
  }

  /** Starts reading input and runs session_start; lines that arrive meanwhile wait their turn. */
  async begin(): Promise<void> {
    this.#transport.start(this);
    await this.#core.startSession();
    this.#release();
  }

  /** Hold input until `ready` settles, starting with `line` (which needs what is loading). */
  #holdUntil(ready: Promise<unknown>, line: string): void {
    // A held line handled after shutdown began still waits for what it needs, in the same order.
    if (this.#phase === "serving") this.#enter("holding");
    this.#held = [line];
    void ready.finally(() => this.#release());
  }

  /** Handle the held lines in order; one of them may start a new hold, which keeps the rest. */
  #release(): void {
    const held = this.#held;
    this.#held = [];
    // Held lines are still answered when shutdown began meanwhile (a signal during start-up).
    if (this.#holding) this.#enter("serving");
    for (let i = 0; i < held.length; i++) {
      const item = held[i]!;
      if (typeof item === "string") this.#handleLine(item);
      else this.#reportOverflow(item);
      if (this.#held.length > 0) {
        this.#held.push(...held.slice(i + 1));
        return;
      }
    }
    if (this.#stopRequest === "after-held-lines") {
      this.#sayRunCutShort();
      void this.shutdown("quit");
    }
    this.#maybeShutdown();
  }

  async start(): Promise<void> {
    await this.loadExtensions();
    await this.begin();
  }

  // ---- TransportSink ---------------------------------------------------------

  line(text: string): void {
    if (this.#phase === "shutting_down" || this.#phase === "closed") return;
    // Answers to a waiting dialog are never queued: a start-up handler may be waiting for one.
    // Any other dialog answer is refused in line order, like a command.
    if (this.#holding && !this.#answersPendingDialog(text)) this.#held.push(text);
    else this.#handleLine(text);
  }

  #answersPendingDialog(text: string): boolean {
    const value = uiResponseOf(text);
    return value !== undefined && typeof value["id"] === "string" && this.dialogs.isPending(value["id"]);
  }

  overflow(info: { bytes: number; maxLineBytes: number }): void {
    if (this.#holding) this.#held.push(info);
    else this.#reportOverflow(info);
  }

  #reportOverflow(info: { bytes: number; maxLineBytes: number }): void {
    this.#answer(
      failure(
        undefined,
        "parse",
        `Line of ${info.bytes} bytes exceeds the maximum of ${info.maxLineBytes} bytes and was discarded (raise it with --max-line-bytes)`,
      ),
    );
  }

  end(): void {
    // Lines read before EOF still get their answers, even when start-up is not over yet.
    if (this.#holding) this.#stopRequest = "after-held-lines";
    else {
      this.#sayRunCutShort();
      void this.shutdown("quit");
    }
  }

  /**
   * `echo '{"type":"prompt",…}' | parley --mode rpc` ends input while the prompt runs, which ends
   * the run (RPC mode lives as long as its input): said on stderr, with the one-shot way to ask.
   */
  #sayRunCutShort(): void {
    if (this.#phase !== "serving" || !this.#core.hasAgent || !this.#agent.isStreaming) return;
    this.#log(`${RUN_CUT_SHORT} ${ONE_SHOT_HINT}`);
  }

  // ---- input -----------------------------------------------------------------

  #handleLine(text: string): void {
    // Blank lines (a stray Enter) carry nothing to answer; only JSON's own whitespace counts as blank.
    if (isBlank(text)) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      this.#answer(failure(undefined, "parse", `Failed to parse command: ${errorMessage(error)}`));
      // Plain text where a command belongs is most likely a question meant for print mode.
      if (!this.#saidPlainText && !text.trimStart().startsWith("{")) {
        this.#saidPlainText = true;
        this.#log(`RPC mode reads JSON commands, one per line; a line of plain text is not one. ${ONE_SHOT_HINT}`);
      }
      return;
    }
    if (isUiResponse(value)) {
      this.dialogs.handleResponse(value);
      return;
    }
    const check = quickCheckCommand(value);
    if (!check.ok) {
      if ("error" in check) this.#answer(failure(check.id, check.command, check.error));
      else {
        // Explaining a bad command loads the full validator once (TypeBox, kept off start-up);
        // answers to later lines wait for it, so responses still leave in arrival order.
        const { id, command } = check;
        this.#answerLater(check.explain().then((error) => failure(id, command, error)));
      }
      return;
    }
    this.#dispatch(check.command.type, check.command, text);
    this.#maybeShutdown();
  }

  /** Runs a valid command's handler; generic in the command type, so handler, command and data agree. */
  #dispatch<K extends CommandType>(type: K, command: CommandOf<K>, text: string): void {
    const handler = COMMANDS[type];
    const id = command.id;
    if (handler.sessionBound && this.#agent.isSwitching) {
      this.#track(this.#agent.afterSwitches().then(() => this.#dispatch(type, command, text)));
      return;
    }
    if (handler.needsCatalog && !this.#agent.models.catalogReady) {
      if (this.#catalogError === undefined) {
        const models = this.#agent.models;
        this.#holdUntil(
          models.loadCatalog().catch((error: unknown) => (this.#catalogError = `the model catalogue failed to load: ${errorMessage(error)}`)),
          text,
        );
        return;
      }
      this.#answer(failure(id, type, this.#catalogError));
      return;
    }
    try {
      if (handler.kind === "sync") {
        this.#answer(success(id, type, handler.run(command, this.#commands)));
      } else {
        let answered = false;
        const respond = (data: unknown): void => {
          if (answered) return;
          answered = true;
          this.#transport.send(success(id, type, data));
        };
        this.#track(
          handler.run(command, this.#commands, respond).then(respond, (error: unknown) => {
            if (!answered) {
              answered = true;
              this.#transport.send(failure(id, type, errorMessage(error)));
            } else {
              this.#log(`${type} failed after it was accepted: ${errorMessage(error)}`);
            }
          }),
        );
      }
    } catch (error) {
      this.#answer(failure(id, type, errorMessage(error)));
    }
  }

  /** Answers that must keep line order wait behind a pending explanation (rare: bad commands). */
  #ordered: Promise<void> | undefined;

  #answer(record: ResponseRecord | ExtensionUiError): void {
    if (this.#ordered) this.#answerLater(Promise.resolve(record));
    else this.#transport.send(record);
  }

  #answerLater(record: Promise<ResponseRecord | ExtensionUiError>): void {
    const previous = this.#ordered ?? Promise.resolve();
    const next = previous
      .then(async () => this.#transport.send(await record))
      .catch((error: unknown) => this.#log(`could not answer a command: ${errorMessage(error)}`));
    this.#ordered = next;
    this.#track(
      next.finally(() => {
        if (this.#ordered === next) this.#ordered = undefined;
      }),
    );
  }

  #track(work: Promise<void>): void {
    this.#inFlight.add(work);
    void work.finally(() => {
      this.#inFlight.delete(work);
      this.#maybeShutdown();
    });
  }

  // ---- output outside the line order ------------------------------------------------

  /** Writes one event record to the client. */
  emitEvent(record: RpcEvent): void {
    this.#transport.send(record);
  }

  /** An extension_error; the CLI also reports here what escapes third-party code. */
  reportError(report: ExtensionErrorReport): void {
    this.host.reportError(report);
  }

  // ---- shutdown --------------------------------------------------------------------

  /** ctx.shutdown(), through the host. */
  #requestShutdown(): void {
    if (this.#stopRequest === "none") this.#stopRequest = "when-idle";
    // Let the command that asked finish and answer first.
    setImmediate(() => this.#maybeShutdown());
  }

  #maybeShutdown(): void {
    if (this.#stopRequest !== "none" && this.#inFlight.size === 0 && !this.#holding) void this.shutdown("quit");
  }

  /**
   * Dismisses pending dialogs, stops the user's shell command and the run (whose tools' process
   * groups die with it), lets running commands answer (bounded), runs session_shutdown (bounded),
   * and flushes output. Idempotent. (The CLI kills any child still left as it exits: several
   * servers may share a process, so the process-wide registry is not this server's to empty.)
   */
  shutdown(reason: "quit" = "quit"): Promise<void> {
    this.#shutdown ??= (async () => {
      this.#enter("shutting_down");
      const grace = this.#options.shutdownGraceMs ?? 3000;
      this.dialogs.dismissAll("shutdown");
      // No child process outlives parley: what runs now is cancelled, as abort/abort_bash do.
      const stopped = this.#stopRunning();
      await withTimeout(Promise.allSettled([...this.#inFlight, stopped]), grace);
      await withTimeout(this.runtime.emit({ type: "session_shutdown", reason }), grace);
      this.dialogs.dismissAll("shutdown"); // dialogs opened by shutdown handlers
      // A client that stopped reading must not keep us from exiting.
      await withTimeout(this.#transport.flush(), grace);
      this.#enter("closed");
      this.#resolveClosed();
    })();
    return this.#shutdown;
  }

  /** Cancels the user's shell command and the agent's run; resolves when the run has settled. */
  async #stopRunning(): Promise<void> {
    if (!this.#core.hasAgent) return;
    const agent = this.#agent;
    agent.abortBash();
    // Extension code being waited on (a hung handler, a command) ends within the abort grace.
    this.runtime.awaited.letGo("shutdown");
    if (agent.isStreaming || agent.isCompacting) await agent.abort();
  }
}

/** A dialog answer: checked first for every line, so it is one test, with no array check (an array has no "type"). */
function isUiResponse(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && "type" in value && value.type === "extension_ui_response";
}

/** Only JSON's own whitespace counts; a record starts with "{" at once, so this is one comparison. */
function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0x0a) return false;
  }
  return true;
}

/** Only used while lines are held, so the second parse costs nothing later. */
function uiResponseOf(text: string): Record<string, unknown> | undefined {
  if (!text.includes("extension_ui_response")) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return isUiResponse(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
