/**
 * The RPC server: routes inbound lines to the dialog registry or the command table, hosts the
 * extensions, and writes every outbound record through one transport. Knows nothing of stdio.
 */
import { randomUUID } from "node:crypto";
import type { ImageContent, TextContent } from "@mariozechner/pi-ai";
import { checkCommand, emptyUiState, reduceUiState, type FireAndForgetRequest, type UiState } from "@parley/protocol";
import type { ExtensionErrorReport, ExtensionHost } from "../extensions/host.js";
import { ExtensionRuntime } from "../extensions/runtime.js";
import type { CustomMessageInput, ExtensionFactory, ExtensionUIContext, ThinkingLevel } from "../extensions/types.js";
import { Session } from "../session/session.js";
import { DialogRegistry } from "../ui/dialog-registry.js";
import { createRpcUiContext, type UiBridge } from "../ui/rpc-ui-context.js";
import { defaultSettings, type AgentSettings } from "./agent-state.js";
import { COMMANDS } from "./commands/index.js";
import { CommandError, failure, success } from "./responses.js";
import type { Transport, TransportSink } from "./transport.js";

export interface ExtensionSource {
  path: string;
  factory?: ExtensionFactory;
  /** Set when the file could not be loaded; reported as an extension_error. */
  error?: string;
  /** Where it was found: -e (temporary), ~/.parley (user) or ./.parley (project). */
  scope?: "temporary" | "user" | "project";
}

export interface RpcServerOptions {
  transport: Transport;
  cwd: string;
  extensions?: ExtensionSource[];
  sessionName?: string;
  /** Diagnostics for humans (stderr in the CLI); never the protocol stream. */
  log?: (message: string) => void;
  /** How long shutdown waits for running commands and session_shutdown handlers. */
  shutdownGraceMs?: number;
}

export class RpcServer implements ExtensionHost, UiBridge, TransportSink {
  readonly cwd: string;
  readonly dialogs: DialogRegistry;
  readonly runtime: ExtensionRuntime;
  readonly settings: AgentSettings = defaultSettings();
  #session: Session;
  #uiState: UiState = emptyUiState();
  readonly #transport: Transport;
  readonly #options: RpcServerOptions;
  readonly #log: (message: string) => void;
  readonly #uiContexts = new Map<string, ExtensionUIContext>();
  readonly #diagnosed = new Set<string>();
  /** Lines that arrived while start-up handlers ran; handled in order right after. */
  #backlog: string[] | undefined = [];
  readonly #inFlight = new Set<Promise<void>>();
  #shutdownRequested = false;
  #extensionFlags = new Map<string, string | boolean>();
  #shutdown: Promise<void> | undefined;
  #resolveClosed!: () => void;
  /** Resolves when the server has shut down and flushed its output. */
  readonly closed = new Promise<void>((resolve) => (this.#resolveClosed = resolve));

  constructor(options: RpcServerOptions) {
    this.#options = options;
    this.#transport = options.transport;
    this.cwd = options.cwd;
    this.#log = options.log ?? (() => {});
    this.#session = new Session(this.cwd);
    if (options.sessionName) this.#session.setName(options.sessionName);
    this.dialogs = new DialogRegistry({ send: (record) => this.#transport.send(record) });
    this.runtime = new ExtensionRuntime(this);
  }

  /** Runs the extension factories (they register commands, handlers and flags). */
  async loadExtensions(): Promise<void> {
    for (const ext of this.#options.extensions ?? []) {
      if (ext.error !== undefined || !ext.factory) {
        this.reportError({ extensionPath: ext.path, event: "load", error: ext.error ?? "no factory" });
        continue;
      }
      await this.runtime.add(ext.path, ext.factory, ext.scope);
    }
  }

  /** Values given on the command line for the flags extensions registered. */
  setExtensionFlags(flags: Map<string, string | boolean>): void {
    this.#extensionFlags = flags;
  }

  /** Starts reading input and runs session_start; lines that arrive meanwhile wait their turn. */
  async begin(): Promise<void> {
    this.#transport.start(this);
    await this.runtime.emit({ type: "session_start", reason: "startup" });
    const backlog = this.#backlog ?? [];
    this.#backlog = undefined;
    for (const line of backlog) this.#handleLine(line);
    this.#maybeShutdown();
  }

  async start(): Promise<void> {
    await this.loadExtensions();
    await this.begin();
  }

  // ---- TransportSink ---------------------------------------------------------

  line(text: string): void {
    if (this.#shutdown) return;
    // Dialog answers are never queued: a start-up handler may be waiting for one.
    if (this.#backlog && !isUiResponseLine(text)) this.#backlog.push(text);
    else this.#handleLine(text);
  }

  overflow(info: { bytes: number; maxLineBytes: number }): void {
    this.#transport.send(
      failure(undefined, "parse", `Line of ${info.bytes} bytes exceeds the maximum of ${info.maxLineBytes} bytes and was discarded (raise it with --max-line-bytes)`),
    );
  }

  end(): void {
    void this.shutdown("quit");
  }

  // ---- input -----------------------------------------------------------------

  #handleLine(text: string): void {
    if (text.trim() === "") return; // blank lines (e.g. a stray Enter) carry nothing to answer
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      this.#transport.send(failure(undefined, "parse", `Failed to parse command: ${(error as Error).message}`));
      return;
    }
    if (isRecord(value) && value["type"] === "extension_ui_response") {
      this.dialogs.handleResponse(value);
      return;
    }
    const check = checkCommand(value);
    if (!check.ok) {
      this.#transport.send(failure(check.id, check.command, check.error));
      return;
    }
    const { command } = check;
    const handler = COMMANDS[command.type];
    const id = command.id;
    try {
      if (handler.kind === "sync") {
        this.#transport.send(success(id, command.type, (handler.run as (c: unknown, s: RpcServer) => unknown)(command, this)));
      } else {
        this.#track(
          (handler.run as (c: unknown, s: RpcServer) => Promise<unknown>)(command, this).then(
            (data) => this.#transport.send(success(id, command.type, data)),
            (error: unknown) => this.#transport.send(failure(id, command.type, messageOf(error))),
          ),
        );
      }
    } catch (error) {
      this.#transport.send(failure(id, command.type, messageOf(error)));
    }
    this.#maybeShutdown();
  }

  #track(work: Promise<void>): void {
    this.#inFlight.add(work);
    void work.finally(() => {
      this.#inFlight.delete(work);
      this.#maybeShutdown();
    });
  }

  // ---- state for the command handlers -----------------------------------------

  session(): Session {
    return this.#session;
  }

  uiState(): UiState {
    return this.#uiState;
  }

  isIdle(): boolean {
    return true;
  }

  abort(): void {
    // Nothing streams until the agent loop exists; abort is then a no-op by definition.
  }

  thinkingLevel(): ThinkingLevel {
    return this.settings.thinkingLevel;
  }

  /** Levels the current model supports; without a model only "off". */
  availableThinkingLevels(): ThinkingLevel[] {
    return ["off"];
  }

  /** Clamps to what the model supports (as pi does) and announces a real change. */
  setThinkingLevel(level: ThinkingLevel): void {
    const available = this.availableThinkingLevels();
    const effective = available.includes(level) ? level : (available.at(-1) ?? "off");
    if (effective === this.settings.thinkingLevel) return;
    this.settings.thinkingLevel = effective;
    this.#transport.send({ type: "thinking_level_changed", level: effective });
  }

  setSessionName(name: string): void {
    this.#session.setName(name);
    this.#transport.send({ type: "session_info_changed", ...(name ? { name } : {}) });
  }

  /** Replaces the session unless a session_before_switch handler cancels. */
  async newSession(options: { parentSession?: string | undefined } = {}): Promise<{ cancelled: boolean }> {
    const verdict = await this.runtime.emit({ type: "session_before_switch", reason: "new" });
    if (verdict?.cancel === true) return { cancelled: true };
    await this.runtime.emit({ type: "session_shutdown", reason: "new" });
    const previous = this.#session.file;
    this.#session = new Session(this.cwd, options.parentSession !== undefined ? { parentSession: options.parentSession } : {});
    await this.runtime.emit({ type: "session_start", reason: "new", ...(previous !== undefined ? { previousSessionFile: previous } : {}) });
    return { cancelled: false };
  }

  // ---- ExtensionHost ------------------------------------------------------------

  ui(extensionPath: string): ExtensionUIContext {
    let ui = this.#uiContexts.get(extensionPath);
    if (!ui) {
      ui = createRpcUiContext(this, extensionPath);
      this.#uiContexts.set(extensionPath, ui);
    }
    return ui;
  }

  reportError(report: ExtensionErrorReport): void {
    this.#log(`extension error (${report.event}) in ${report.extensionPath}: ${report.stack ?? report.error}`);
    this.#transport.send({ type: "extension_error", extensionPath: report.extensionPath, event: report.event, error: report.error });
  }

  requestShutdown(): void {
    this.#shutdownRequested = true;
    // Let the command that asked finish and answer first.
    setImmediate(() => this.#maybeShutdown());
  }

  sendMessage(message: CustomMessageInput): void {
    const custom = { role: "custom", customType: message.customType, content: message.content, display: message.display ?? true, details: message.details, timestamp: Date.now() };
    this.#session.append({ type: "message", message: custom });
    this.#transport.send({ type: "message_start", message: custom });
    this.#transport.send({ type: "message_end", message: custom });
  }

  sendUserMessage(_content: string | (TextContent | ImageContent)[]): void {
    this.diagnostic("pi.sendUserMessage() needs the agent loop, which this build of parley does not have yet; the message was not sent");
  }

  cliFlag(name: string): string | boolean | undefined {
    return this.#extensionFlags.get(name);
  }

  diagnostic(message: string): void {
    this.#log(message);
  }

  // ---- UiBridge -------------------------------------------------------------------

  fireAndForget(spec: Parameters<UiBridge["fireAndForget"]>[0]): void {
    const record = { type: "extension_ui_request", id: randomUUID(), ...spec } as FireAndForgetRequest;
    this.#uiState = reduceUiState(this.#uiState, record);
    this.dialogs.noteFireAndForget(record.id, record.method);
    this.#transport.send(record);
  }

  diagnose(extensionPath: string, method: string, behaviour: string): void {
    const key = `${extensionPath}\0${method}`;
    if (this.#diagnosed.has(key)) return;
    this.#diagnosed.add(key);
    this.#log(`${extensionPath}: ctx.ui.${method}() is not supported in RPC mode and ${behaviour}`);
  }

  // ---- shutdown --------------------------------------------------------------------

  #maybeShutdown(): void {
    if (this.#shutdownRequested && this.#inFlight.size === 0 && !this.#backlog) void this.shutdown("quit");
  }

  /**
   * Dismisses pending dialogs, lets running commands finish (bounded), runs session_shutdown
   * (bounded), and flushes output. Idempotent.
   */
  shutdown(reason: "quit" = "quit"): Promise<void> {
    this.#shutdown ??= (async () => {
      const grace = this.#options.shutdownGraceMs ?? 3000;
      this.dialogs.dismissAll("shutdown");
      await withTimeout(Promise.allSettled([...this.#inFlight]), grace);
      await withTimeout(this.runtime.emit({ type: "session_shutdown", reason }), grace);
      this.dialogs.dismissAll("shutdown"); // dialogs opened by shutdown handlers
      await this.#transport.flush();
      this.#resolveClosed();
    })();
    return this.#shutdown;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Only used while start-up handlers run, so the second parse costs nothing later. */
function isUiResponseLine(text: string): boolean {
  if (!text.includes("extension_ui_response")) return false;
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) && value["type"] === "extension_ui_response";
  } catch {
    return false;
  }
}

function messageOf(error: unknown): string {
  if (error instanceof CommandError) return error.message;
  return error instanceof Error ? error.message : String(error);
}

async function withTimeout(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  if (timer) clearTimeout(timer);
}
