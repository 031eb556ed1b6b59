import type { WriteStream } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { type Static, Type } from "typebox";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize, type TruncationResult, truncateTail } from "./truncate.js";
import type { AgentTool, AgentToolResult, ToolDefinition } from "./types.js";
import { ABORTED, TIMEOUT_PREFIX, createLocalBashOperations, type BashSpawnContext, type BashToolDetails, type BashToolOptions } from "./bash-operations.js";
// The process plumbing lives apart (the bash RPC command uses it without loading TypeBox).
export * from "./bash-operations.js";
import { toAgentTool } from "./util.js";
import { errorMessage } from "../error-text.js";
import { createOutputFileStream } from "../output-files.js";

const bashSchema = Type.Object({
  command: Type.String({ description: "The bash command to run" }),
  timeout: Type.Optional(Type.Number({ description: "Timeout in seconds (optional; by default there is none)" })),
});

export type BashToolInput = Static<typeof bashSchema>;

// Decoded tail kept in memory for display. Twice the byte limit guarantees the
// tail holds everything truncateTail can keep (a char is at least one byte).
const TAIL_WINDOW_CHARS = DEFAULT_MAX_BYTES * 2;

/** Half of what a codemode script's `tools.bash()` gets of the output (pi 1.6: 1 MiB in all). */
const STRUCTURED_HALF = 512 * 1024;

/** What a codemode script's `tools.bash()` resolves to (pi 1.6's), also when the command fails. */
const bashOutputSchema = Type.Object({
  output: Type.String({ description: "stdout and stderr together, shortened when very long" }),
  truncated: Type.Boolean(),
  full_output_path: Type.Optional(Type.String({ description: "The whole output, when shortened" })),
  exit_code: Type.Number(),
  wall_time_seconds: Type.Number(),
});

/**
 * Collects streamed output with bounded memory: a decoded tail for display,
 * running totals, and, once the output outgrows the limits, the full raw
 * output in a temp file.
 */
class OutputCollector {
  private readonly decoder = new StringDecoder("utf8");
  private tail = "";
  private totalBytes = 0;
  private newlines = 0;
  private currentLineBytes = 0;
  private pending: Buffer[] = [];
  private file: WriteStream | undefined;
  fullOutputPath: string | undefined;

  /** The raw output's first and last STRUCTURED_HALF bytes, for the structured result scripts get. */
  private rawHead: Buffer[] = [];
  private rawHeadBytes = 0;
  private rawTail: Buffer[] = [];
  private rawTailBytes = 0;
  private rawBytes = 0;

  append(chunk: Buffer): void {
    this.keepRaw(chunk);
    this.addText(this.decoder.write(chunk));
    if (this.file) {
      this.file.write(chunk);
      return;
    }
    this.pending.push(chunk);
    if (this.totalBytes > DEFAULT_MAX_BYTES || this.lineCount() > DEFAULT_MAX_LINES) {
      const { path, stream } = createOutputFileStream("parley-bash", ".log");
      this.fullOutputPath = path;
      this.file = stream;
      // A file that cannot be written is not offered to the model (and does not end parley).
      stream.on("error", () => (this.fullOutputPath = undefined));
      for (const c of this.pending) this.file.write(c);
      this.pending = [];
    }
  }

  private addText(text: string): void {
    if (text === "") return;
    this.totalBytes += Buffer.byteLength(text, "utf8");
    const lastNewline = text.lastIndexOf("\n");
    if (lastNewline === -1) {
      this.currentLineBytes += Buffer.byteLength(text, "utf8");
    } else {
      for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) this.newlines++;
      this.currentLineBytes = Buffer.byteLength(text.slice(lastNewline + 1), "utf8");
    }
    this.tail += text;
    if (this.tail.length > TAIL_WINDOW_CHARS) this.tail = this.tail.slice(-TAIL_WINDOW_CHARS);
  }

  /** Flush a trailing partial UTF-8 sequence and close the temp file. */
  async finish(): Promise<void> {
    this.addText(this.decoder.end());
    const file = this.file;
    if (file) await new Promise<void>((resolve) => file.end(() => resolve()));
  }

  /** Lines as pi 1.6 counts them: each newline ends one, and text after the last is one more. */
  private lineCount(): number {
    return this.newlines + (this.currentLineBytes > 0 ? 1 : 0);
  }

  isEmpty(): boolean {
    return this.totalBytes === 0;
  }

  snapshot(): { text: string; truncation: TruncationResult } {
    const truncation = truncateTail(this.tail);
    // The tail may be a window of the output; report totals of the whole output.
    truncation.totalLines = this.lineCount();
    truncation.totalBytes = this.totalBytes;
    return { text: truncation.content, truncation };
  }

  private keepRaw(chunk: Buffer): void {
    this.rawBytes += chunk.length;
    let rest = chunk;
    if (this.rawHeadBytes < STRUCTURED_HALF) {
      const take = rest.subarray(0, STRUCTURED_HALF - this.rawHeadBytes);
      this.rawHead.push(take);
      this.rawHeadBytes += take.length;
      rest = rest.subarray(take.length);
    }
    if (rest.length === 0) return;
    this.rawTail.push(rest);
    this.rawTailBytes += rest.length;
    while (this.rawTailBytes - (this.rawTail[0]?.length ?? 0) >= STRUCTURED_HALF) this.rawTailBytes -= this.rawTail.shift()?.length ?? 0;
  }

  /** The whole output up to STRUCTURED_HALF * 2 bytes; longer, its first and last halves around a note of what was left out. */
  structuredOutput(): { output: string; truncated: boolean } {
    const head = Buffer.concat(this.rawHead);
    const tailAll = Buffer.concat(this.rawTail);
    if (this.rawBytes <= STRUCTURED_HALF * 2) return { output: new TextDecoder().decode(Buffer.concat([head, tailAll])), truncated: false };
    const tail = tailAll.subarray(tailAll.length - STRUCTURED_HALF);
    const omitted = this.rawBytes - head.length - tail.length;
    return { output: `${new TextDecoder().decode(head)}\n\n[... ${omitted} bytes omitted ...]\n\n${new TextDecoder().decode(tail)}`, truncated: true };
  }

  lastLineBytes(): number {
    return this.currentLineBytes;
  }
}

function truncationNotice(t: TruncationResult, lastLineBytes: number, fullOutputPath: string | undefined): string {
  const where = `Full output: ${fullOutputPath}`;
  if (t.lastLinePartial) {
    return `\n\n[Showing last ${formatSize(t.outputBytes)} of line ${t.totalLines} (line is ${formatSize(lastLineBytes)}). ${where}]`;
  }
  const start = t.totalLines - t.outputLines + 1;
  const limit = t.truncatedBy === "bytes" ? ` (${formatSize(t.maxBytes)} limit)` : "";
  return `\n\n[Showing lines ${start}-${t.totalLines} of ${t.totalLines}${limit}. ${where}]`;
}

// Streaming updates are throttled; the UI only needs a few per second.
const UPDATE_INTERVAL_MS = 100;

/** What the bash tool reads of the context a call gets (the extension context, when the agent runs it). */
export interface BashCallContext {
  sessionManager?: { getSessionId(): string; getSessionFile(): string | undefined };
  model?: unknown;
  thinkingLevel?: string;
}

const SESSION_VARIABLES = ["PI_SESSION_ID", "PI_SESSION_FILE", "PI_PROVIDER", "PI_MODEL", "PI_REASONING_LEVEL"] as const;

/** The command's environment: parley's own, less inherited session variables, plus the calling session's (pi 1.6's names and values). */
function commandEnv(expose: boolean, ctx: BashCallContext | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SESSION_VARIABLES) delete env[name];
  if (!expose || !ctx) return env;
  const manager = ctx.sessionManager;
  if (manager) {
    env["PI_SESSION_ID"] = manager.getSessionId();
    const file = manager.getSessionFile();
    if (file) env["PI_SESSION_FILE"] = file;
  }
  const model = ctx.model;
  if (
    typeof model === "object" &&
    model !== null &&
    "provider" in model &&
    "id" in model &&
    typeof model.provider === "string" &&
    typeof model.id === "string"
  ) {
    env["PI_PROVIDER"] = model.provider;
    env["PI_MODEL"] = model.id;
  }
  if (ctx.thinkingLevel) env["PI_REASONING_LEVEL"] = ctx.thinkingLevel;
  return env;
}

export function createBashToolDefinition(
  cwd: string,
  options: BashToolOptions = {},
): ToolDefinition<typeof bashSchema, BashToolDetails | undefined, unknown, BashCallContext | undefined> {
  const ops = options.operations ?? createLocalBashOperations({ shellPath: options.shellPath });
  return {
    name: "bash",
    label: "bash",
    description: `Run a bash command in the working directory and return its combined stdout and stderr. Only the last ${DEFAULT_MAX_LINES} lines or ${formatSize(DEFAULT_MAX_BYTES)} of output are returned (whichever limit is hit first); the full output is then saved to a temp file. An optional timeout is given in seconds.`,
    promptSnippet: "Run shell commands (ls, grep, find, build and test tools, etc.)",
    // Strict-schema arguments where the provider offers them, as pi 1.6 declares its read, bash, edit and write.
    constrainedSampling: { type: "json_schema", strict: "prefer" },
    promptGuidelines: ["The PI_* environment variables of a command name the session, provider, model and reasoning level in use."],
    parameters: bashSchema,
    outputSchema: bashOutputSchema,
    async execute(_toolCallId, params, signal, onUpdate, ctx) {
      const startedAt = performance.now();
      const command = options.commandPrefix ? `${options.commandPrefix}\n${params.command}` : params.command;
      const env = commandEnv(options.exposeSessionEnvironment ?? true, ctx);
      const context: BashSpawnContext = options.spawnHook ? options.spawnHook({ command, cwd, env }) : { command, cwd, env };

      const output = new OutputCollector();
      onUpdate?.({ content: [], details: undefined });

      let lastUpdate = 0;
      let updateTimer: NodeJS.Timeout | undefined;
      const emitUpdate = () => {
        updateTimer = undefined;
        lastUpdate = Date.now();
        const { text, truncation } = output.snapshot();
        const details: BashToolDetails = truncation.truncated ? { truncation, fullOutputPath: output.fullOutputPath } : {};
        onUpdate?.({ content: [{ type: "text", text }], details });
      };
      const onData = (data: Buffer) => {
        output.append(data);
        if (!onUpdate || updateTimer) return;
        const wait = lastUpdate + UPDATE_INTERVAL_MS - Date.now();
        if (wait <= 0) emitUpdate();
        else updateTimer = setTimeout(emitUpdate, wait);
      };

      let exitCode: number | null = null;
      let failure: "aborted" | "timeout" | undefined;
      let execError: unknown;
      try {
        ({ exitCode } = await ops.exec(context.command, context.cwd, {
          onData,
          signal,
          timeout: params.timeout,
          env: context.env,
        }));
      } catch (error) {
        const message = errorMessage(error);
        if (signal?.aborted || message === ABORTED) failure = "aborted";
        else if (message.startsWith(TIMEOUT_PREFIX) || /timed? ?out/i.test(message)) failure = "timeout";
        else execError = error;
      } finally {
        if (updateTimer) clearTimeout(updateTimer);
        await output.finish();
      }
      if (execError) throw execError;
      if (!failure && signal?.aborted) failure = "aborted";

      const { text, truncation } = output.snapshot();
      const body = truncation.truncated ? text + truncationNotice(truncation, output.lastLineBytes(), output.fullOutputPath) : text;
      const withStatus = (status: string) => (output.isEmpty() ? status : `${body}\n\n${status}`);

      if (failure === "aborted") throw new Error(withStatus("Command aborted"));
      if (failure === "timeout") throw new Error(withStatus(`Command timed out after ${params.timeout} seconds`));

      const shown = output.isEmpty() ? "(no output)" : body;
      if (exitCode === null) throw new Error(`${shown}\n\nCommand was terminated by a signal before it exited`);
      const details: BashToolDetails | undefined = truncation.truncated ? { truncation, fullOutputPath: output.fullOutputPath } : undefined;
      const { output: whole, truncated } = output.structuredOutput();
      const structuredContent = {
        output: whole,
        truncated,
        ...(truncated && output.fullOutputPath ? { full_output_path: output.fullOutputPath } : {}),
        exit_code: exitCode,
        wall_time_seconds: Math.round((performance.now() - startedAt) / 100) / 10,
      };
      // A failed command is an error for the model, but a script still gets the structured result (pi 1.6).
      if (exitCode !== 0)
        return { content: [{ type: "text", text: `${shown}\n\nCommand exited with code ${exitCode}` }], details, structuredContent, isError: true };
      const result: AgentToolResult<BashToolDetails | undefined> = { content: [{ type: "text", text: shown }], details, structuredContent };
      return result;
    },
  };
}

export function createBashTool(cwd: string, options?: BashToolOptions): AgentTool<typeof bashSchema, BashToolDetails | undefined> {
  return toAgentTool(createBashToolDefinition(cwd, options));
}
