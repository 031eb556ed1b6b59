import { describe, expect, it, vi, afterEach } from "vitest";
import { DialogRegistry, type DialogOutput } from "../src/ui/dialog-registry.js";

function setup() {
  const sent: DialogOutput[] = [];
  let n = 0;
  const registry = new DialogRegistry({ send: (r) => sent.push(r), newId: () => `d${++n}` });
  return { sent, registry };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("DialogRegistry", () => {
  it("sends the request and resolves with the answer once", async () => {
    const { sent, registry } = setup();
    const answer = registry.open({ method: "select", title: "T", options: ["a", "b"] });
    expect(sent).toEqual([{ type: "extension_ui_request", id: "d1", method: "select", title: "T", options: ["a", "b"] }]);
    registry.handleResponse({ type: "extension_ui_response", id: "d1", value: "b" });
    await expect(answer).resolves.toEqual({ kind: "value", value: "b" });
    registry.handleResponse({ type: "extension_ui_response", id: "d1", value: "a" });
    expect(sent.at(-1)).toMatchObject({ type: "extension_ui_error", id: "d1", code: "already_resolved", pending: false });
    expect(registry.size).toBe(0);
  });

  it("refuses a select value outside the options and keeps the dialog pending", async () => {
    const { sent, registry } = setup();
    const answer = registry.open({ method: "select", title: "T", options: ["a"] });
    registry.handleResponse({ type: "extension_ui_response", id: "d1", value: "zzz" });
    expect(sent.at(-1)).toMatchObject({ type: "extension_ui_error", code: "invalid_response", pending: true });
    expect(String((sent.at(-1) as { error: string }).error)).toContain("not one of its options");
    expect(registry.size).toBe(1);
    registry.handleResponse({ type: "extension_ui_response", id: "d1", value: "a" });
    await expect(answer).resolves.toEqual({ kind: "value", value: "a" });
  });

  it.each([
    ["confirm", { value: "yes" }, "confirm dialogs are answered with \"confirmed\""],
    ["confirm", { confirmed: "yes" }, "not a boolean"],
    ["input", { value: 42 }, "not a string"],
    ["editor", { confirmed: true }, "answered with \"value\""],
    ["input", {}, "carries no answer"],
    ["input", { cancelled: "yes" }, "not true or false"],
  ] as const)("refuses a %s answered with %j", (method, body, message) => {
    const { sent, registry } = setup();
    const spec =
      method === "confirm" ? { method, title: "t", message: "m" } : ({ method, title: "t" } as const);
    void registry.open(spec);
    registry.handleResponse({ type: "extension_ui_response", id: "d1", ...body });
    const error = sent.at(-1) as { type: string; error: string; pending: boolean };
    expect(error.type).toBe("extension_ui_error");
    expect(error.pending).toBe(true);
    expect(error.error).toContain(message);
  });

  it("cancelled: true wins for every dialog kind, with the dialog's default", async () => {
    const { registry } = setup();
    const confirm = registry.open({ method: "confirm", title: "t", message: "m" });
    registry.handleResponse({ type: "extension_ui_response", id: "d1", cancelled: true, confirmed: true });
    await expect(confirm).resolves.toEqual({ kind: "cancelled" });
  });

  it("reports unknown ids, fire-and-forget ids and missing ids", () => {
    const { sent, registry } = setup();
    registry.handleResponse({ type: "extension_ui_response", id: "nope", value: "x" });
    expect(sent.at(-1)).toMatchObject({ code: "unknown_id", id: "nope", pending: false });
    const ff = registry.newFireAndForgetId();
    expect(ff).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(registry.newFireAndForgetId()).not.toBe(ff);
    registry.handleResponse({ type: "extension_ui_response", id: ff, value: "x" });
    expect(sent.at(-1)).toMatchObject({ code: "unknown_id", id: ff, pending: false });
    expect((sent.at(-1) as { error: string }).error).toContain("fire-and-forget");
    registry.handleResponse({ type: "extension_ui_response", value: "x" });
    expect(sent.at(-1)).toMatchObject({ code: "invalid_response", pending: false });
    expect(sent.at(-1)).not.toHaveProperty("id");
  });

  it("times out with the default and announces it", async () => {
    vi.useFakeTimers();
    const { sent, registry } = setup();
    const answer = registry.open({ method: "confirm", title: "t", message: "m" }, { timeout: 500 });
    expect(sent[0]).toMatchObject({ timeout: 500 });
    expect(registry.snapshot()[0]?.remainingMs).toBe(500);
    vi.advanceTimersByTime(200);
    expect(registry.snapshot()[0]?.remainingMs).toBe(300);
    vi.advanceTimersByTime(300);
    await expect(answer).resolves.toEqual({ kind: "cancelled" });
    expect(sent.at(-1)).toEqual({ type: "extension_ui_dismissed", id: "d1", method: "confirm", reason: "timeout" });
    registry.handleResponse({ type: "extension_ui_response", id: "d1", confirmed: true });
    expect(sent.at(-1)).toMatchObject({ code: "already_resolved" });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("remembers at least the last 10,000 ended dialogs (forgotten 10,000 at a time): older ids become unknown", async () => {
    const { sent, registry } = setup();
    const late = (n: number) => {
      registry.handleResponse({ type: "extension_ui_response", id: `d${n}`, value: "late" });
      return sent.at(-1);
    };
    for (let i = 1; i <= 20_001; i++) {
      const answer = registry.open({ method: "input", title: "t" });
      registry.handleResponse({ type: "extension_ui_response", id: `d${i}`, cancelled: true });
      await answer;
      // Whenever checked, the 10,000 most recent are still known.
      if (i % 5_000 === 1 && i > 10_000) expect(late(i - 9_999)).toMatchObject({ code: "already_resolved" });
    }
    expect(late(1)).toMatchObject({ code: "unknown_id", id: "d1" });
    expect(late(10_000)).toMatchObject({ code: "unknown_id", id: "d10000" });
    expect(late(10_001)).toMatchObject({ code: "already_resolved", id: "d10001" });
  });

  it("handles timeouts beyond setTimeout's 32-bit limit without firing early", () => {
    vi.useFakeTimers();
    const { registry } = setup();
    void registry.open({ method: "input", title: "t" }, { timeout: 3_000_000_000 });
    vi.advanceTimersByTime(2_147_483_647 + 10);
    expect(registry.size).toBe(1);
    vi.advanceTimersByTime(3_000_000_000);
    expect(registry.size).toBe(0);
  });

  it("ignores zero, negative and non-finite timeouts (no timer, not announced)", () => {
    vi.useFakeTimers();
    const { sent, registry } = setup();
    for (const timeout of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) void registry.open({ method: "input", title: "t" }, { timeout });
    expect(sent.every((r) => !("timeout" in r))).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("an abort signal dismisses the dialog, and an aborted one never opens", async () => {
    const { sent, registry } = setup();
    const controller = new AbortController();
    const answer = registry.open({ method: "editor", title: "t", prefill: "p" }, { signal: controller.signal });
    controller.abort();
    await expect(answer).resolves.toEqual({ kind: "cancelled" });
    expect(sent.at(-1)).toEqual({ type: "extension_ui_dismissed", id: "d1", method: "editor", reason: "aborted" });
    const count = sent.length;
    await expect(registry.open({ method: "input", title: "t" }, { signal: controller.signal })).resolves.toEqual({ kind: "cancelled" });
    expect(sent.length).toBe(count);
  });

  it("dismissAll resolves every pending dialog once and later dialogs at once", async () => {
    const { sent, registry } = setup();
    const answers = [1, 2, 3].map(() => registry.open({ method: "input", title: "t" }));
    registry.dismissAll("shutdown");
    await expect(Promise.all(answers)).resolves.toEqual([{ kind: "cancelled" }, { kind: "cancelled" }, { kind: "cancelled" }]);
    expect(sent.filter((r) => r.type === "extension_ui_dismissed").map((r) => (r as { reason: string }).reason)).toEqual([
      "shutdown",
      "shutdown",
      "shutdown",
    ]);
    await expect(registry.open({ method: "input", title: "t" })).resolves.toEqual({ kind: "cancelled" });
  });

  it("1,000 dialogs answered out of order each resolve exactly once with their own answer", async () => {
    const { registry } = setup();
    const settled = new Map<number, number>();
    const answers = Array.from({ length: 1000 }, (_, i) =>
      registry.open({ method: "input", title: `q${i}` }).then((a) => {
        settled.set(i, (settled.get(i) ?? 0) + 1);
        return a;
      }),
    );
    const order = Array.from({ length: 1000 }, (_, i) => i).sort((a, b) => ((a * 7919) % 1000) - ((b * 7919) % 1000));
    for (const i of order) registry.handleResponse({ type: "extension_ui_response", id: `d${i + 1}`, value: `a${i}` });
    for (const i of order) registry.handleResponse({ type: "extension_ui_response", id: `d${i + 1}`, value: "again" });
    const results = await Promise.all(answers);
    results.forEach((r, i) => expect(r).toEqual({ kind: "value", value: `a${i}` }));
    expect([...settled.values()].every((n) => n === 1)).toBe(true);
    expect(settled.size).toBe(1000);
  });
});
