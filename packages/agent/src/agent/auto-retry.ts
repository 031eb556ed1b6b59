/**
 * Automatic retry after a transient provider error (overloaded, rate limit, 5xx). (To be completed.)
 */
import type { AssistantMessage } from "@mariozechner/pi-ai";
import type { AgentSession } from "./agent-session.js";

export class AutoRetry {
  /** Called after each run; true when it retried (so no compaction check follows). */
  async afterRun(_agent: AgentSession, _last: AssistantMessage): Promise<boolean> {
    return false;
  }
  abort(): void {}
}
