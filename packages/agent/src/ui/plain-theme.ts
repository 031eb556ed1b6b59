/**
 * pi extensions style text with `ctx.ui.theme.fg("accent", text)` and friends. RPC clients
 * draw their own UI, so every styling function hands back its text unchanged.
 */
import type { PlainTheme } from "../extensions/types.js";

export const plainTheme: PlainTheme = new Proxy({} as PlainTheme, {
  get(_target, property) {
    if (typeof property === "symbol") return undefined;
    // fg(color, text), bg(color, text), bold(text), …: the text is the last string argument.
    return (...args: unknown[]): string => {
      for (let i = args.length - 1; i >= 0; i--) if (typeof args[i] === "string") return args[i] as string;
      return "";
    };
  },
});
