/**
 * pi's one-shot modes: `-p` / `--print` (the final assistant text on stdout) and `--mode json`
 * (the session header, then every session event as a JSON line). The prompts are given at start
 * (initial-message.ts plans them); each runs to its end (retries and compaction included) before the
 * next; then the run shuts down as pi's does (session_shutdown) and exits.
 *
 * There is no client to answer dialogs: extensions get `ctx.hasUI === false`, `ctx.mode` "print"
 * or "json", and a ctx.ui that answers nothing (ui/no-ui-context.ts), as in pi. What is for humans
 * (warnings, extension errors, the error of a failed reply) goes to stderr.
 */
import { Readable } from "node:stream";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { AgentError } from "../../agent/agent-error.js";
import type { ExtensionLoadFailure, ExtensionSource } from "../../extensions/extension-source.js";
import type { ExtensionErrorReport } from "../../extensions/host.js";
import type { ExtensionRuntime } from "../../extensions/runtime.js";
import { errorMessage } from "../../error-text.js";
import { StdioTransport } from "../../transport/stdio.js";
import { DialogRegistry } from "../../ui/dialog-registry.js";
import { withTimeout } from "../../with-timeout.js";
import { AgentCore, type AgentCoreSettings, type AgentView, type FrontDoor } from "../../core/agent-core.js";
import type { PromptPlan } from "./initial-message.js";

export type PrintOutput = "text" | "json";

export interface PrintModeOptions {
  output: PrintOutput;
  /** Diagnostics for humans: stderr. */
  log: (message: string) => void;
  /** Writes text to the protocol's stdout (takeOverStdout); resolves once it is taken. */
  writeText: (text: string) => Promise<void>;
  /** The reader of stdout went away. */
  onOutputClosed?: ((error: Error) => void) | undefined;
  /** How long shutdown waits for session_shutdown handlers and output (default 3 s). */
  shutdownGraceMs?: number | undefined;
}

/** The agent as print and JSON mode use it: run the prompts, read the last reply, stop. */
export type PrintAgent = AgentView<"session" | "messages" | "prompt" | "waitForIdle" | "isStreaming" | "abort" | "abortBash">;

/** The exit status of a print run that failed (an error reply, an aborted or cut-off one, a prompt refused), as pi's. */
const FAILED = 1;

export class PrintFrontDoor implements FrontDoor {
  readonly #core: AgentCore;
  readonly #options: PrintModeOptions;
  /** JSON mode's stdout: one record per line, with back-pressure on the loop. */
  readonly #json: StdioTransport | undefined;
  #shutdown: Promise<void> | undefined;
  #resolveClosed!: () => void;
  readonly closed = new Promise<void>((resolve) => (this.#resolveClosed = resolve));

  constructor(settings: AgentCoreSettings, options: PrintModeOptions) {
    this.#options = options;
    this.#json =
      options.output === "json"
        ? new StdioTransport({
            // Nothing is read: the prompts were all given at start.
            input: Readable.from([]),
            ...(options.onOutputClosed ? { onOutputClosed: options.onOutputClosed } : {}),
          })
        : undefined;
    // No dialog reaches the registry (ctx.ui answers at once), but the host wants one.
    const dialogs = new DialogRegistry({ send: () => {} });
    this.#core = new AgentCore(settings, {
      dialogs,
      send: (record) => this.#hostRecord(record),
      emit: (event) => this.#json?.send(event),
      output: this.#json,
      // pi's print mode does not stop for ctx.shutdown(): the run ends when its prompts have.
      requestShutdown: () => {},
      mode: options.output === "json" ? "json" : "print",
    });
  }

  /** The whole agent, for the CLI's start-up; this mode's own code uses #agent. */
  get agent(): FrontDoor["agent"] {
    return this.#core.agent;
  }

  get #agent(): PrintAgent {
    return this.#core.agent;
  }

  get runtime(): ExtensionRuntime {
    return this.#core.runtime;
  }

  loadExtensions(options: { explicitFailuresFatal?: boolean } = {}): Promise<ExtensionLoadFailure[]> {
    return this.#core.loadExtensions(options);
  }

  addExtensions(sources: readonly ExtensionSource[], order: readonly string[]): Promise<void> {
    return this.#core.addExtensions(sources, order);
  }

  setExtensionFlags(flags: Map<string, string | boolean>): void {
    this.#core.host.setExtensionFlags(flags);
  }

  /** Extension errors are said on stderr by the host; none reaches stdout, as in pi. */
  reportError(report: ExtensionErrorReport): void {
    this.#core.host.reportError(report);
  }

  /**
   * The host's own records: in JSON mode the session events among them (an appended entry, the
   * session's name) go out with the agent's; extension errors were said on stderr already.
   */
  #hostRecord(record: object): void {
    if (this.#json === undefined || !("type" in record)) return;
    if (record.type === "entry_appended" || record.type === "session_info_changed") this.#json.send(record);
  }

  /**
   * Runs the prompts and returns the exit status: in print mode 1 when the last reply is an error
   * or was aborted (its error said on stderr) or cut off at the output limit (its text printed, a
   * warning said); in JSON mode failures are events, and only a prompt refused outright fails.
   */
  async run(plan: PromptPlan): Promise<number> {
    if (this.#json) this.#json.send(this.#agent.session.header);
    await this.#core.startSession();
    try {
      if (plan.initial) await this.#prompt(plan.initial.text, plan.initial.images);
      for (const message of plan.rest) await this.#prompt(message, undefined);
    } catch (error) {
      this.#options.log(error instanceof AgentError ? error.message : errorMessage(error));
      return FAILED;
    }
    return this.#json ? 0 : this.#printLastReply();
  }

  /**
   * One prompt to the end of its run, as pi's session.prompt() is awaited; a `/command` until its
   * handler returns (as in pi, a turn the command starts is not waited for).
   */
  async #prompt(text: string, images: Parameters<PrintAgent["prompt"]>[1]): Promise<void> {
    const agent = this.#agent;
    if (this.runtime.findCommand(text) !== undefined) {
      await this.runtime.runCommand(text);
      return;
    }
    await agent.prompt(text, images, { source: "interactive" });
    await agent.waitForIdle();
  }

  async #printLastReply(): Promise<number> {
    const last: AgentMessage | undefined = this.#agent.messages.at(-1);
    if (last?.role !== "assistant") return 0;
    if (last.stopReason === "error" || last.stopReason === "aborted") {
      this.#options.log(last.errorMessage || `Request ${last.stopReason}`);
      return FAILED;
    }
    const text = last.content.flatMap((block) => (block.type === "text" ? [`${block.text}\n`] : [])).join("");
    if (text !== "") await this.#options.writeText(text);
    if (last.stopReason === "length") {
      this.#options.log("Response was truncated: the model reached its output token limit.");
      return FAILED;
    }
    return 0;
  }

  /** Stops what runs (a signal), runs session_shutdown (bounded) and flushes stdout; idempotent. */
  shutdown(): Promise<void> {
    this.#shutdown ??= (async () => {
      const grace = this.#options.shutdownGraceMs ?? 3000;
      if (this.#core.hasAgent) {
        const agent = this.#agent;
        agent.abortBash();
        if (agent.isStreaming) await withTimeout(agent.abort(), grace);
        await withTimeout(this.runtime.emit({ type: "session_shutdown", reason: "quit" }), grace);
      }
      if (this.#json) await withTimeout(this.#json.flush(), grace);
      this.#resolveClosed();
    })();
    return this.#shutdown;
  }
}
