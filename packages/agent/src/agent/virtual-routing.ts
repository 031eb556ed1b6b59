/**
 * Routing the agent's requests when the selected model is virtual (models/virtual-models.ts):
 * why each loop request is made (the user's turn, a continuation, a retry), the router state the
 * session branch keeps, and the stream the loop gets: the routed model's, its responses stamped
 * with the level asked for, or an error response when routing fails.
 */
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { Api, AssistantMessage, AssistantMessageEventStream, Message, Model } from "@earendil-works/pi-ai";
import type { RpcEvent } from "@parley/protocol";
import { endWithError, errorResponse, relayStream } from "../models/error-response.js";
import type { ExtensionProviders } from "../models/extension-providers.js";
import type { ThinkingLevel } from "../models/model-patterns.js";
import type { PiAi } from "../models/pi-ai.js";
import { type Route, routerState, VIRTUAL_MODEL_STATE_ENTRY } from "../models/virtual-models.js";
import type { Session } from "../session/session.js";

export interface RoutingHost {
  readonly models: Pick<ExtensionProviders, "route">;
  readonly session: Pick<Session, "branch" | "append">;
  readonly thinkingLevel: ThinkingLevel;
  /** Tells the client of an entry the routing saved (entry_appended). */
  emit(event: RpcEvent): void;
}

/** A route made before its loop request (prepareRequest), for that request alone. */
interface PreparedRoute {
  route: Promise<Route>;
  model: Model<Api>;
  signal: AbortSignal | undefined;
}

export class LoopRouting {
  #userTurn = false;
  #failed: AssistantMessage | undefined;
  #prepared: PreparedRoute | undefined;

  constructor(private readonly host: RoutingHost) {}

  /**
   * The context of the loop's next request, before it is converted for the model: only messages
   * the user wrote since the last response make it the user's turn (extension messages may follow them).
   */
  sawContext(messages: readonly AgentMessage[]): void {
    const lastResponse = messages.findLastIndex((m) => m.role === "assistant");
    this.#userTurn = messages.slice(lastResponse + 1).some((m) => m.role === "user");
  }

  /** A loop request that needs no routing was made: a retry it made is not the next routed request's. */
  requestMade(): void {
    this.#failed = undefined;
  }

  /** The loop's next request retries `failed` (an automatic retry, or after compacting for an overflow). */
  retrying(failed: AssistantMessage | undefined): void {
    this.#failed = failed;
  }

  /**
   * Routes one loop request. New router state is saved on the branch before the request is sent,
   * so it stays even when the request fails (as in pi).
   */
  async route(model: Model<Api>, messages: readonly Message[], signal: AbortSignal | undefined): Promise<Route> {
    const failed = this.#failed;
    this.#failed = undefined;
    const { session } = this.host;
    const state = routerState(session.branch(), model.provider, model.id);
    const route = await this.host.models.route(model, {
      reason: failed ? "retry" : this.#userTurn ? "user" : "continuation",
      thinkingLevel: this.host.thinkingLevel,
      messages,
      ...(state !== undefined ? { state } : {}),
      ...(signal ? { signal } : {}),
      ...(failed ? { failed } : {}),
    });
    if (route.state !== undefined && route.state !== state) {
      const entry = session.append({
        type: "custom",
        customType: VIRTUAL_MODEL_STATE_ENTRY,
        data: { provider: model.provider, modelId: model.id, state: route.state },
      });
      this.host.emit({ type: "entry_appended", entry });
    }
    return route;
  }

  /**
   * Routes the loop's next request ahead of it (pi 1.6's prepareRequest); the request takes the
   * route with takePrepared(). A route prepared earlier and never taken is dropped.
   */
  prepare(model: Model<Api>, messages: readonly Message[], signal: AbortSignal | undefined): Promise<Route> {
    this.#prepared = undefined;
    const route = this.route(model, messages, signal);
    this.#prepared = { route, model, signal };
    return route;
  }

  /**
   * The route prepared for this request, taken once: only when it was made for the same model in
   * the same run and that run was not aborted (a request aborted before it was sent leaves its
   * route behind, which must not answer for a later request).
   */
  takePrepared(model: Model<Api>, signal: AbortSignal | undefined): Promise<Route> | undefined {
    const prepared = this.#prepared;
    this.#prepared = undefined;
    const sameModel = prepared?.model.provider === model.provider && prepared.model.id === model.id;
    if (!prepared || !sameModel || prepared.signal !== signal || signal?.aborted) return undefined;
    return prepared.route;
  }

  /** Nothing prepared holds any more (an abort, a new run). */
  dropPrepared(): void {
    this.#prepared = undefined;
  }

  /** A request outside the loop (a summary): routed with no state, and none kept. */
  async direct(model: Model<Api>, messages: readonly Message[], signal: AbortSignal | undefined): Promise<Route> {
    const { state: _ignored, ...route } = await this.host.models.route(model, {
      reason: "direct",
      thinkingLevel: this.host.thinkingLevel,
      messages,
      ...(signal ? { signal } : {}),
    });
    return route;
  }
}

/**
 * The request ends with an error response naming the virtual model (the loop records it like
 * any failed reply), or an aborted one when the run was aborted while it was routed.
 */
export function failedRequest(pi: PiAi, model: Model<Api>, error: unknown, aborted = false): AssistantMessageEventStream {
  return endWithError(pi, errorResponse(model, error, aborted));
}

/**
 * The routed stream with the level the loop asked for on its response (`thinkingLevel`, as the
 * newest pi records it), so a router's `previous` and `failed` can report it.
 */
export function stampThinkingLevel(pi: PiAi, source: AssistantMessageEventStream, model: Model<Api>, level: ThinkingLevel): AssistantMessageEventStream {
  return relayStream(
    pi,
    model,
    () => source,
    (message) => Object.assign(message, { thinkingLevel: level }),
  );
}
