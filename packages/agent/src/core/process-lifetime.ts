/**
 * How a parley process ends, the same in every mode (RPC, web, ACP): no child process outlives
 * it; a signal shuts the server down and exits with the conventional 128+n status (a second
 * signal while shutting down exits at once); stdin EOF, ctx.shutdown() and a reader that went
 * away exit 0; what escapes third-party code is reported, not fatal.
 */
import { killAllChildren } from "../child-processes.js";
import { errorText } from "../error-text.js";
import type { FrontDoor } from "./agent-core.js";
import { watchOutputClosed } from "../transport/output-watch.js";
import { takeOverStdout } from "../transport/protocol-stdout.js";

const EXIT_SIGNALS = [
  ["SIGTERM", 143],
  ["SIGINT", 130],
  ["SIGHUP", 129],
  // Not handled by Node: it would dump core and leave the shell commands running.
  ["SIGQUIT", 131],
] as const;

export class ProcessLifetime {
  #server: Pick<FrontDoor, "shutdown" | "closed" | "reportError"> | undefined;
  #exitCode = 0;
  #signalled = false;

  /**
   * However parley ends, no child process it started outlives it (the exit event allows
   * synchronous kills only). Made first thing, before anything that may start a child (a package
   * manager asked at start-up, extension code): until serve(), a signal exits at once with its
   * status, and the exit event ends the children; from serve() on, it shuts the server down.
   */
  constructor() {
    process.on("exit", killAllChildren);
    for (const [signal, code] of EXIT_SIGNALS) process.on(signal, () => this.#onSignal(code));
  }

  #onSignal(code: number): void {
    const server = this.#server;
    // Before serving, or a second signal while shutting down: exit now (the exit event still kills the children).
    if (!server || this.#signalled) process.exit(code);
    this.#signalled = true;
    this.#exitCode = code;
    void server.shutdown();
  }

  /** Serves until the server has closed, then exits; signals shut it down and escaped errors are reported from now on. */
  serve(server: Pick<FrontDoor, "shutdown" | "closed" | "reportError">): void {
    this.#server = server;
    // Third-party code must not take the agent down: report what escapes it, keep serving.
    // Anything can be thrown (null, a string): errorText describes it without throwing again.
    process.on("uncaughtException", (thrown: unknown) => server.reportError({ extensionPath: "<unknown>", event: "uncaughtException", ...errorText(thrown) }));
    process.on("unhandledRejection", (reason) => server.reportError({ extensionPath: "<unknown>", event: "unhandledRejection", ...errorText(reason) }));
    void server.closed.then(() => process.exit(this.#exitCode));
  }

  /** The reader of our stdout went away: nobody can hear us, so finish quietly (exit 0). */
  readonly outputClosed = (): void => {
    const server = this.#server;
    if (!server) process.exit(0);
    void server.shutdown().then(() => process.exit(0));
  };

  /** A reader that goes away is noticed at once, even while nothing is written (a silent command). */
  watchStdout(): void {
    watchOutputClosed(takeOverStdout().output.fd, this.outputClosed);
  }

  /** The mode's work is done (print mode's prompts have run): shut down, then exit with `code`. */
  finish(code: number): void {
    // A signal that stopped the work decides the status (the work then ends early, seemingly fine).
    if (!this.#signalled) this.#exitCode = code;
    void this.#server?.shutdown();
  }

  /** The mode cannot go on (web: the port is taken): shut down, then exit with `code`. */
  fail(code: number): void {
    this.#exitCode = code;
    void this.#server?.shutdown();
  }
}
