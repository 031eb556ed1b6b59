/**
 * parley's demo extension: every ctx.ui method RPC mode carries, one command each.
 *
 *   ./node_modules/.bin/parley --mode rpc -e examples/extensions/rpc-demo.ts
 *   {"type":"prompt","message":"/demo-select"}
 *
 * Each command reports what the dialog returned with a notify, so a client (or a test)
 * sees the extension's side of every answer, cancel, timeout and abort.
 */
import type { ExtensionAPI, ExtensionContext } from "@parley/agent";

export default function rpcDemo(pi: ExtensionAPI): void {
  let dialogs = 0;
  const report = (ctx: ExtensionContext, what: string): void => {
    dialogs++;
    ctx.ui.setStatus("rpc-demo", `${dialogs} dialog${dialogs === 1 ? "" : "s"} answered`);
    ctx.ui.notify(what, "info");
  };

  pi.on("session_start", (event, ctx) => {
    ctx.ui.setTitle(`parley demo (${event.reason})`);
    ctx.ui.setStatus("rpc-demo", "ready");
    ctx.ui.setWidget("rpc-demo", ["parley RPC demo", "try /demo-select, /demo-confirm, /demo-input, /demo-editor"]);
  });

  pi.registerCommand("demo-select", {
    description: "select(): pick a colour",
    handler: async (_args, ctx) => {
      const colour = await ctx.ui.select("Pick a colour", ["red", "green", "blue"]);
      report(ctx, colour === undefined ? "select: cancelled" : `select: ${colour}`);
    },
  });

  pi.registerCommand("demo-confirm", {
    description: "confirm(): a yes/no question",
    handler: async (_args, ctx) => {
      const ok = await ctx.ui.confirm("Proceed?", "The demo will pretend to do something.");
      report(ctx, `confirm: ${ok}`);
    },
  });

  pi.registerCommand("demo-input", {
    description: "input(): one line of text (args become the placeholder)",
    handler: async (args, ctx) => {
      const name = await ctx.ui.input("Your name?", args || "type a name");
      report(ctx, name === undefined ? "input: cancelled" : `input: ${name}`);
    },
  });

  pi.registerCommand("demo-editor", {
    description: "editor(): multi-line text, prefilled",
    handler: async (_args, ctx) => {
      const text = await ctx.ui.editor("Edit the note", "line one\nline two");
      report(ctx, text === undefined ? "editor: cancelled" : `editor: ${text.split("\n").length} lines`);
    },
  });

  pi.registerCommand("demo-timed", {
    description: "confirm() with a timeout (default 5000 ms, or the number given)",
    handler: async (args, ctx) => {
      const timeout = Number(args) > 0 ? Number(args) : 5000;
      const ok = await ctx.ui.confirm("Quick!", `Answer within ${timeout} ms`, { timeout });
      report(ctx, `timed confirm: ${ok}`);
    },
  });

  pi.registerCommand("demo-timed-editor", {
    description: "editor() with a timeout: parley honours timeout and signal for all four dialogs",
    handler: async (args, ctx) => {
      const timeout = Number(args) > 0 ? Number(args) : 5000;
      const text = await ctx.ui.editor("Edit before the timer ends", "draft", { timeout });
      report(ctx, text === undefined ? "timed editor: no text" : `timed editor: ${text}`);
    },
  });

  pi.registerCommand("demo-abort", {
    description: "input() dismissed by an AbortSignal (default after 1000 ms)",
    handler: async (args, ctx) => {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), Number(args) > 0 ? Number(args) : 1000);
      const value = await ctx.ui.input("This dialog will be withdrawn", undefined, { signal: controller.signal });
      clearTimeout(timer);
      report(ctx, controller.signal.aborted ? "abort: withdrawn by the extension" : `abort: answered ${value}`);
    },
  });

  pi.registerCommand("demo-many", {
    description: "all four dialogs at once (a client shows them together, oldest first)",
    handler: async (_args, ctx) => {
      const [colour, ok, name, note] = await Promise.all([
        ctx.ui.select("Pick a colour", ["red", "green", "blue"]),
        ctx.ui.confirm("Proceed?", "The demo will pretend to do something."),
        ctx.ui.input("Your name?", "type a name"),
        ctx.ui.editor("Edit the note", "line one\nline two"),
      ]);
      report(
        ctx,
        `many: select=${colour ?? "cancelled"} confirm=${ok} input=${name ?? "cancelled"} editor=${note === undefined ? "cancelled" : JSON.stringify(note)}`,
      );
    },
  });

  pi.registerCommand("demo-notify", {
    description: "notify() of each type",
    handler: async (_args, ctx) => {
      ctx.ui.notify("an info note");
      ctx.ui.notify("a warning", "warning");
      ctx.ui.notify("an error", "error");
    },
  });

  pi.registerCommand("demo-widgets", {
    description: "setWidget() above and below the editor; `/demo-widgets clear` removes them",
    handler: async (args, ctx) => {
      if (args.trim() === "clear") {
        ctx.ui.setWidget("demo-above", undefined);
        ctx.ui.setWidget("demo-below", undefined);
        ctx.ui.setStatus("rpc-demo", undefined);
        return;
      }
      ctx.ui.setWidget("demo-above", ["above the editor"]);
      ctx.ui.setWidget("demo-below", ["below the editor", "(second line)"], { placement: "belowEditor" });
    },
  });

  pi.registerCommand("demo-prefill", {
    description: "setEditorText(): put text in the client's input box",
    handler: async (args, ctx) => {
      ctx.ui.setEditorText(args || "text from the demo extension");
    },
  });

  pi.registerCommand("demo-echo", {
    description: "notify(): the argument exactly as received, as JSON (lone surrogates show as \\uXXXX)",
    handler: async (args, ctx) => {
      ctx.ui.notify(`echo: ${JSON.stringify(args)}`, "info");
    },
  });

  pi.registerCommand("demo-title", {
    description: "setTitle(): rename the window",
    handler: async (args, ctx) => {
      ctx.ui.setTitle(args || "parley demo");
    },
  });

  pi.registerCommand("demo-degraded", {
    description: "the terminal-only methods, which RPC mode degrades (see stderr)",
    handler: async (_args, ctx) => {
      const custom = await ctx.ui.custom(() => undefined);
      const theme = ctx.ui.setTheme("dark");
      ctx.ui.notify(
        `mode=${ctx.mode} hasUI=${ctx.hasUI} custom=${String(custom)} editorText=${JSON.stringify(ctx.ui.getEditorText())} setTheme=${JSON.stringify(theme)}`,
      );
    },
  });
}
