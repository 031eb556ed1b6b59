/**
 * client.ui: exactly one response per dialog, none after its deadline or dismissal, the
 * AbortSignal, the fallback, and many dialogs at once.
 */
import { describe, expect, it } from "vitest";
import { DialogEndedError, DialogHandlerError, type AnyPendingDialog, type ClientErrorEvent, type DialogEndReason } from "../src/index.js";
import { connectFake, settle, sleep } from "./helpers/fake-agent.js";
import { AGENT_CEILING_MS, deadline } from "../../agent/test/helpers/deadline.js";

describe("dialog handlers", () => {
  it("map their results: value, confirmed, and undefined → cancelled", async () => {
    const { client, agent } = connectFake();
    client.ui.handle("select", (req) => req.options[1]);
    client.ui.handle("confirm", async () => false);
    client.ui.handle("input", async (req) => (req.title === "skip" ? undefined : `typed:${req.placeholder ?? ""}`));
    client.ui.handle("editor", (req) => `${req.prefill ?? ""}!`);
    agent.dialog("d1", "select");
    agent.dialog("d2", "confirm");
    agent.dialog("d3", "input", { placeholder: "ph" });
    agent.dialog("d4", "input", { title: "skip" });
    agent.dialog("d5", "editor", { prefill: "a\nb" });
    await agent.waitFor((r) => r["id"] === "d5");
    expect(agent.responses()).toEqual([
      { type: "extension_ui_response", id: "d1", value: "b" },
      { type: "extension_ui_response", id: "d2", confirmed: false },
      { type: "extension_ui_response", id: "d3", value: "typed:ph" },
      { type: "extension_ui_response", id: "d4", cancelled: true },
      { type: "extension_ui_response", id: "d5", value: "a\nb!" },
    ]);
  });

  it("a throwing or rejecting handler → cancelled, and a DialogHandlerError event", async () => {
    const { client, agent } = connectFake();
    const errors: ClientErrorEvent[] = [];
    client.onError((e) => errors.push(e));
    client.ui.handle("confirm", () => {
      throw new Error("sync boom");
    });
    client.ui.handle("input", async () => {
      throw new Error("async boom");
    });
    agent.dialog("c", "confirm");
    agent.dialog("i", "input");
    await agent.waitFor((r) => r["id"] === "i");
    expect(agent.responses()).toEqual([
      { type: "extension_ui_response", id: "c", cancelled: true },
      { type: "extension_ui_response", id: "i", cancelled: true },
    ]);
    expect(errors.map((e) => [e.constructor.name, (e as DialogHandlerError).dialogId, (e as DialogHandlerError).method])).toEqual([
      ["DialogHandlerError", "c", "confirm"],
      ["DialogHandlerError", "i", "input"],
    ]);
  });

  it("an answer that does not fit (a select value outside its options, a non-boolean confirm) → cancelled and an error", async () => {
    const { client, agent } = connectFake();
    const errors: ClientErrorEvent[] = [];
    client.onError((e) => errors.push(e));
    client.ui.handle("select", () => "z");
    client.ui.handle("confirm", () => "yes" as unknown as boolean);
    agent.dialog("s", "select");
    agent.dialog("c", "confirm");
    await agent.waitFor((r) => r["id"] === "c");
    expect(agent.responses().map((r) => r["cancelled"])).toEqual([true, true]);
    expect(errors).toHaveLength(2);
    expect(errors.every((e) => e instanceof DialogHandlerError)).toBe(true);
  });

  it("with no handler and no onDialog listener, a dialog is answered cancelled at once", async () => {
    const { client, agent } = connectFake();
    client.ui.handle("confirm", () => true).dispose();
    agent.dialog("x", "confirm");
    await agent.waitFor((r) => r["id"] === "x");
    expect(agent.responses()).toEqual([{ type: "extension_ui_response", id: "x", cancelled: true }]);
  });

  it("a later handle() replaces the earlier one; disposing the replaced one changes nothing", async () => {
    const { client, agent } = connectFake();
    const first = client.ui.handle("input", () => "first");
    client.ui.handle("input", () => "second");
    first.dispose();
    agent.dialog("x", "input");
    await agent.waitFor((r) => r["id"] === "x");
    expect(agent.responses()[0]?.["value"]).toBe("second");
  });

  it("onDialog receives unhandled dialogs and answers them later, once", async () => {
    const { client, agent } = connectFake();
    const seen: AnyPendingDialog[] = [];
    client.ui.onDialog((dialog) => seen.push(dialog));
    agent.dialog("s", "select");
    agent.dialog("c", "confirm");
    await settle();
    expect(seen.map((d) => d.id)).toEqual(["s", "c"]);
    expect(client.ui.pending().map((d) => d.id)).toEqual(["s", "c"]);
    const [select, confirm] = seen;
    if (select?.method !== "select" || confirm?.method !== "confirm") throw new Error("narrowing");
    expect(select.answer("c")).toBe(true);
    expect(select.answer("a")).toBe(false);
    expect(select.cancel()).toBe(false);
    expect(confirm.answer(true)).toBe(true);
    expect(select.signal.aborted).toBe(true);
    expect((select.signal.reason as DialogEndedError).reason).toBe("answered");
    await agent.waitFor((r) => r["id"] === "c");
    expect(agent.responses()).toEqual([
      { type: "extension_ui_response", id: "s", value: "c" },
      { type: "extension_ui_response", id: "c", confirmed: true },
    ]);
    expect(client.ui.pending()).toEqual([]);
  });

  it("a repeated request id is not a second dialog", async () => {
    const { client, agent } = connectFake();
    let calls = 0;
    client.ui.handle("input", () => `${++calls}`);
    agent.dialog("same", "input");
    agent.dialog("same", "input");
    await settle();
    await settle();
    expect(calls).toBe(1);
    expect(agent.responses()).toEqual([{ type: "extension_ui_response", id: "same", value: "1" }]);
  });
});

describe("deadlines and dismissal", () => {
  it("at the deadline (timeout from receipt) the signal fires and nothing is written, even when the handler answers later", async () => {
    const { client, agent } = connectFake();
    let signal: AbortSignal | undefined;
    let handlerDone!: () => void;
    const handlerFinished = new Promise<void>((resolve) => (handlerDone = resolve));
    client.ui.handle("confirm", async (_req, s) => {
      signal = s;
      // Answers after the deadline.
      await sleep(150);
      handlerDone();
      return true;
    });
    const ended: [string, DialogEndReason][] = [];
    const endedOnce = new Promise<void>((resolve) =>
      client.ui.onEnd(({ dialog, reason }) => {
        ended.push([dialog.id, reason]);
        resolve();
      }),
    );
    agent.dialog("t", "confirm", { timeout: 40 });
    await settle();
    const dialog = client.ui.get("t");
    expect(dialog?.deadline).toBe((dialog?.receivedAt ?? 0) + 40);
    await endedOnce;
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBeInstanceOf(DialogEndedError);
    expect((signal?.reason as DialogEndedError).reason).toBe("timeout");
    expect(ended).toEqual([["t", "timeout"]]);
    await handlerFinished;
    await settle();
    expect(agent.responses()).toEqual([]);
  });

  it("a handler that answers before the deadline is written", async () => {
    const { client, agent } = connectFake();
    client.ui.handle("confirm", async () => {
      await sleep(10);
      return true;
    });
    agent.dialog("t", "confirm", { timeout: 500 });
    await agent.waitFor((r) => r["id"] === "t");
    expect(agent.responses()).toEqual([{ type: "extension_ui_response", id: "t", confirmed: true }]);
  });

  it("parley's extension_ui_dismissed fires the signal; the handler's answer is dropped", async () => {
    const { client, agent } = connectFake();
    let resolve!: (value: string) => void;
    let signal: AbortSignal | undefined;
    client.ui.handle("input", (_req, s) => {
      signal = s;
      return new Promise<string>((r) => (resolve = r));
    });
    agent.dialog("d", "input");
    await settle();
    agent.write({ type: "extension_ui_dismissed", id: "d", method: "input", reason: "aborted" });
    await settle();
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toMatchObject({ reason: "dismissed", dismissReason: "aborted" });
    resolve("too late");
    await settle();
    expect(agent.responses()).toEqual([]);
  });

  it("a handler that rejects because its signal fired reports nothing", async () => {
    const { client, agent } = connectFake();
    const errors: ClientErrorEvent[] = [];
    client.onError((e) => errors.push(e));
    let rejected!: () => void;
    const handlerRejected = new Promise<void>((resolve) => (rejected = resolve));
    client.ui.handle(
      "input",
      (_req, signal) =>
        new Promise<string>((_, reject) =>
          signal.addEventListener("abort", () => {
            reject(signal.reason);
            rejected();
          }),
        ),
    );
    agent.dialog("d", "input", { timeout: 20 });
    await handlerRejected;
    await settle();
    expect(errors).toEqual([]);
    expect(agent.responses()).toEqual([]);
  });

  it("close ends open dialogs with reason closed and writes nothing", async () => {
    const { client, agent } = connectFake();
    const reasons: DialogEndReason[] = [];
    client.ui.onDialog((d) => d.signal.addEventListener("abort", () => reasons.push((d.signal.reason as DialogEndedError).reason)));
    agent.dialog("a", "input");
    agent.dialog("b", "editor");
    await settle();
    const [a] = client.ui.pending();
    await client.close();
    expect(reasons).toEqual(["closed", "closed"]);
    expect(a?.method === "input" && a.answer("x")).toBe(false);
    await settle();
    expect(agent.responses()).toEqual([]);
  });

  it("dialogs listed by a get_ui_state snapshot are adopted with their remaining time", async () => {
    const { client, agent } = connectFake();
    const answered: string[] = [];
    client.ui.handle("confirm", (req) => {
      answered.push(req.id);
      return true;
    });
    client.ui.onDialog(() => {}); // keep the input open
    const state = client.getUiState();
    const command = await agent.command("get_ui_state");
    agent.reply(command, {
      statuses: {},
      widgets: {},
      notifications: [],
      pendingDialogs: [
        { request: { type: "extension_ui_request", id: "old-1", method: "confirm", title: "t", message: "m", timeout: 9000 }, remainingMs: 4000 },
        { request: { type: "extension_ui_request", id: "old-2", method: "input", title: "t" } },
      ],
    });
    await state;
    expect(answered).toEqual(["old-1"]);
    const input = client.ui.get("old-2");
    expect(input?.deadline).toBeUndefined();
    await agent.waitFor((r) => r["id"] === "old-1");
    expect(agent.responses()).toEqual([{ type: "extension_ui_response", id: "old-1", confirmed: true }]);
    // A second snapshot still listing the answered dialog does not reopen it.
    const again = client.getUiState();
    agent.reply(await agent.command("get_ui_state", agent.received.indexOf(command) + 1), {
      statuses: {},
      widgets: {},
      notifications: [],
      pendingDialogs: [{ request: { type: "extension_ui_request", id: "old-1", method: "confirm", title: "t", message: "m" } }],
    });
    await again;
    expect(answered).toEqual(["old-1"]);
  });
});

describe("many dialogs", () => {
  it("1,000 concurrent dialogs are answered exactly once each; dismissed and timed-out ones not at all", async () => {
    const { client, agent } = connectFake();
    const N = 1000;
    const signals = new Map<string, AbortSignal>();
    client.ui.handle("input", async (req, signal) => {
      signals.set(req.id, signal);
      // A timed dialog's handler answers only once its timeout has passed (a late answer, which must
      // not be sent). Waiting for the signal, not for a longer sleep: a stalled event loop can run
      // a 60 ms timer before a 5 ms one.
      if (Number(req.title) % 7 === 0) await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      else await sleep(Math.floor(Math.random() * 20));
      return `answer-${req.id}`;
    });
    for (let i = 0; i < N; i++) {
      // Every 7th: a short timeout it will miss. Every 11th (not 7th): dismissed by the agent.
      agent.dialog(`q${i}`, "input", { title: String(i), ...(i % 7 === 0 ? { timeout: 5 } : {}) });
    }
    for (let i = 0; i < N; i++) {
      if (i % 11 === 0 && i % 7 !== 0) agent.write({ type: "extension_ui_dismissed", id: `q${i}`, method: "input", reason: "aborted" });
    }
    // Wait for every dialog to end (answered, timed out or dismissed) and every answer to arrive,
    // not for a time: a ceiling only against a hang.
    const answered = Array.from({ length: N }, (_, i) => i).filter((i) => i % 7 !== 0 && i % 11 !== 0).length;
    const ceiling = Date.now() + deadline(AGENT_CEILING_MS);
    while ((client.ui.pending().length > 0 || agent.responses().length < answered) && Date.now() < ceiling) await sleep(10);
    await settle();
    const counts = new Map<string, number>();
    for (const r of agent.responses()) counts.set(String(r["id"]), (counts.get(String(r["id"])) ?? 0) + 1);
    for (let i = 0; i < N; i++) {
      const id = `q${i}`;
      const expected = i % 7 === 0 || i % 11 === 0 ? 0 : 1;
      expect(counts.get(id) ?? 0, id).toBe(expected);
      expect(signals.get(id)?.aborted, id).toBe(true);
    }
    expect(client.ui.pending()).toEqual([]);
  });
});

describe("handler context and unobserved errors", () => {
  it("a handler gets the dialog's bookkeeping, with the deadline of a timed dialog", async () => {
    const { client, agent } = connectFake();
    const seen: { deadline: number | undefined; receivedAt: number }[] = [];
    client.ui.handle("confirm", (_req, _signal, dialog) => {
      seen.push({ deadline: dialog.deadline, receivedAt: dialog.receivedAt });
      return true;
    });
    agent.dialog("t1", "confirm", { timeout: 5000 });
    await agent.waitFor((r) => r["id"] === "t1");
    expect(seen).toHaveLength(1);
    expect(seen[0]!.deadline! - seen[0]!.receivedAt).toBe(5000);
  });

  it("with no onError listener, a handler's failure becomes a process warning instead of vanishing", async () => {
    const { client, agent } = connectFake();
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on("warning", onWarning);
    try {
      client.ui.handle("input", () => {
        throw new Error("unobserved boom");
      });
      agent.dialog("w1", "input");
      await agent.waitFor((r) => r["id"] === "w1");
      await settle();
      expect(warnings.some((w) => w.name === "DialogHandlerError")).toBe(true);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
