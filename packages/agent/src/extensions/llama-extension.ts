/**
 * The newest pi's built-in `llama.cpp` extension (`builtin:llama.cpp`) as it behaves without a
 * terminal: its `/llama` command manages a llama.cpp router's models in pi's interactive mode
 * only, and in RPC, print and JSON mode it only says so (a warning notification), which is all
 * parley's modes need. Its `llama.cpp` provider, whose models come from a running router, is not
 * here (the catalogue is pi-ai 1.6's; see NOTES-drifts.md).
 */
import type { ExtensionAPI } from "./types.js";

export function llamaExtension(pi: ExtensionAPI): void {
  pi.registerCommand("llama", {
    description: "Manage llama.cpp router models",
    handler: async (_args, ctx) => {
      // pi asks for its terminal UI first (ctx.mode "tui"), which parley never has.
      ctx.ui.notify("/llama is available in interactive mode", "warning");
    },
  });
}
