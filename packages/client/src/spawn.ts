/**
 * A transport over a spawned agent process (`parley --mode rpc`, `pi --mode rpc`, or any
 * command line that speaks the protocol on stdin/stdout). stderr is kept (a bounded tail)
 * and streamed to listeners; the exit code, signal and stderr tail end up in CloseInfo.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { attachJsonlReader } from "@parley/protocol/jsonl";
import { Emitter, type Disposable } from "@parley/protocol/disposable";
import { ConnectionClosedError, ProtocolError, type CloseInfo } from "./errors.js";
import { TransportBase } from "./transport.js";

export interface SpawnTransportOptions {
  cwd?: string;
  /** The child's environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** How much of the end of stderr to keep for CloseInfo / ConnectionClosedError (default 8192 characters). */
  stderrTailChars?: number;
  /** Lines longer than this many bytes are discarded and reported as a ProtocolError. */
  maxLineBytes?: number;
}

export interface ProcessCloseOptions {
  /**
   * close() ends the agent's stdin and waits for it to exit (parley and pi exit on EOF).
   * With this, it sends SIGTERM if the agent is still running that many ms later, and
   * SIGKILL after as long again. No default: without it close() waits as long as the agent takes.
   */
  killAfterMs?: number;
}

export class ProcessTransport extends TransportBase {
  readonly child: ChildProcessWithoutNullStreams;
  readonly #stderr = new Emitter<string>();
  readonly #tailChars: number;
  #stderrTail = "";
  #closing = false;
  #killTimers: NodeJS.Timeout[] = [];

  constructor(command: string, args: readonly string[], options: SpawnTransportOptions = {}) {
    super();
    this.#tailChars = options.stderrTailChars ?? 8192;
    this.child = spawn(command, [...args], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const child = this.child;
    child.once("spawn", () => this.markOpen());
    // Spawn failures (ENOENT, EACCES) and kill failures: a spawn failure is followed by "close".
    let spawnError: Error | undefined;
    child.on("error", (error) => (spawnError ??= error));
    // EPIPE after the agent exited: the exit is what we report.
    child.stdin.on("error", () => {});
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text: string) => {
      this.#stderrTail = (this.#stderrTail + text).slice(-this.#tailChars);
      this.#stderr.fire(text);
    });
    attachJsonlReader(child.stdout, (line) => this.receiveLine(line), {
      ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
      onOverflow: ({ bytes, maxLineBytes }) =>
        this.reportProtocolError(new ProtocolError(`The agent wrote a line of ${bytes} bytes; the limit is ${maxLineBytes}`)),
    });
    // "close" comes after the exit and after stdout/stderr ended, so no record is lost.
    child.once("close", (exitCode: number | null, signal: NodeJS.Signals | null) => {
      for (const timer of this.#killTimers) clearTimeout(timer);
      const info: CloseInfo = {
        reason: spawnError !== undefined ? "error" : this.#closing ? "local" : "remote",
        exitCode,
        signal,
        stderrTail: this.#stderrTail,
        ...(spawnError === undefined ? {} : { error: spawnError }),
      };
      this.markClosed(info);
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Everything written so far to stderr, up to the configured tail size. */
  get stderrTail(): string {
    return this.#stderrTail;
  }

  /** stderr text as it arrives. */
  onStderr(listener: (text: string) => void): Disposable {
    return this.#stderr.event(listener);
  }

  protected writeLine(line: string): void {
    if (this.#closing) return;
    this.child.stdin.write(line);
  }

  override send(record: object): void {
    if (this.#closing && !this.isClosed) {
      // After close(): the agent is shutting down and may still be writing; nothing more goes in.
      throw new ConnectionClosedError({ reason: "local" }, "Connection closed by the client (the agent is still exiting)");
    }
    super.send(record);
  }

  close(options: ProcessCloseOptions = {}): Promise<void> {
    if (!this.isClosed && !this.#closing) {
      this.#closing = true;
      this.child.stdin.end();
      const after = options.killAfterMs;
      if (after !== undefined) {
        this.#killTimers.push(
          setTimeout(() => this.kill("SIGTERM"), after),
          setTimeout(() => this.kill("SIGKILL"), 2 * after),
        );
      }
    }
    return this.closed.then(() => undefined);
  }

  /** Sends a signal to the agent (default SIGTERM); the transport closes when it exits. */
  kill(signal: NodeJS.Signals = "SIGTERM"): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }
}

/** Spawns `command args…` and speaks JSON lines over its stdin/stdout. */
export function spawnTransport(command: string, args: readonly string[] = [], options: SpawnTransportOptions = {}): ProcessTransport {
  return new ProcessTransport(command, args, options);
}
