/**
 * The mutable settings pi's state commands read and write, kept apart from the transport.
 * The agent loop will drive isStreaming and the queues; until then they stay idle.
 */
import type { QueueMode, ThinkingLevel } from "@parley/protocol";

export interface AgentSettings {
  thinkingLevel: ThinkingLevel;
  steeringMode: QueueMode;
  followUpMode: QueueMode;
  autoCompactionEnabled: boolean;
  autoRetryEnabled: boolean;
}

export function defaultSettings(): AgentSettings {
  return {
    thinkingLevel: "off",
    steeringMode: "one-at-a-time",
    followUpMode: "one-at-a-time",
    autoCompactionEnabled: true,
    autoRetryEnabled: true,
  };
}
