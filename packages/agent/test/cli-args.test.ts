/**
 * How the command line picks a mode (pi's rule) and names a misspelt flag; the spawned CLI's side
 * is in print-mode.e2e.test.ts and rpc-lifecycle.e2e.test.ts. Terminals are passed in, so each
 * case is the same wherever the tests run.
 */
import { describe, expect, it } from "vitest";
import { parseArgs, resolveExtensionFlags, UsageError } from "../src/cli/args.js";
import { likelyFlag } from "../src/cli/flag-typos.js";

const PIPES = { stdin: false, stdout: false };
const TERMINAL = { stdin: true, stdout: true };

describe("the mode", () => {
  it.each([
    [["--mode", "rpc"], PIPES, "rpc"],
    [["--mode", "json", "hi"], TERMINAL, "json"],
    [["-p", "hi"], TERMINAL, "print"],
    [["--mode", "text"], PIPES, "print"],
    [["hi"], PIPES, "print"],
    [["hi"], { stdin: true, stdout: false }, "print"],
    // --mode rpc wins over -p, as in pi.
    [["--mode", "rpc", "-p"], PIPES, "rpc"],
  ])("%j with %j runs %s", (argv, terminals, mode) => {
    expect(parseArgs(argv, terminals).mode).toBe(mode);
  });

  it("both terminals and no -p (pi's terminal UI) is refused with what to run instead", () => {
    expect(() => parseArgs([], TERMINAL)).toThrow(/no --mode given.*parley -p "question".*--mode rpc/);
    expect(() => parseArgs(["--mode", "text"], TERMINAL)).toThrow(/--mode text in a terminal is pi's terminal UI/);
    // A misspelt --mode is named too: there is no mode to judge extension flags in.
    expect(() => parseArgs(["--mdoe", "rpc"], TERMINAL)).toThrow("no --mode given (unknown option --mdoe (did you mean --mode?))");
  });

  it("messages and @files go to the one-shot modes; RPC mode refuses @files", () => {
    const print = parseArgs(["-p", "@a.txt", "one", "two"], PIPES);
    expect([print.fileArgs, print.messages, print.warnings]).toEqual([["a.txt"], ["one", "two"], []]);
    expect(() => parseArgs(["--mode", "rpc", "@a.txt"], PIPES)).toThrow(UsageError);
  });
});

describe("a misspelt flag", () => {
  it("is named with the flag meant when one is a typo away (a swap, a letter wrong, missing or extra)", () => {
    const options = parseArgs(["--mode", "rpc", "--mdoe", "x"], PIPES);
    expect(() => resolveExtensionFlags(options, new Map())).toThrow("unknown option --mdoe (did you mean --mode?)");
    expect(likelyFlag("sesion", ["session", "model"])).toBe("session");
    expect(likelyFlag("thinkign", ["thinking"])).toBe("thinking");
    expect(likelyFlag("modell", ["model", "models"])).toBe("model");
  });

  it("an extension's flag is suggested too; a name far from every flag gets pi's plain refusal", () => {
    const typo = parseArgs(["--mode", "rpc", "--greting", "x"], PIPES);
    expect(() => resolveExtensionFlags(typo, new Map([["greeting", { type: "string" as const }]]))).toThrow("did you mean --greeting?");
    const far = parseArgs(["--mode", "rpc", "--nope"], PIPES);
    expect(() => resolveExtensionFlags(far, new Map([["greeting", { type: "string" as const }]]))).toThrow(
      "Unknown option --nope (extension flags: --greeting)",
    );
  });

  it("registered by an extension, it is that extension's flag, not a typo", () => {
    const options = parseArgs(["--mode", "rpc", "--mdoe", "x"], PIPES);
    expect(resolveExtensionFlags(options, new Map([["mdoe", { type: "string" as const }]])).get("mdoe")).toBe("x");
  });
});
