/**
 * The mode table (cli/mode-table.ts): every command line a mode can be chosen by selects exactly
 * one row, the one serving that mode; a mode's own flag checks run in its row's prepare, before
 * the session opens. Each mode's behaviour through the spawned CLI is in its own e2e tests.
 */
import { describe, expect, it } from "vitest";
import { MODES, parseArgs, UsageError } from "../src/cli/args.js";
import { MODE_TABLE, selectMode } from "../src/cli/mode-table.js";

const PIPES = { stdin: false, stdout: false };
const TERMINAL = { stdin: true, stdout: true };

describe("the mode table", () => {
  it.each([
    [["--mode", "rpc"], PIPES, "rpc"],
    [["--mode", "web"], PIPES, "web"],
    [["--mode", "acp"], PIPES, "acp"],
    [["--mode", "json", "hi"], TERMINAL, "print"],
    [["-p", "hi"], TERMINAL, "print"],
    [["--mode", "text"], PIPES, "print"],
    [["hi"], PIPES, "print"],
    [["--mode", "rpc", "-p"], PIPES, "rpc"],
  ])("%j with %j is served by exactly one row, %s", (argv, terminals, name) => {
    const options = parseArgs(argv, terminals);
    expect(MODE_TABLE.filter((row) => row.selects(options)).map((row) => row.name)).toEqual([name]);
    expect(selectMode(options).name).toBe(name);
  });

  it("has a row for every mode --mode names, and one row per name", () => {
    for (const mode of MODES) expect(MODE_TABLE.filter((row) => row.selects(parseArgs(["--mode", mode, "hi"], PIPES)))).toHaveLength(1);
    expect(new Set(MODE_TABLE.map((row) => row.name)).size).toBe(MODE_TABLE.length);
  });

  it("web mode's flag checks run in its prepare: a non-loopback host without a token is a flag error", async () => {
    const options = parseArgs(["--mode", "web", "--web-host", "0.0.0.0", "--web-token", ""], PIPES);
    const said: string[] = [];
    await expect(selectMode(options).prepare(options, (line) => said.push(line))).rejects.toThrow(UsageError);
    expect(said).toEqual([]);
  });
});
