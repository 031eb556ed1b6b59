import { describe, expect, it } from "vitest";
import { DialogRegistry, type DialogOutput } from "../src/ui/dialog-registry.js";
import { createRpcUiContext } from "../src/ui/rpc-ui-context.js";

function setup() {
  const sent: DialogOutput[] = [];
  const dialogs = new DialogRegistry({ send: (r) => sent.push(r), idPrefix: "cccccccc-cccc-4ccc-8ccc-" });
  const ui = createRpcUiContext({ dialogs, fireAndForget: () => {}, diagnose: () => {}, warnOnce: () => {} }, "/ext/test.ts");
  const answer = (body: Record<string, unknown>) => {
    const request = sent.at(-1) as { id: string };
    dialogs.handleResponse({ type: "extension_ui_response", id: request.id, ...body });
  };
  return { sent, dialogs, ui, answer };
}

describe("ctx.ui dialogs in RPC mode", () => {
  it("maps each answer to what the method returns", async () => {
    const { ui, answer } = setup();
    const select = ui.select("Pick", ["a", "b"]);
    answer({ value: "b" });
    await expect(select).resolves.toBe("b");
    const confirm = ui.confirm("Sure?", "Really");
    answer({ confirmed: false });
    await expect(confirm).resolves.toBe(false);
    const input = ui.input("Name", "placeholder");
    answer({ cancelled: true });
    await expect(input).resolves.toBeUndefined();
    const editor = ui.editor("Text", "prefill");
    answer({ value: "edited" });
    await expect(editor).resolves.toBe("edited");
  });

  it("turns arguments that cannot be sent into a rejected promise, never a throw, and sends nothing", async () => {
    const { ui, sent, dialogs } = setup();
    const hostile = {
      toString: () => {
        throw new Error("no string for you");
      },
    };
    const calls = [
      () => ui.select(hostile as unknown as string, ["a"]),
      () => ui.select("t", "not an array" as unknown as string[]),
      () => ui.confirm("t", hostile as unknown as string),
      () => ui.input("t", hostile as unknown as string),
      () => ui.editor(hostile as unknown as string),
      () => ui.confirm("t", "m", { signal: { aborted: false } as AbortSignal }),
    ];
    for (const call of calls) {
      let result: Promise<unknown> | undefined;
      expect(() => (result = call())).not.toThrow();
      await expect(result).rejects.toThrow();
    }
    expect(sent).toEqual([]);
    expect(dialogs.size).toBe(0);
  });

  it("leaves out the placeholder and prefill that were not given", () => {
    const { ui, sent } = setup();
    void ui.input("Name");
    void ui.editor("Text");
    expect(sent.map((r) => Object.keys(r).sort())).toEqual([
      ["id", "method", "title", "type"],
      ["id", "method", "title", "type"],
    ]);
  });
});
