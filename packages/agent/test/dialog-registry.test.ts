import { describe, expect, it, vi, afterEach } from "vitest";
import { DialogRegistry, type DialogOutput } from "../src/ui/dialog-registry.js";

const PREFIX = "dddddddd-dddd-4ddd-8ddd-";
/** The id of the n-th dialog opened (1-based): the prefix and a 12-digit hex counter from 0. */
const did = (n: number) => `${PREFIX}${(n - 1).toString(16).padStart(12, "0")}`;

function setup(options: { rememberEndings?: number } = {}) {
  const sent: DialogOutput[] = [];
  const registry = new DialogRegistry({ send: (r) => sent.push(r), idPrefix: PREFIX, ...options });
  return { sent, registry };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("DialogRegistry", () => {
  it("sends the request and resolves with the answer once", async () => {
    const { sent, registry } = setup();
    const answer = registry.open({ method: "select", title: "T", options: ["a", "b"] });
    expect(sent).toEqual([{ type: "extension_ui_request", id: did(1), method: "select", title: "T", options: ["a", "b"] }]);
    registry.handleResponse({ type: "extension_ui_response", id: did(1), value: "b" });
    await expect(answer).resolves.toEqual({ kind: "value", value: "b" });
    registry.handleResponse({ type: "extension_ui_response", id: did(1), value: "a" });
    expect(sent.at(-1)).toMatchObject({ type: "extension_ui_error", id: did(1), code: "already_resolved", pending: false });
    expect(registry.size).toBe(0);
  });

  it("refuses a select value outside the options and keeps the dialog pending", async () => {
    const { sent, registry } = setup();
    const answer = registry.open({ method: "select", title: "T", options: ["a"] });
    registry.handleResponse({ type: "extension_ui_response", id: did(1), value: "zzz" });
    expect(sent.at(-1)).toMatchObject({ type: "extension_ui_error", code: "invalid_response", pending: true });
    expect(String((sent.at(-1) as { error: string }).error)).toContain("not one of its options");
    expect(registry.size).toBe(1);
    registry.handleResponse({ type: "extension_ui_response", id: did(1), value: "a" });
    await expect(answer).resolves.toEqual({ kind: "value", value: "a" });
  });

  it.each([
    ["confirm", { value: "yes" }, 'confirm dialogs are answered with "confirmed"'],
    ["confirm", { confirmed: "yes" }, "not a boolean"],
    ["input", { value: 42 }, "not a string"],
    ["editor", { confirmed: true }, 'answered with "value"'],
    ["input", {}, "carries no answer"],
    ["input", { cancelled: "yes" }, "not true or false"],
  ] as const)("refuses a %s answered with %j", (method, body, message) => {
    const { sent, registry } = setup();
    const spec = method === "confirm" ? { method, title: "t", message: "m" } : ({ method, title: "t" } as const);
    void registry.open(spec);
    registry.handleResponse({ type: "extension_ui_response", id: did(1), ...body });
    const error = sent.at(-1) as { type: string; error: string; pending: boolean };
    expect(error.type).toBe("extension_ui_error");
    expect(error.pending).toBe(true);
    expect(error.error).toContain(message);
  });

  it("cancelled: true wins for every dialog kind, with the dialog's default", async () => {
    const { registry } = setup();
    const confirm = registry.open({ method: "confirm", title: "t", message: "m" });
    registry.handleResponse({ type: "extension_ui_response", id: did(1), cancelled: true, confirmed: true });
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
    expect(sent.at(-1)).toEqual({ type: "extension_ui_dismissed", id: did(1), method: "confirm", reason: "timeout" });
    registry.handleResponse({ type: "extension_ui_response", id: did(1), confirmed: true });
    expect(sent.at(-1)).toMatchObject({ code: "already_resolved" });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("late answers get already_resolved with the reason while the dialog is among the last remembered, unknown_id after", async () => {
    vi.useFakeTimers();
    const { sent, registry } = setup({ rememberEndings: 100 });
    const late = (id: string) => {
      registry.handleResponse({ type: "extension_ui_response", id, value: "late" });
      return sent.at(-1) as { code: string; error: string; id: string };
    };
    // 250 dialogs: answered, timed out and aborted in turn.
    for (let i = 1; i <= 250; i++) {
      const controller = new AbortController();
      const answer = registry.open({ method: "input", title: "t" }, { timeout: 1000, signal: controller.signal });
      if (i % 3 === 0) registry.handleResponse({ type: "extension_ui_response", id: did(i), cancelled: true });
      else if (i % 3 === 1) vi.advanceTimersByTime(1000);
      else controller.abort();
      await answer;
    }
    expect(late(did(249))).toMatchObject({ code: "already_resolved", error: expect.stringContaining("already answered") });
    expect(late(did(250))).toMatchObject({ code: "already_resolved", error: expect.stringContaining("dismissed (timeout)") });
    expect(late(did(248))).toMatchObject({ code: "already_resolved", error: expect.stringContaining("dismissed (aborted)") });
    expect(late(did(151))).toMatchObject({ code: "already_resolved", error: expect.stringContaining("dismissed (timeout)") });
    // Older than the last 100: forgotten, like an id never issued.
    expect(late(did(150))).toMatchObject({ code: "unknown_id", id: did(150), error: expect.stringContaining("not one of the last 100 that ended") });
    for (const id of [did(1), did(251), `${PREFIX}1`, "0be0f0a2-0000-4000-8000-000000000000"]) {
      expect(late(id)).toMatchObject({ code: "unknown_id", id });
    }
    expect(vi.getTimerCount()).toBe(0);
  });

  it("gives every dialog its own UUID-shaped id, with a random prefix per registry", () => {
    const ids = new Set<string>();
    const a = new DialogRegistry({ send: (r) => ids.add((r as { id: string }).id) });
    const b = new DialogRegistry({ send: (r) => ids.add((r as { id: string }).id) });
    for (let i = 0; i < 50; i++) void a.open({ method: "input", title: "t" });
    void b.open({ method: "input", title: "t" });
    expect(ids.size).toBe(51);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const [first] = ids;
    expect([...ids].at(-1)!.slice(0, 24)).not.toBe(first!.slice(0, 24));
    // Fire-and-forget ids never collide with dialog ids.
    expect(ids.has(a.newFireAndForgetId())).toBe(false);
  });

  it("answers a confirm with yes, no, or cancelled, whatever else the response carries", async () => {
    const { registry } = setup();
    const bodies = [
      { confirmed: true },
      { confirmed: false },
      { confirmed: true, cancelled: false },
      { confirmed: true, cancelled: true },
      { cancelled: true },
    ];
    const answers = bodies.map(() => registry.open({ method: "confirm", title: "t", message: "m" }));
    bodies.forEach((body, i) => registry.handleResponse({ type: "extension_ui_response", id: did(i + 1), ...body }));
    await expect(Promise.all(answers)).resolves.toEqual([
      { kind: "confirmed", confirmed: true },
      { kind: "confirmed", confirmed: false },
      { kind: "confirmed", confirmed: true },
      { kind: "cancelled" },
      { kind: "cancelled" },
    ]);
  });

  it("refuses a signal option that is not an AbortSignal, before anything is sent", () => {
    const { sent, registry } = setup();
    expect(() => registry.open({ method: "input", title: "t" }, { signal: {} as AbortSignal })).toThrow(/must be an AbortSignal \(got an object\)/);
    expect(sent).toEqual([]);
    expect(registry.size).toBe(0);
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

  it("ignores zero and non-finite timeouts (no timer, not announced)", () => {
    vi.useFakeTimers();
    const { sent, registry } = setup();
    for (const timeout of [0, Number.NaN, Number.POSITIVE_INFINITY]) void registry.open({ method: "input", title: "t" }, { timeout });
    expect(sent).toHaveLength(3);
    expect(sent.every((r) => !("timeout" in r))).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a negative timeout has already run out: the dialog resolves with its default at once and nothing is sent", async () => {
    const { sent, registry } = setup();
    for (const timeout of [-5, -0.5, Number.NEGATIVE_INFINITY]) {
      await expect(registry.open({ method: "confirm", title: "t", message: "m" }, { timeout })).resolves.toEqual({ kind: "cancelled" });
    }
    expect(sent).toEqual([]);
    expect(registry.size).toBe(0);
  });

  it("an abort signal dismisses the dialog, and an aborted one never opens", async () => {
    const { sent, registry } = setup();
    const controller = new AbortController();
    const answer = registry.open({ method: "editor", title: "t", prefill: "p" }, { signal: controller.signal });
    controller.abort();
    await expect(answer).resolves.toEqual({ kind: "cancelled" });
    expect(sent.at(-1)).toEqual({ type: "extension_ui_dismissed", id: did(1), method: "editor", reason: "aborted" });
    const count = sent.length;
    await expect(registry.open({ method: "input", title: "t" }, { signal: controller.signal })).resolves.toEqual({ kind: "cancelled" });
    expect(sent.length).toBe(count);
  });

  it("dismissAll resolves every pending dialog once and later dialogs at once", async () => {
    const { sent, registry } = setup();
    const answers = [1, 2, 3].map(() => registry.open({ method: "input", title: "t" }));
    registry.dismissAll("shutdown");
    await expect(Promise.all(answers)).resolves.toEqual([{ kind: "cancelled" }, { kind: "cancelled" }, { kind: "cancelled" }]);
    expect(sent.filter((r) => r.type === "extension_ui_dismissed").map((r) => (r as { reason: string }).reason)).toEqual(["shutdown", "shutdown", "shutdown"]);
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
    for (const i of order) registry.handleResponse({ type: "extension_ui_response", id: did(i + 1), value: `a${i}` });
    for (const i of order) registry.handleResponse({ type: "extension_ui_response", id: did(i + 1), value: "again" });
    const results = await Promise.all(answers);
    results.forEach((r, i) => expect(r).toEqual({ kind: "value", value: `a${i}` }));
    expect([...settled.values()].every((n) => n === 1)).toBe(true);
    expect(settled.size).toBe(1000);
  });
});
