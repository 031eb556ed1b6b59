/**
 * `parley mcp add|remove` against pi 1.6.0's `pi mcp add|remove`, both spawned on the same Node,
 * each in a private world (a HOME with its agent directory, a project inside it). After every
 * command: the same exit status, stdout and stderr (the world's folder and the program's name made
 * alike), and both `mcp.json` files byte for byte; parley leaves no lock or temporary file behind.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_CEILING_MS, deadline } from "./helpers/deadline.js";
import { type CliResult as Result, runSide, SIDES, type Side, type SideWorld as World, sideWorld } from "./helpers/newest-pi.js";

const COMMAND_MS = deadline(5 * AGENT_CEILING_MS);
const TEST_MS = deadline(40 * AGENT_CEILING_MS);

let root: string;
const worlds = {} as Record<Side, World>;

/** A user's file with its own indentation (tabs), a byte-order mark, a key besides mcpServers and an entry to keep. */
const USER_FILE = '\uFEFF{\n\t"autoEnableCodemode": false,\n\t"mcpServers": {\n\t\t"keep": { "command": "keep-me", "enabled": false }\n\t}\n}\n';

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "parley-mcpedit-")));
  for (const side of SIDES) {
    const w = sideWorld(join(root, side));
    writeFileSync(join(w.agentDir, "mcp.json"), USER_FILE);
    writeFileSync(join(w.agentDir, "settings.json"), "{}\n");
    worlds[side] = w;
  }
});

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

const run = (side: Side, args: string[]): Promise<Result> => runSide(side, ["mcp", ...args], { cwd: worlds[side].cwd, env: worlds[side].env, ms: COMMAND_MS });

/** The world's folder as <world>, the program's own name as <app>. */
const alike = (side: Side, text: string): string =>
  text
    .split(worlds[side].base)
    .join("<world>")
    .replace(/(?<![\w./-])(pi|parley)(?= )/g, "<app>");

const fileText = (file: string): string => (existsSync(file) ? readFileSync(file, "utf8") : "(none)");
const files = (side: Side) => ({
  user: fileText(join(worlds[side].agentDir, "mcp.json")),
  project: fileText(join(worlds[side].cwd, ".pi", "mcp.json")),
});

/** Both sides run the command; their results and both mcp.json files are the same. */
async function same(args: string[]): Promise<Result> {
  const [pi, parley] = (await Promise.all(SIDES.map((side) => run(side, args)))) as [Result, Result];
  expect({ code: parley.code, stdout: alike("parley", parley.stdout), stderr: alike("parley", parley.stderr) }, `mcp ${args.join(" ")}`).toEqual({
    code: pi.code,
    stdout: alike("pi", pi.stdout),
    stderr: alike("pi", pi.stderr),
  });
  expect(files("parley"), `files after mcp ${args.join(" ")}`).toEqual(files("pi"));
  return parley;
}

describe("parley mcp add | remove, as pi 1.6's", () => {
  it(
    "writes the same entries to the same file with the same output, and refuses what pi refuses",
    async () => {
      // Adding: stdio and HTTP servers, every option, a replacement; the user's file keeps its
      // tabs and other keys (its byte-order mark dropped, as pi drops it).
      expect((await same(["add", "fs", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "."])).code).toBe(0);
      await same(["add", "fs", "--env", "A=1", "--env", "B=x=y", "--cwd", "sub", "--exposure", "codemode-deferred", "node", "server.js", "--port", "3"]);
      await same(["add", "docs", "--url", "https://example.com/mcp", "--bearer-token-env-var", "DOCS_TOKEN", "--description", "The docs"]);
      await same([
        "add",
        "web",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--header",
        "X-Team=blue",
        "--oauth-client-id",
        "cid",
        "--oauth-client-secret",
        "${SECRET}",
        "--oauth-callback-port",
        "8123",
        "--oauth-client-name",
        "Me",
        "--oauth-client-registration",
        "dcr",
        "--exposure",
        "direct",
      ]);
      await same(["add", "meta", "--url", "https://example.com/m", "--oauth-client-registration", "cimd"]);
      // Refused: nothing written.
      for (const args of [
        ["add"],
        ["add", "x"],
        ["add", "x", "--url", "https://a.example", "--", "cmd"],
        ["add", "x", "--env", "A=1", "--url", "https://a.example"],
        ["add", "x", "--header", "H=1", "--", "cmd"],
        ["add", "x", "--header", "novalue", "--url", "https://a.example"],
        ["add", "x", "--env", "=1", "--", "cmd"],
        ["add", "x", "--bogus", "1", "--", "cmd"],
        ["add", "x", "--url"],
        ["add", "bad name", "--", "cmd"],
        ["add", "x", "--exposure", "wide", "--", "cmd"],
        ["add", "x", "--url", "https://a.example", "--oauth-client-registration", "cimd", "--oauth-client-id", "c"],
        ["add", "x", "--url", "https://a.example", "--oauth-client-registration", "sometimes"],
        ["add", "x", "--url", "not a url"],
      ]) {
        expect((await same(args)).code).toBe(1);
      }
      // The project's file (-l), in a project not trusted yet, then trusted.
      await same(["add", "-l", "tools", "--env", "API_KEY=${TOOLS_KEY}", "--", "uvx", "tools-mcp"]);
      for (const side of SIDES) writeFileSync(join(worlds[side].agentDir, "trust.json"), JSON.stringify({ [worlds[side].cwd]: true }));
      await same(["add", "--local", "docs", "--url", "https://example.com/project-mcp"]);
      // Removing: from the right file, a name only the other file has, a name no file has, usage.
      await same(["remove", "tools"]);
      await same(["remove", "-l", "fs"]);
      await same(["remove", "-l", "tools"]);
      await same(["remove", "fs"]);
      await same(["remove", "fs"]);
      await same(["remove"]);
      await same(["remove", "a", "b"]);
      await same(["remove", "--all", "a"]);
      await same(["frobnicate"]);
      // Files pi cannot edit are left as they are.
      for (const text of ["[1]\n", '{"mcpServers": []}\n', "{ not json\n"]) {
        for (const side of SIDES) writeFileSync(join(worlds[side].cwd, ".pi", "mcp.json"), text);
        expect((await same(["add", "-l", "y", "--", "cmd"])).code).toBe(1);
        expect((await same(["remove", "-l", "docs"])).code).toBe(1);
      }
      // --help anywhere prints the help (its text is each program's own) and changes nothing.
      for (const args of [["--help"], ["add", "x", "--", "cmd", "--help"], ["remove", "-h"]]) {
        const [pi, parley] = (await Promise.all(SIDES.map((side) => run(side, args)))) as [Result, Result];
        expect([parley.code, parley.stderr, pi.code, pi.stderr]).toEqual([0, "", 0, ""]);
        expect(parley.stdout).toMatch(/parley mcp add <server>/);
        expect(files("parley")).toEqual(files("pi"));
      }
      // No lock folder or temporary file left by parley.
      expect(readdirSync(worlds.parley.agentDir).sort()).toEqual(["mcp.json", "settings.json", "trust.json"]);
      expect(readdirSync(join(worlds.parley.cwd, ".pi"))).toEqual(["mcp.json"]);
      expect(statSync(join(worlds.parley.agentDir, "mcp.json")).mode & 0o777).toBe(statSync(join(worlds.pi.agentDir, "mcp.json")).mode & 0o777);
    },
    TEST_MS,
  );
});
