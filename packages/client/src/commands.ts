/**
 * The typed command methods. Most are generated from the protocol's command table
 * (`generated/command-methods.ts`); the few that do more than send one command and unwrap its
 * response are written here. Results that are a single list or value are unwrapped (as pi's
 * own client does), the others are the response's `data`.
 */
import type { BashResult, CommandType, ImageContent, ResponseData, StreamingBehavior } from "@parley/protocol";
import type { Disposable } from "@parley/protocol/disposable";
import { defined } from "./defined.js";
import { GeneratedCommandMethods } from "./generated/command-methods.js";
import type { AgentEventMap } from "./records.js";
import type { CommandInput, IssuedRequest, RequestOptions } from "./requests.js";

export interface PromptOptions extends RequestOptions {
  images?: ImageContent[];
  /** Required while the agent is streaming: deliver as a steering or a follow-up message. */
  streamingBehavior?: StreamingBehavior;
}

export interface MessageOptions extends RequestOptions {
  images?: ImageContent[];
}

export interface BashOptions extends RequestOptions {
  /** Keep the output in the session but never send it to the model. */
  excludeFromContext?: boolean;
  /** Each chunk of output as it streams (the `bash_execution_update` events of this command). */
  onOutput?: (delta: string) => void;
}

export abstract class CommandMethods extends GeneratedCommandMethods {
  /** Sends a command with a fresh id; the typed methods all go through here. */
  protected abstract issue<K extends CommandType>(command: CommandInput<K>, options?: RequestOptions): IssuedRequest<K>;

  abstract on<K extends keyof AgentEventMap>(type: K, listener: (event: AgentEventMap[K]) => void): Disposable;

  /** Sends any command and resolves with its response's `data` (typed per command). */
  override request<K extends CommandType>(command: CommandInput<K>, options?: RequestOptions): Promise<ResponseData<K>> {
    return this.issue(command, options).response;
  }

  /** `bash`: runs a shell command; `onOutput` gets its output as it streams. */
  async bash(command: string, options: BashOptions = {}): Promise<BashResult> {
    const { excludeFromContext, onOutput, ...rest } = options;
    const issued = this.issue({ type: "bash", command, ...defined({ excludeFromContext }) }, rest);
    // Records arrive on later ticks, so subscribing right after sending misses nothing.
    const subscription = onOutput
      ? this.on("bash_execution_update", (event) => {
          if (event.id === issued.id) onOutput(event.delta);
        })
      : undefined;
    try {
      return await issued.response;
    } finally {
      subscription?.dispose();
    }
  }

  /** `get_last_assistant_text`: the text, or null when there is none (pi omits it; its docs say null). */
  async getLastAssistantText(options?: RequestOptions): Promise<string | null> {
    return (await this.request({ type: "get_last_assistant_text" }, options)).text ?? null;
  }
}
