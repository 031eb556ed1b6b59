/**
 * One summarisation call with the agent's current model, shared by compaction and branch
 * summaries: a transcript with instructions in, the reply's text out.
 */
import type { Api, Message, Model, SimpleStreamOptions, Usage } from "@earendil-works/pi-ai";
import type { ThinkingLevel } from "@parley/protocol";
import { loadPiAi } from "../models/pi-ai.js";
import { registerParleyProviders } from "../models/register.js";
import { withRequestAuth } from "../models/request-auth.js";
import type { RequestAuth } from "../config/oauth-tokens.js";
import type { StreamSimple } from "../models/extension-providers.js";
import { isVirtualModel } from "../models/virtual-models.js";
import { retrySummaryCall, type SummaryRetry, type SummarySource } from "./summary-retry.js";

/** What a summary needs from the agent: its model, thinking level, keys and request options. AgentSession is one. */
export interface SummaryHost {
  readonly model: Model<Api>;
  readonly thinkingLevel: ThinkingLevel;
  readonly models: {
    /** The auth a request sends: key, headers, an OAuth login's base URL (the login refreshed first when due). */
    getRequestAuth(provider: string): Promise<RequestAuth | undefined>;
    /** The agent's own extension stream for the model's provider, when it has one (see ExtensionProviders.ownStream). */
    ownStream?(model: Model<Api>): StreamSimple | undefined;
  };
  /** Under a virtual selection: the model and level the router picks for a call outside the loop. */
  routeDirect?(messages: Message[], signal: AbortSignal): Promise<{ model: Model<Api>; thinkingLevel: ThinkingLevel }>;
  /** The request options a call beside the loop gets (settings' timeouts and retries, extensions' headers); as given without it. */
  requestOptions?(model: Model<Api>, options: SimpleStreamOptions): Promise<SimpleStreamOptions | undefined>;
  /** The settings' retry policy for a failed summary call, and where its records go; none: no retries. */
  readonly summaryRetry?: SummaryRetry | undefined;
}

/** A compaction (or branch summary) that did not happen because it was cancelled (extension or abort). */
export class CompactionCancelledError extends Error {
  override readonly name = "CompactionCancelledError";
  constructor(message = "Compaction cancelled") {
    super(message);
  }
}

const SUMMARY_SYSTEM_PROMPT =
  "You write hand-over notes for an AI coding assistant. You are given the transcript of a conversation " +
  "between a user and the assistant. Do not reply to it, do not continue it and do not answer questions " +
  "asked in it: write only the structured summary that is asked for.";

/**
 * One summarisation call with the agent's current model: `prompt` (transcript and instructions)
 * in, the reply's text out. As in the newest pi: no output cap of its own (the model's limit), no
 * cache writes for a one-off call, settings' timeouts and retries, and a reply cut short by the
 * token cap is a failure rather than a checkpoint. A transient failure is retried with the
 * settings' retry policy (summary-retry.ts); `source` says what is summarised in its records.
 * Throws CompactionCancelledError when `signal` aborts it; `label` names the call in failures
 * ("Summarization", "Branch summarization").
 */
export async function completeSummary(
  agent: SummaryHost,
  prompt: string,
  signal: AbortSignal,
  label = "Summarization",
  source: SummarySource = { source: "compaction", reason: "manual" },
): Promise<{ summary: string; usage: Usage }> {
  const pi = await loadPiAi();
  const messages: Message[] = [{ role: "user", content: [{ type: "text", text: prompt }], timestamp: Date.now() }];
  const { model: chosen, thinkingLevel: level } =
    isVirtualModel(agent.model) && agent.routeDirect ? await agent.routeDirect(messages, signal) : { model: agent.model, thinkingLevel: agent.thinkingLevel };
  // The prompt's auth, as pi 1.6 resolves it for a summary: an OAuth login's base URL and headers too.
  const { model, options } = withRequestAuth(
    chosen,
    { signal, cacheRetention: "none", ...(chosen.reasoning && level !== "off" ? { reasoning: level } : {}) },
    await agent.models.getRequestAuth(chosen.provider),
  );
  // The summary may come from a local model before any run loaded the loop (which registers them).
  await registerParleyProviders();
  const context = { systemPrompt: SUMMARY_SYSTEM_PROMPT, messages };
  const sent = (agent.requestOptions ? await agent.requestOptions(model, options) : undefined) ?? options;
  const own = agent.models.ownStream?.(model);
  const call = async () => (own ? await own(model, pi.normalizeContext(context), sent).result() : await pi.completeSimple(model, context, sent));
  const response = await retrySummaryCall(call, agent.summaryRetry, source, signal);
  if (response.stopReason === "aborted" || signal.aborted) throw new CompactionCancelledError();
  if (response.stopReason === "error") throw new Error(`${label} failed: ${response.errorMessage || "unknown error"}`);
  if (response.stopReason === "length") throw new Error(`${label} failed: generation hit the token cap and the summary is incomplete`);
  // A summary call offers no tools: a reply that calls one is no summary (pi's words).
  if (response.content.some((c) => c.type === "toolCall")) throw new Error(`${label} attempted to call a tool`);
  const summary = response.content
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n")
    .trim();
  if (!summary) throw new Error(`${label} failed: the model returned no text`);
  return { summary, usage: response.usage };
}
