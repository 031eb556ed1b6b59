/**
 * The `bash` RPC command: runs a shell command for the user (not the model), streams its output,
 * and records it so the next prompt's context includes it.
 *
 * - Commands run concurrently, as in pi (a client may start one while another still runs);
 *   `abort()` (abort_bash) kills every running command's whole process group at once, and each
 *   result comes back with `cancelled: true` and no exit code.
 * - Output is cleaned up for display (ANSI escapes, CRs and other control characters removed) and
 *   streamed chunk by chunk. The result keeps the tail, with the bash tool's limits (2000 lines or
 *   50KB, whichever is hit first); the complete output then goes to a temp file (`fullOutputPath`).
 * - Extensions see `user_bash` first: the first handler that returns something decides. It may
 *   return `{ result }` (no command runs) or `{ operations }` (run the command through them).
 * - The run is recorded as a `bashExecution` message (in the agent's context and the session it
 *   started in: a session switch cancels it, and its result never joins the next session),
 *   with `excludeFromContext` when asked, in which case the model never sees it. No event is
 *   emitted for it. While a run is going, recording waits until it is over, so the message never
 *   lands between a tool call and its result; a prompt still being prepared has not touched the
 *   context yet, so the run it starts sees the output (as `!ls` then a prompt should).
 */
import type { WriteStream } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { BashExecutionMessage } from "@parley/protocol";
import { createLocalBashOperations, type BashOperations } from "../tools/bash-operations.js";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, truncateTail } from "../tools/truncate.js";
import type { ExtensionRuntime } from "../extensions/runtime.js";
import { createOutputFileStream } from "../output-files.js";
import type { Session } from "../session/session.js";
import type { OutputPressure } from "../output-pressure.js";

/** What the user's shell commands need from the agent (AgentSession is one). */
export interface UserBashHost {
  readonly runtime: Pick<ExtensionRuntime, "hasHandlers" | "emitChained">;
  /** A run owns the context: recording waits until it is over. */
  readonly isRunning: boolean;
  waitForIdle(): Promise<void>;
  /** The context the next model call sees; the command's output joins it. */
  messages: AgentMessage[];
  readonly session: Pick<Session, "append">;
}

export interface BashResult {
  output: string;
  exitCode: number | undefined;
  cancelled: boolean;
  truncated: boolean;
  fullOutputPath?: string;
}

export interface UserBashOptions {
  /** Default: the local shell (bash, else sh), as the bash tool uses it. */
  operations?: BashOperations;
  shellPath?: string;
  /** settings.json `shellCommandPrefix`: runs on its own line before the command (the recorded command stays the user's). */
  commandPrefix?: string;
}

// CSI (colours, cursor movement), OSC (titles, hyperlinks; ended by BEL or ST) and two-character escapes.
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]|\u009b[0-?]*[ -/]*[@-~]/g;
// C0 controls except tab and LF, DEL, C1 controls, and the interlinear annotation characters.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\ufff9-\ufffb]/g;

/** Terminal output as plain text: no escape sequences, no CRs, no other control characters. */
export function sanitizeOutput(text: string): string {
  return text.replace(ANSI, "").replace(CONTROL, "");
}

/** Whether a whole escape sequence starts at `at` (one cut off by a chunk boundary does not match). */
function completeEscape(text: string, at: number): boolean {
  const sticky = new RegExp(ANSI.source, "y");
  sticky.lastIndex = at;
  return sticky.test(text);
}

// Decoded tail kept in memory. Twice the byte limit always holds whatever truncateTail keeps.
const TAIL_WINDOW_CHARS = DEFAULT_MAX_BYTES * 2;

/** Output with bounded memory: a tail window, totals, and the whole text in a temp file once it outgrows the limits. */
class Collector {
  readonly #decoder = new StringDecoder("utf8");
  /** Everything so far, until the file takes over. */
  #chunks: string[] | undefined = [];
  #tail = "";
  #bytes = 0;
  #lines = 1;
  #file: WriteStream | undefined;
  #fileError: Error | undefined;
  path: string | undefined;

  constructor(readonly onText: (text: string) => void) {}

  /** The start of an escape sequence cut off at the end of a chunk, completed by the next one. */
  #carry = "";

  data(chunk: Buffer): void {
    let raw = this.#carry + this.#decoder.write(chunk);
    this.#carry = "";
    const escape = raw.lastIndexOf("\u001b");
    if (escape !== -1 && raw.length - escape < 64 && !completeEscape(raw, escape)) {
      this.#carry = raw.slice(escape);
      raw = raw.slice(0, escape);
    }
    this.#text(raw);
  }

  #text(raw: string): void {
    const text = sanitizeOutput(raw);
    if (text === "") return;
    this.#bytes += Buffer.byteLength(text, "utf8");
    for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) this.#lines++;
    this.#tail += text;
    if (this.#tail.length > TAIL_WINDOW_CHARS) this.#tail = this.#tail.slice(-TAIL_WINDOW_CHARS);
    if (this.#file) this.#file.write(text);
    else {
      this.#chunks?.push(text);
      if (this.#bytes > DEFAULT_MAX_BYTES || this.#lines > DEFAULT_MAX_LINES) this.#openFile();
    }
    this.onText(text);
  }

  #openFile(): void {
    if (this.#file) return;
    const { path, stream } = createOutputFileStream("parley-bash", ".log");
    this.path = path;
    this.#file = stream;
    this.#file.on("error", (error) => (this.#fileError = error));
    for (const chunk of this.#chunks ?? []) this.#file.write(chunk);
    this.#chunks = undefined;
  }

  /** Flushes the decoder and the file; the output as the result shows it. */
  async finish(): Promise<{ output: string; truncated: boolean; fullOutputPath?: string }> {
    this.#text(this.#carry + this.#decoder.end());
    this.#carry = "";
    const truncation = truncateTail(this.#tail);
    if (truncation.truncated) this.#openFile();
    const file = this.#file;
    if (file) await new Promise<void>((resolve) => file.end(() => resolve()));
    const full = this.#chunks?.join("") ?? this.#tail;
    if (!truncation.truncated) return { output: full, truncated: false };
    return {
      output: truncation.content,
      truncated: true,
      // A file we could not write is not worth pointing at.
      ...(this.path !== undefined && this.#fileError === undefined ? { fullOutputPath: this.path } : {}),
    };
  }
}

export class UserBash {
  readonly #agent: UserBashHost;
  readonly #cwd: string;
  readonly #operations: BashOperations;
  readonly #prefix: string | undefined;
  /** The abort of each command still running. */
  readonly #running = new Set<AbortController>();
  /** Runs finished while the agent was streaming; recorded once it is idle, each in the session it started in. */
  #pending: { message: BashExecutionMessage; session: UserBashHost["session"] }[] = [];
  #flushing = false;

  constructor(agent: UserBashHost, cwd: string, options: UserBashOptions = {}) {
    this.#agent = agent;
    this.#cwd = cwd;
    this.#operations = options.operations ?? createLocalBashOperations(options.shellPath !== undefined ? { shellPath: options.shellPath } : {});
    this.#prefix = options.commandPrefix;
  }

  get isRunning(): boolean {
    return this.#running.size > 0;
  }

  async run(command: string, options: { onDelta: (delta: string) => void; excludeFromContext?: boolean; output?: OutputPressure }): Promise<BashResult> {
    const controller = new AbortController();
    this.#running.add(controller);
    // A session switch cancels the command; its result still belongs to this session, not the next.
    const session = this.#agent.session;
    const excludeFromContext = options.excludeFromContext === true;
    try {
      const intercepted = await this.#intercept(command, excludeFromContext);
      let result: BashResult;
      if (intercepted?.result) {
        result = intercepted.result;
        if (result.output) options.onDelta(result.output);
      } else {
        const run = this.#prefix ? `${this.#prefix}\n${command}` : command;
        result = await this.#execute(run, intercepted?.operations ?? this.#operations, controller.signal, options.onDelta, options.output);
      }
      this.#record(command, result, excludeFromContext, session);
      return result;
    } finally {
      this.#running.delete(controller);
    }
  }

  abort(): void {
    for (const controller of this.#running) controller.abort();
  }

  /** The first `user_bash` handler that answers decides; a malformed answer is ignored. */
  async #intercept(command: string, excludeFromContext: boolean): Promise<{ result?: BashResult; operations?: BashOperations } | undefined> {
    const runtime = this.#agent.runtime;
    if (!runtime.hasHandlers("user_bash")) return undefined;
    let answer: unknown;
    await runtime.emitChained({ type: "user_bash", command, excludeFromContext, cwd: this.#cwd }, (event, result) => {
      answer = result;
      return { event, stop: true };
    });
    if (typeof answer !== "object" || answer === null) return undefined;
    const { result, operations } = answer as { result?: unknown; operations?: unknown };
    if (typeof result === "object" && result !== null) return { result: normaliseResult(result as Partial<BashResult>) };
    if (typeof operations === "object" && operations !== null && typeof (operations as BashOperations).exec === "function") {
      return { operations: operations as BashOperations };
    }
    return undefined;
  }

  async #execute(
    command: string,
    operations: BashOperations,
    signal: AbortSignal,
    onDelta: (delta: string) => void,
    pressure: OutputPressure | undefined,
  ): Promise<BashResult> {
    const output = new Collector(onDelta);
    let exitCode: number | null = null;
    let failure: unknown;
    try {
      ({ exitCode } = await operations.exec(command, this.#cwd, {
        onData: (data) => output.data(Buffer.isBuffer(data) ? data : Buffer.from(data)),
        signal,
        ...(pressure ? { output: pressure } : {}),
      }));
    } catch (error) {
      failure = error;
    }
    const collected = await output.finish();
    const cancelled = signal.aborted;
    if (failure !== undefined && !cancelled) throw failure;
    return {
      output: collected.output,
      exitCode: cancelled || exitCode === null ? undefined : exitCode,
      cancelled,
      truncated: collected.truncated,
      ...(collected.fullOutputPath !== undefined ? { fullOutputPath: collected.fullOutputPath } : {}),
    };
  }

  #record(command: string, result: BashResult, excludeFromContext: boolean, session: UserBashHost["session"]): void {
    const message: BashExecutionMessage = {
      role: "bashExecution",
      command,
      output: result.output,
      ...(result.exitCode !== undefined ? { exitCode: result.exitCode } : {}),
      cancelled: result.cancelled,
      truncated: result.truncated,
      ...(result.fullOutputPath !== undefined ? { fullOutputPath: result.fullOutputPath } : {}),
      timestamp: Date.now(),
      ...(excludeFromContext ? { excludeFromContext: true } : {}),
    };
    this.#pending.push({ message, session });
    if (this.#agent.isRunning) void this.#flushWhenIdle();
    else this.#flush();
  }

  /**
   * Waits on exactly what waitForIdle() waits for (a run). Waiting on a wider condition, such as
   * a prompt still being prepared, made this loop spin on an already-settled promise: microtasks
   * only, so the preparation (which needs I/O) never finished, nor did anything else.
   */
  async #flushWhenIdle(): Promise<void> {
    if (this.#flushing) return;
    this.#flushing = true;
    try {
      while (this.#agent.isRunning) await this.#agent.waitForIdle();
    } finally {
      this.#flushing = false;
    }
    this.#flush();
  }

  #flush(): void {
    const pending = this.#pending;
    this.#pending = [];
    if (pending.length === 0) return;
    // The context is the current session's: a run of a session left since is recorded there only.
    const current = pending.filter((p) => p.session === this.#agent.session).map((p) => p.message);
    if (current.length > 0) this.#agent.messages = [...this.#agent.messages, ...current];
    for (const { message, session } of pending) session.append({ type: "message", message });
  }
}

function normaliseResult(result: Partial<BashResult>): BashResult {
  return {
    output: typeof result.output === "string" ? result.output : "",
    exitCode: typeof result.exitCode === "number" ? result.exitCode : undefined,
    cancelled: result.cancelled === true,
    truncated: result.truncated === true,
    ...(typeof result.fullOutputPath === "string" ? { fullOutputPath: result.fullOutputPath } : {}),
  };
}
