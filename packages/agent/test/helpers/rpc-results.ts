/** Comparing what two agents answered through an RpcClient: run-to-run noise taken out. */
import { expect } from "vitest";

/** Run-to-run noise out: uuids, 8-hex entry ids, timestamps, the temp folder, token counts. */
export function normalise(value: unknown, base: string): unknown {
  const text = JSON.stringify(value ?? null)
    .replaceAll(base, "<base>")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>")
    .replace(/"[0-9a-f]{8}"/g, '"<id>"')
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}[-:]\d{2}[-:]\d{2}[-.]\d{3}Z/g, "<time>")
    .replace(/"(timestamp)":\d+/g, '"$1":"<ms>"')
    .replace(/"(input|output|cacheRead|cacheWrite|total|totalTokens|tokens|tokensBefore|percent)":[\d.]+/g, '"$1":"<n>"');
  return JSON.parse(text) as unknown;
}

export const withoutKeys = (value: unknown, keys: string[]): unknown => {
  if (!value || typeof value !== "object" || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => !keys.includes(k)));
};

/** What pi's RPC test asks of `get_available_models`: at least one model, each complete. */
export function expectCompleteModels(models: readonly { provider: string; id: string; contextWindow: number; reasoning: boolean }[]): void {
  expect(models.length).toBeGreaterThan(0);
  for (const model of models) {
    expect(model.provider).toBeTruthy();
    expect(model.id).toBeTruthy();
    expect(model.contextWindow).toBeGreaterThan(0);
    expect(typeof model.reasoning).toBe("boolean");
  }
}

/**
 * pi's RpcClient gives each request 30 s; an agent starting on a busy machine may need longer, so
 * the first request is repeated until one is answered (the late answers are ignored).
 */
export async function firstAnswer(client: { getState(): Promise<unknown> }): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.getState();
      return;
    } catch (error) {
      if (attempt >= 4) throw error;
    }
  }
}

/*
 * pi 1.6 records the system prompt in the transcript as `role: "system"` messages (a run whose
 * prompt or tools changed starts with one: message_start/message_end, the session file,
 * get_messages, totalMessages), and parley records them as pi 1.6 does; pi 0.73.1 records none.
 * That is a documented difference from 0.73 (pi 1.6.0 is the reference, compared side by side in
 * system-messages.e2e.test.ts): where a test compares parley with 0.73.1, parley's system
 * messages are left out with these, and nothing else.
 */

/** Whether a message is one of the system messages pi 1.6 (and parley) record. */
export const isSystemMessage = (message: unknown): boolean => typeof message === "object" && message !== null && "role" in message && message.role === "system";

/** Messages without the recorded system messages (for a comparison with pi 0.73.1). */
export const withoutSystemMessages = <T>(messages: readonly T[]): T[] => messages.filter((m) => !isSystemMessage(m));

/** Events without the message_start/message_end of a recorded system message (for a comparison with pi 0.73.1). */
export const withoutSystemMessageEvents = <T extends { type: string }>(events: readonly T[]): T[] =>
  events.filter((e) => !((e.type === "message_start" || e.type === "message_end") && "message" in e && isSystemMessage(e.message)));

/** get_session_stats with the recorded system messages taken off totalMessages (for a comparison with pi 0.73.1). */
export const statsWithoutSystemMessages = <T extends { totalMessages: number }>(stats: T, systemMessages: number): T => ({
  ...stats,
  totalMessages: stats.totalMessages - systemMessages,
});
