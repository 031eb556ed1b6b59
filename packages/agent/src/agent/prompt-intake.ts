/**
 * A prompt, steering message or follow-up on its way in: the pre-run checks (a switch under way,
 * a compaction, another prompt being prepared), extensions' `input` handlers, `/skill:…` and
 * prompt-template expansion, before_agent_start, then a run started or the message queued.
 */
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ImageContent, TextContent } from "@earendil-works/pi-ai";
import type { PromptDisposition } from "@parley/protocol";
import { errorText } from "../error-text.js";
import type { ExtensionRuntime } from "../extensions/runtime.js";
import type { CustomMessageInput, InputSource } from "../extensions/types.js";
import { expandPromptTemplate, expandSkillCommand } from "../resources/index.js";
import { AgentError } from "./agent-error.js";

/** A prompt whose preparation (input or before_agent_start handlers) an abort ended. */
const PREPARATION_ABORTED = "Aborted while extensions were preparing the prompt: it was not sent";
const SWITCHED = "The session was switched while this prompt was being prepared: it was not sent";

export type QueueKind = "steer" | "followUp";
export type UserContent = string | (TextContent | ImageContent)[];

export interface PromptOptions {
  streamingBehavior?: QueueKind | undefined;
  source: InputSource;
  onAccepted?: (disposition: PromptDisposition) => void;
  /** Expand `/skill:…` and prompt templates (default); pi.sendUserMessage does only when asked. */
  expandPromptTemplates?: boolean;
}

/** What prompt intake needs from the agent (AgentSession is one). */
export interface PromptIntakeHost {
  readonly runtime: Pick<ExtensionRuntime, "hasHandlers" | "emitChained" | "runCommand" | "resources" | "reportError">;
  cwd(): string;
  /** The current session, compared by identity: a switch meanwhile ends what belonged to the old one. */
  session(): object;
  readonly isSwitching: boolean;
  afterSwitches(): Promise<void>;
  readonly isCompacting: boolean;
  /** A run goes on or a prompt is being prepared to start one. */
  readonly isStreaming: boolean;
  /** The preparation under way (another prompt's), if any; none means idle or running. */
  preparation(): Promise<void> | undefined;
  /** Enters the `preparing` run state; the function given back leaves it (unless the run started). */
  beginPreparing(): () => void;
  /** Waits for extension handlers, but not past an abort (then `onAbort` answers). */
  unlessAborted<T>(work: Promise<T>, onAbort: () => T): Promise<T>;
  /** Throws the client's error when the current model has no credentials. */
  checkAuth(): void;
  ensureCore(): Promise<unknown>;
  systemPrompt(): string;
  /** The system prompt as before_agent_start handlers have made it so far (ctx.getSystemPrompt()). */
  setEffectivePrompt(prompt: string): void;
  /** Messages sent with deliverAs "nextTurn", taken to ride along with this prompt. */
  takeNextTurn(): AgentMessage[];
  /**
   * Starts the run with these messages; `forcedPrompt` is the text a before_agent_start handler
   * returned, which the run's requests are sent with instead of the built prompt (the transcript
   * keeps recording the built prompt's sections, as in pi 1.6).
   */
  startPrompt(forcedPrompt: string | undefined, messages: AgentMessage[]): void;
  /** Queues a steering message or follow-up (message-queue bookkeeping). */
  enqueue(kind: QueueKind, text: string, images: ImageContent[] | undefined): void;
}

export class PromptIntake {
  constructor(private readonly host: PromptIntakeHost) {}

  /**
   * Accepts a prompt: runs it, or queues it while the agent streams. Resolves once accepted
   * (the run goes on); rejects with an AgentError the client can act on.
   */
  async prompt(text: string, images: ImageContent[] | undefined, options: PromptOptions): Promise<PromptDisposition> {
    const host = this.host;
    if (options.source !== "extension" && host.isSwitching) await host.afterSwitches();
    if (host.isCompacting && !host.isStreaming) {
      // pi 1.6's words, which a client may match on.
      throw new AgentError("Cannot submit a prompt while compaction is in progress. Wait for compaction to finish and retry.");
    }
    // Prompts are prepared one at a time: one arriving while another is being prepared waits to
    // see whether that one started a run (then it must queue) or not (then it starts one itself).
    // No await while none is under way: two prompts arriving together must not both see "idle".
    for (let preparing = host.preparation(); preparing; preparing = host.preparation()) await preparing;
    const starts = !host.isStreaming;
    // A session switch during the preparation ends what belonged to the old session: this prompt
    // must not start (or queue) in the next one (the switch's abort could not stop it: no run yet).
    const session = host.session();
    const stillCurrent = (): void => {
      if (host.session() !== session) throw new AgentError(SWITCHED);
    };
    // An abort (a switch's included) ends a preparation whose handlers have not returned.
    const aborted = (): never => {
      throw new AgentError(host.isSwitching || host.session() !== session ? SWITCHED : PREPARATION_ABORTED);
    };
    const prepared = starts ? host.beginPreparing() : undefined;
    try {
      const handled = await host.unlessAborted(this.#runInputHandlers(text, images, options.source, starts ? undefined : options.streamingBehavior), aborted);
      if (handled === undefined) {
        options.onAccepted?.("handled");
        return "handled";
      }
      // Skills and prompt templates expand after the input event, as in pi.
      const input = options.expandPromptTemplates === false ? handled : { ...handled, text: this.expandCommands(handled.text) };
      if (!starts) {
        if (!options.streamingBehavior) {
          throw new AgentError("Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.");
        }
        stillCurrent();
        host.enqueue(options.streamingBehavior, input.text, input.images);
        options.onAccepted?.("queued");
        return "queued";
      }
      host.checkAuth();
      // The system prompt lists the tools, whose definitions come with the loop.
      await host.ensureCore();
      const systemPrompt = host.systemPrompt();
      host.setEffectivePrompt(systemPrompt);
      let forcedPrompt: string | undefined;
      const start = await host.unlessAborted(
        host.runtime.emitChained(
          {
            type: "before_agent_start",
            messageType: "user",
            prompt: input.text,
            images: input.images,
            systemPrompt,
            systemPromptOptions: { cwd: host.cwd() },
          },
          (event, r) => {
            const next = { ...event };
            if (typeof r.systemPrompt === "string") {
              next.systemPrompt = r.systemPrompt;
              forcedPrompt = r.systemPrompt;
              host.setEffectivePrompt(r.systemPrompt); // later handlers' ctx.getSystemPrompt() sees it
            }
            if (r.message) next.injected = [...(event.injected ?? []), customMessage(r.message)];
            return { event: next };
          },
        ),
        aborted,
      );
      stillCurrent();
      const messages: AgentMessage[] = [...host.takeNextTurn(), userMessage(input.text, input.images), ...(start.injected ?? [])];
      // Accepted: the client hears so before any event of the run.
      options.onAccepted?.("started");
      host.startPrompt(forcedPrompt, messages);
      return "started";
    } finally {
      // Not started (handled, queued or refused): idle again. Started: already running.
      prepared?.();
    }
  }

  /**
   * Queues a steering message (`steer`: delivered after the current turn's tool calls) or a
   * follow-up (delivered when the agent would stop), whether or not a run goes on: while idle it
   * waits for the next run, as in pi. As in the newest pi, extensions' `input` handlers see it
   * first (they may transform it, or handle it: then nothing is queued); `/skill:…` and templates
   * expand after them. Without input handlers it is queued at once (no promise), so the caller
   * can answer before reading its next line.
   */
  queue(kind: QueueKind, text: string, images: ImageContent[] | undefined): "queued" | Promise<"queued" | "handled"> {
    const host = this.host;
    if (host.isSwitching) return host.afterSwitches().then(() => this.queue(kind, text, images));
    if (!host.runtime.hasHandlers("input")) {
      host.enqueue(kind, this.expandCommands(text), images);
      return "queued";
    }
    const session = host.session();
    return this.#runInputHandlers(text, images, "rpc", host.isStreaming ? kind : undefined).then((input) => {
      if (input === undefined) return "handled";
      // As for a prompt: a switch meanwhile ended the old session's queue; this one does not join the next's.
      if (host.session() !== session) throw new AgentError("The session was switched while this message was being prepared: it was not queued");
      host.enqueue(kind, this.expandCommands(input.text), input.images);
      return "queued";
    });
  }

  /**
   * pi.sendUserMessage: a prompt from an extension. As in pi, its text is used as given unless
   * `expandPromptTemplates` asks for extension commands, skills and templates to be honoured.
   */
  async sendUserMessage(content: UserContent, options: { deliverAs?: string; expandPromptTemplates?: boolean } = {}): Promise<void> {
    const text =
      typeof content === "string"
        ? content
        : content
            .filter((c): c is TextContent => c.type === "text")
            .map((c) => c.text)
            .join("\n");
    const images = typeof content === "string" ? undefined : content.filter((c): c is ImageContent => c.type === "image");
    const streamingBehavior = options.deliverAs === "followUp" ? "followUp" : "steer";
    const expandPromptTemplates = options.expandPromptTemplates === true;
    if (expandPromptTemplates && (await this.host.runtime.runCommand(text))) return;
    await this.prompt(text, images?.length ? images : undefined, { streamingBehavior, source: "extension", expandPromptTemplates });
  }

  /** `/skill:name args` and `/template args` → the text the model gets; anything else unchanged. */
  expandCommands(text: string): string {
    if (!text.startsWith("/")) return text;
    const runtime = this.host.runtime;
    const { skills, prompts } = runtime.resources;
    const expanded = expandSkillCommand(text, skills, (skill, error) =>
      runtime.reportError({ extensionPath: skill.filePath, event: "skill_expansion", ...errorText(error) }),
    );
    return expandPromptTemplate(expanded, prompts);
  }

  /** The `input` event's chain: the text and images to use, or undefined when a handler handled it. */
  async #runInputHandlers(
    text: string,
    images: ImageContent[] | undefined,
    source: InputSource,
    streamingBehavior: QueueKind | undefined,
  ): Promise<{ text: string; images: ImageContent[] | undefined } | undefined> {
    const runtime = this.host.runtime;
    if (!runtime.hasHandlers("input")) return { text, images };
    let handled = false;
    // streamingBehavior: how the message will be queued, set only while a run goes on (newest pi).
    const event = { type: "input" as const, text, images, source, ...(streamingBehavior ? { streamingBehavior } : {}) };
    const input = await runtime.emitChained(event, (event, r) => {
      if (r.action === "handled") {
        handled = true;
        return { event, stop: true };
      }
      if (r.action === "transform" && typeof r.text === "string") return { event: { ...event, text: r.text, images: r.images ?? event.images } };
      return { event };
    });
    return handled ? undefined : { text: input.text, images: input.images };
  }
}

export function userMessage(text: string, images?: ImageContent[]): AgentMessage {
  const content: (TextContent | ImageContent)[] = [{ type: "text", text }, ...(images ?? [])];
  return { role: "user", content, timestamp: Date.now() };
}

export function customMessage(input: CustomMessageInput): AgentMessage {
  return {
    role: "custom",
    customType: input.customType,
    content: input.content,
    display: input.display ?? true,
    ...(input.details !== undefined ? { details: input.details } : {}),
    timestamp: Date.now(),
  };
}
