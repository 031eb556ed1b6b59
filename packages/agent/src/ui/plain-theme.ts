/**
 * pi extensions style text with `ctx.ui.theme.fg("accent", text)` and friends. RPC clients
 * draw their own UI, so every styling function hands back its text unchanged.
 */
import type { PlainTheme } from "../extensions/types.js";

const unchanged = (text: string): string => text;

/** Members whose plain form is not "the last string argument". */
const SPECIAL: Readonly<Record<string, (...args: unknown[]) => unknown>> = {
  // Opening escape sequences: none, or the colour's name would end up in the text.
  getFgAnsi: () => "",
  getBgAnsi: () => "",
  // These hand back a styling function, which the caller then applies.
  getThinkingBorderColor: () => unchanged,
  getBashModeBorderColor: () => unchanged,
};

export const plainTheme: PlainTheme = new Proxy({} as PlainTheme, {
  get(_target, property) {
    // Not a thenable: `await theme` (or a promise resolved with it) must not call a fake then().
    if (typeof property === "symbol" || property === "then") return undefined;
    const special = SPECIAL[property];
    if (special) return special;
    // fg(color, text), bg(color, text), bold(text), …: the text is the last string argument.
    return (...args: unknown[]): string => {
      for (let i = args.length - 1; i >= 0; i--) if (typeof args[i] === "string") return args[i] as string;
      return "";
    };
  },
});
