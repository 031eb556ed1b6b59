/**
 * Steering messages and follow-ups waiting for the loop: what the client sees queued
 * (`queue_update`, get_state's pendingMessageCount), the messages handed to the loop and not yet
 * taken (a run boundary's pendingMessages), and the loop's own queues, or the local ones kept
 * until the loop exists.
 */
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ImageContent, TextContent } from "@earendil-works/pi-ai";
import type { RpcEvent } from "@parley/protocol";
import { type QueueKind, userMessage } from "./prompt-intake.js";

/** The loop's queues (pi-agent-core's Agent). */
interface LoopQueues {
  steer(message: AgentMessage): void;
  followUp(message: AgentMessage): void;
  clearAllQueues(): void;
  hasQueuedMessages(): boolean;
}

/** What the queues need from the agent (AgentSession is one). */
export interface MessageQueuesHost {
  /** The loop, once it exists. */
  loop(): LoopQueues | undefined;
  /** Messages queued before the loop existed: it takes them when it is created. */
  local(): Record<QueueKind, AgentMessage[]>;
  emit(event: RpcEvent): void;
}

export class MessageQueues {
  /** The texts the client sees queued (pi shows texts). */
  #steering: string[] = [];
  #followUp: string[] = [];
  /** Messages handed to the loop and not yet taken (a boundary's pendingMessages). */
  #handed: AgentMessage[] = [];

  constructor(private readonly host: MessageQueuesHost) {}

  /** Queued by the client and not yet delivered. */
  get count(): number {
    return this.#steering.length + this.#followUp.length;
  }

  /** Messages handed to the loop that it has not taken yet. */
  pending(): AgentMessage[] {
    return [...this.#handed];
  }

  /** The client's steering message or follow-up: shown queued until the loop delivers it. */
  enqueue(kind: QueueKind, text: string, images: ImageContent[] | undefined): void {
    (kind === "steer" ? this.#steering : this.#followUp).push(text);
    this.hand(kind, userMessage(text, images));
    this.#update();
  }

  /** Hands a queued message to the loop, or keeps it until the loop exists. */
  hand(kind: QueueKind, message: AgentMessage): void {
    this.#handed.push(message);
    const loop = this.host.loop();
    if (loop) loop[kind](message);
    else this.host.local()[kind].push(message);
  }

  clear(): { steering: string[]; followUp: string[] } {
    const cleared = { steering: this.#steering, followUp: this.#followUp };
    this.#steering = [];
    this.#followUp = [];
    this.host.loop()?.clearAllQueues();
    this.#handed = [];
    const local = this.host.local();
    local.steer = [];
    local.followUp = [];
    this.#update();
    return cleared;
  }

  hasPending(): boolean {
    const local = this.host.local();
    return this.count > 0 || local.steer.length + local.followUp.length > 0 || (this.host.loop()?.hasQueuedMessages() ?? false);
  }

  /** The loop starts a message: a queued one leaves its queue (as pi shows it). */
  started(message: AgentMessage): void {
    this.#handed = this.#handed.filter((m) => m !== message);
    if (message.role !== "user") return;
    const text = textOf(message);
    const s = this.#steering.indexOf(text);
    const f = s === -1 ? this.#followUp.indexOf(text) : -1;
    if (s !== -1) this.#steering.splice(s, 1);
    if (f !== -1) this.#followUp.splice(f, 1);
    if (s !== -1 || f !== -1) this.#update();
  }

  #update(): void {
    this.host.emit({ type: "queue_update", steering: [...this.#steering], followUp: [...this.#followUp] });
  }
}

function textOf(message: AgentMessage): string {
  if (message.role !== "user") return "";
  const content = message.content;
  return typeof content === "string"
    ? content
    : content
        .filter((c): c is TextContent => c.type === "text")
        .map((c) => c.text)
        .join("");
}
