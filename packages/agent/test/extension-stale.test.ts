/**
 * A replaced extension instance is stale, as in pi (in-process, factories given directly): once a
 * session switch or ctx.reload() has run the factories again, every method of the old `pi` and
 * every member of an old `ctx` throws the stale error, while `pi.events` stays a plain object and
 * the new instance works. Getters are only checked when read.
 */
import { describe, expect, it } from "vitest";
import type { ExtensionAPI, ExtensionCommandContext } from "../src/extensions/types.js";
import { STALE_EXTENSION_MESSAGE } from "../src/extensions/runtime.js";
import { serveScripted } from "./helpers/in-process.js";

type Rec = Record<string, unknown>;

describe("stale extension instances", () => {
  it("after new_session, the old pi and ctx throw; the new instance works", async () => {
    const apis: ExtensionAPI[] = [];
    const contexts: ExtensionCommandContext[] = [];
    const harness = await serveScripted(
      [],
      [
        (pi) => {
          apis.push(pi);
          pi.registerCommand("keep", { handler: async (_args, ctx) => void contexts.push(ctx) });
        },
      ],
    );
    await harness.request({ type: "prompt", message: "/keep" });
    await harness.until(() => contexts.length === 1);
    const [oldPi, oldCtx] = [apis[0]!, contexts[0]!];
    // While live, everything works.
    expect(oldCtx.cwd).toBe(harness.dir);
    expect(typeof oldPi.getSessionName).toBe("function");
    oldPi.getSessionName();

    expect((await harness.request({ type: "new_session" }))["success"]).toBe(true);
    expect(apis).toHaveLength(2);
    const stale = (run: () => unknown): void => expect(run).toThrow(STALE_EXTENSION_MESSAGE);
    stale(() => oldPi.on("agent_end", () => {}));
    stale(() => oldPi.sendMessage({ customType: "x", content: "x", display: false }));
    stale(() => oldPi.registerCommand("late", { handler: async () => {} }));
    stale(() => oldPi.getSessionName());
    stale(() => oldCtx.ui);
    stale(() => oldCtx.cwd);
    stale(() => oldCtx.model);
    stale(() => oldCtx.sessionManager);
    stale(() => oldCtx.isIdle());
    stale(() => oldCtx.newSession());
    // The bus is a plain object (pi does not guard it either).
    expect(typeof oldPi.events.emit).toBe("function");

    // The command the old instance registered is the new instance's now; nothing "late" was added.
    await harness.request({ type: "prompt", message: "/keep" });
    await harness.until(() => contexts.length === 2);
    expect(contexts[1]!.cwd).toBe(harness.dir);
    const names = ((await harness.request({ type: "get_commands" }))["data"] as { commands: Rec[] }).commands.map((c) => c["name"]);
    expect(names).toEqual(["keep"]);
    expect(harness.transport.sent.filter((r) => r["type"] === "extension_error")).toEqual([]);
  });

  it("ctx.reload() leaves the calling ctx stale; withSession's ctx is the new instance's", async () => {
    const seen: string[] = [];
    const harness = await serveScripted(
      [],
      [
        (pi) => {
          pi.registerCommand("reload-then-use", {
            handler: async (_args, ctx) => {
              await ctx.reload();
              try {
                void ctx.ui;
                seen.push("reload: usable");
              } catch (error) {
                seen.push(`reload: ${error instanceof Error ? error.message : String(error)}`);
              }
            },
          });
          pi.registerCommand("fresh", {
            handler: async (_args, ctx) => {
              await ctx.newSession({
                withSession: async (next) => {
                  seen.push(`withSession: ${next.sessionManager.getSessionId() === ctx.sessionManager.getSessionId() ? "same" : "other"}`);
                },
              });
            },
          });
          pi.registerCommand("fresh-ok", {
            handler: async (_args, ctx) => {
              const before = ctx.sessionManager.getSessionId();
              await ctx.newSession({
                withSession: async (next) => void seen.push(`withSession: ${next.sessionManager.getSessionId() !== before ? "new session" : "old"}`),
              });
            },
          });
        },
      ],
    );
    await harness.request({ type: "prompt", message: "/reload-then-use" });
    await harness.until(() => seen.length === 1);
    expect(seen[0]).toBe(`reload: ${STALE_EXTENSION_MESSAGE}`);
    // Reading the old ctx inside withSession throws: the handler's error is reported, once.
    await harness.request({ type: "prompt", message: "/fresh" });
    await harness.until(() => harness.transport.sent.some((r) => r["type"] === "extension_error"));
    expect(harness.transport.sent.filter((r) => r["type"] === "extension_error").map((r) => r["error"])).toEqual([STALE_EXTENSION_MESSAGE]);
    await harness.request({ type: "prompt", message: "/fresh-ok" });
    await harness.until(() => seen.length === 2);
    expect(seen[1]).toBe("withSession: new session");
  });

  it("an extension command sent right behind a switch runs in the new session, by the new instance", async () => {
    let instances = 0;
    const ran: number[] = [];
    const harness = await serveScripted(
      ["one"],
      [
        (pi) => {
          const instance = ++instances;
          pi.registerCommand("whoami", {
            handler: async (_args, ctx) => {
              // Reading ctx throws if this instance was replaced meanwhile.
              void ctx.sessionManager.getSessionId();
              ran.push(instance);
            },
          });
        },
      ],
    );
    // Something to clone (in memory: no session file to switch to).
    await harness.prompt("first");
    for (const type of ["clone", "new_session"] as const) {
      const before = instances;
      // Both lines before either is answered: the command waits for the switch.
      const switched = harness.send({ type });
      const asked = harness.send({ type: "prompt", message: "/whoami" });
      expect(await harness.response(switched)).toMatchObject({ success: true });
      expect(await harness.response(asked)).toMatchObject({ success: true });
      expect(ran.at(-1)).toBe(before + 1);
    }
    expect(harness.transport.sent.filter((r) => r["type"] === "extension_error")).toEqual([]);
  });
});
