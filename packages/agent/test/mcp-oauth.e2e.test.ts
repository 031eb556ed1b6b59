/**
 * MCP OAuth through the spawned CLI, nothing beyond 127.0.0.1: `parley mcp login|logout` against
 * pi 1.6.0's `pi mcp login|logout`, both signing in to a local authorization server in front of a
 * Streamable HTTP MCP server (fixtures/mcp/oauth-mcp-server.ts). The browser step is the test
 * following the printed authorization URL with fetch to the loopback callback, as a browser
 * would (pi's own headless path: it prints the URL and waits; its browser opener is a no-op here).
 * Then: the same exit status and lines, the same mcp-auth.json shape; either uses the tokens the
 * other saved; expired tokens are refreshed and saved; a pi and a parley refreshing one sign-in
 * at the same time both connect and no refresh token is ever spent twice.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lastAssistantText, notices } from "./helpers/agent-records.js";
import { checkedAgents } from "./helpers/checked-agents.js";
import { OAuthMcpServer } from "./fixtures/mcp/oauth-mcp-server.js";
import { AGENT_CEILING_MS, deadline } from "./helpers/deadline.js";
import { type CliResult as Result, runSide, type Side, type SideWorld as World, sideWorld, stdoutLines } from "./helpers/newest-pi.js";
import { type AgentProcess, PARLEY_BIN, ROOT, spawnAgent } from "./helpers/spawn.js";

const COMMAND_MS = deadline(5 * AGENT_CEILING_MS);
const TEST_MS = deadline(40 * AGENT_CEILING_MS);
/** The model of the MCP tests: it calls the tool the prompt names and says what the tool said. */
const MODEL = join(ROOT, "packages/agent/test/fixtures/mcp/mcp-model.ts");
const agents = checkedAgents();

const server = new OAuthMcpServer();
let root: string;

beforeAll(async () => {
  await server.start();
  root = realpathSync(mkdtempSync(join(tmpdir(), "parley-mcpauth-")));
  // pi opens the authorization URL with xdg-open; here that opener does nothing (no browser).
  const bin = join(root, "bin");
  mkdirSync(bin);
  for (const opener of ["xdg-open", "open"]) {
    writeFileSync(join(bin, opener), "#!/bin/sh\nexit 0\n");
    chmodSync(join(bin, opener), 0o755);
  }
});

afterAll(async () => {
  await server.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

let worldCount = 0;
/** A HOME with an agent directory whose mcp.json has the OAuth server as "docs". */
function world(exposure = "codemode"): World {
  const w = sideWorld(join(root, `world-${++worldCount}`), { PATH: `${join(root, "bin")}:${process.env["PATH"] ?? ""}` });
  writeFileSync(join(w.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { docs: { url: server.mcpUrl, exposure } } }));
  writeFileSync(join(w.agentDir, "settings.json"), "{}\n");
  return w;
}

/** Runs `<side> mcp <args>`; `onLine` sees each stdout line as it comes. */
const run = (side: Side, w: World, args: string[], onLine?: (line: string) => void): Promise<Result> =>
  runSide(side, ["mcp", ...args], { cwd: w.cwd, env: w.env, ms: COMMAND_MS, ...(onLine ? { onStdout: stdoutLines(onLine) } : {}) });

/** The user's browser: follows the authorization URL to the loopback callback, which must answer 200. */
async function approve(authorizationUrl: string): Promise<void> {
  const authorize = await fetch(authorizationUrl, { redirect: "manual" });
  expect(authorize.status).toBe(302);
  const callback = await fetch(authorize.headers.get("location") ?? "");
  expect(callback.status).toBe(200);
  await callback.text();
}

/** `mcp login docs`, approving in the "browser" when the URL is printed. */
async function login(side: Side, w: World): Promise<Result> {
  let approving: Promise<void> | undefined;
  const result = await run(side, w, ["login", "docs"], (line) => {
    if (line.startsWith(`${server.base}/authorize?`)) approving = approve(line);
  });
  await approving;
  return result;
}

const authFile = (w: World): string => join(w.agentDir, "mcp-auth.json");
type Stored = Record<string, { serverUrl?: string; clientInformation?: Record<string, unknown>; tokens?: Record<string, unknown>; tokensExpireAt?: number }>;
const stored = (w: World): Stored => JSON.parse(readFileSync(authFile(w), "utf8")) as Stored;
/** pi 1.6's key: the server's MCP namespace and its URL. */
const KEY = () => `mcp__docs|${server.mcpUrl}`;

/** The shape of a stored state: its keys, and the keys of its client and tokens (values differ). */
function shape(states: Stored): unknown {
  return Object.fromEntries(
    Object.entries(states).map(([key, state]) => [
      key,
      {
        keys: Object.keys(state).sort(),
        client: Object.keys(state.clientInformation ?? {}).sort(),
        tokens: Object.keys(state.tokens ?? {}).sort(),
      },
    ]),
  );
}

/** Output with the program's own name made alike. */
const alike = (text: string): string => text.replace(/(?<![\w./-])(pi|parley)(?= )/g, "<app>");
/** The authorization URL's line differs in its random parts; the rest must match. */
const withoutUrls = (text: string): string => alike(text).replace(/http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+/g, "<authorization url>");

describe("parley mcp login | logout, as pi 1.6's", () => {
  it(
    "signs in the same way, stores the same shape, and each uses the other's tokens",
    async () => {
      const piWorld = world();
      const parleyWorld = world();

      // Not signed in: both report it, and say what to run.
      const [piList, parleyList] = await Promise.all([run("pi", piWorld, ["list"]), run("parley", parleyWorld, ["list"])]);
      expect(parleyList.code).toBe(1);
      expect(parleyList.code).toBe(piList.code);
      expect(parleyList.stdout).toContain("docs: needs sign-in");
      expect(parleyList.stdout).toContain("  sign in with: parley mcp login docs");
      expect(alike(parleyList.stdout)).toBe(alike(piList.stdout));

      // Sign-in through the loopback callback.
      const [piLogin, parleyLogin] = [await login("pi", piWorld), await login("parley", parleyWorld)];
      expect(piLogin.code).toBe(0);
      expect(parleyLogin, parleyLogin.stderr).toMatchObject({ code: 0 });
      expect(parleyLogin.stdout).toContain('Sign in to MCP server "docs" in your browser:');
      expect(parleyLogin.stdout).toContain('Signed in to MCP server "docs" (1 tools).');
      expect(withoutUrls(parleyLogin.stdout)).toBe(withoutUrls(piLogin.stdout));
      expect(alike(parleyLogin.stderr)).toBe(alike(piLogin.stderr));

      // The same file, shape and mode; nothing else left in the agent directory but the lock-free files.
      expect(shape(stored(parleyWorld))).toEqual(shape(stored(piWorld)));
      expect(Object.keys(stored(parleyWorld))).toEqual([KEY()]);
      expect(stored(parleyWorld)[KEY()]?.clientInformation?.["client_name"]).toBe("parley");
      expect(stored(piWorld)[KEY()]?.clientInformation?.["client_name"]).toBe("pi");
      expect(statSync(authFile(parleyWorld)).mode & 0o777).toBe(0o600);

      // Already signed in: both say so.
      const [piAgain, parleyAgain] = await Promise.all([run("pi", piWorld, ["login", "docs"]), run("parley", parleyWorld, ["login", "docs"])]);
      expect(parleyAgain.code).toBe(0);
      expect(alike(parleyAgain.stdout)).toBe(alike(piAgain.stdout));

      // Each uses the tokens the other saved.
      const swapped = readFileSync(authFile(piWorld), "utf8");
      writeFileSync(authFile(piWorld), readFileSync(authFile(parleyWorld), "utf8"));
      writeFileSync(authFile(parleyWorld), swapped);
      const [piUses, parleyUses] = await Promise.all([run("pi", piWorld, ["list"]), run("parley", parleyWorld, ["list"])]);
      expect(piUses.stdout).toContain("docs: connected, 1 tool");
      expect(parleyUses.stdout).toContain("docs: connected, 1 tool");
      expect(parleyUses.code).toBe(0);

      // Logout: the same lines; the entry is gone; a second logout finds nothing.
      for (const round of [1, 2]) {
        const [piOut, parleyOut] = await Promise.all([run("pi", piWorld, ["logout", "docs"]), run("parley", parleyWorld, ["logout", "docs"])]);
        expect(parleyOut.code, `logout ${round}`).toBe(piOut.code);
        expect(alike(parleyOut.stdout)).toBe(alike(piOut.stdout));
        expect(parleyOut.stdout).toContain(round === 1 ? 'Signed out of MCP server "docs".' : 'No stored credentials for MCP server "docs".');
      }
      expect(stored(parleyWorld)).toEqual({});

      // What pi refuses, parley refuses alike.
      for (const args of [["login"], ["login", "doc"], ["logout", "docs", "-l"], ["login", "docs", "--timeout", "0"], ["login", "docs", "--bogus"]]) {
        const [piBad, parleyBad] = await Promise.all([run("pi", piWorld, args), run("parley", parleyWorld, args)]);
        expect({ code: parleyBad.code, stderr: alike(parleyBad.stderr).replaceAll(parleyWorld.base, "<w>") }, args.join(" ")).toEqual({
          code: piBad.code,
          stderr: alike(piBad.stderr).replaceAll(piWorld.base, "<w>"),
        });
      }
    },
    TEST_MS,
  );

  it(
    "refreshes expired tokens and saves them, and a pi and a parley refreshing at once both keep working",
    async () => {
      const shared = world();
      expect((await login("parley", shared)).code).toBe(0);
      const spentBefore = server.spent.length;

      // The server stops accepting the access token: parley refreshes (after the 401) and saves.
      const before = stored(shared)[KEY()]?.tokens?.["refresh_token"];
      const refreshes = server.refreshes;
      server.expireAccessTokens();
      const parleyRefreshes = await run("parley", shared, ["list"]);
      expect(parleyRefreshes.stdout).toContain("docs: connected, 1 tool");
      expect(server.refreshes).toBe(refreshes + 1);
      const after = stored(shared)[KEY()]?.tokens?.["refresh_token"];
      expect(after).not.toBe(before);
      // pi goes on with what parley saved, without a refresh of its own.
      expect((await run("pi", shared, ["list"])).stdout).toContain("docs: connected, 1 tool");
      expect(server.refreshes).toBe(refreshes + 1);

      // The stored expiry has passed (refreshed before the request, not after a 401), for both at once, several rounds.
      for (let round = 0; round < 3; round++) {
        server.expireAccessTokens();
        const states = stored(shared);
        const state = states[KEY()];
        if (state) state.tokensExpireAt = Date.now() - 60_000;
        writeFileSync(authFile(shared), `${JSON.stringify(states, null, 2)}\n`);
        const results = await Promise.all([run("pi", shared, ["list"]), run("parley", shared, ["list"]), run("parley", shared, ["list"])]);
        for (const result of results) expect(result.stdout, result.stderr).toContain("docs: connected, 1 tool");
        expect(server.spent.slice(spentBefore), `round ${round}`).toEqual([]);
        // The file is whole, and its tokens are the newest.
        expect(stored(shared)[KEY()]?.tokensExpireAt).toBeGreaterThan(Date.now());
      }
      expect((await run("pi", shared, ["list"])).code).toBe(0);
      expect((await run("parley", shared, ["list"])).code).toBe(0);
      expect(existsSync(`${authFile(shared)}.lock`)).toBe(false);
    },
    TEST_MS,
  );

  it(
    "a session uses the stored sign-in, refreshes expired tokens mid-session and saves them, and picks up a sign-in done elsewhere",
    async () => {
      // Not signed in: the session says what to run; after `parley mcp login` elsewhere, the next prompt reconnects.
      const w = world("direct");
      const agent = start(w);
      await agent.until(() => notices(agent).some((text) => text.includes('docs: needs sign-in, run "parley mcp login docs"')));
      expect(await status(agent)).toContain('MCP server "docs" requires sign-in. Run "parley mcp login docs" to sign in.');
      expect((await login("parley", w)).code).toBe(0);
      expect(await ask(agent, "call mcp__docs__whoami {}")).toBe("tool said: signed in");

      // The server stops accepting the access token mid-session: the call refreshes, saves, and succeeds.
      const refreshes = server.refreshes;
      const before = stored(w)[KEY()]?.tokens?.["refresh_token"];
      server.expireAccessTokens();
      expect(await ask(agent, "call mcp__docs__whoami {}")).toBe("tool said: signed in");
      expect(server.refreshes).toBe(refreshes + 1);
      expect(stored(w)[KEY()]?.tokens?.["refresh_token"]).not.toBe(before);
      // A pi using the same file goes on with the saved tokens.
      expect((await run("pi", w, ["list"])).stdout).toContain("docs: connected, 1 tool");
      expect(server.refreshes).toBe(refreshes + 1);

      // /mcp logout signs out in the session: the stored entry is gone and the server needs a sign-in.
      const from = agent.records.length;
      await agent.request({ type: "prompt", message: "/mcp logout docs" });
      await agent.until(() => notices(agent, from).length > 0);
      expect(notices(agent, from)[0]).toBe('Signed out of MCP server "docs".');
      expect(stored(w)).toEqual({});
      expect(await status(agent)).toMatch(/^docs: needs sign-in/m);
    },
    TEST_MS,
  );
});

function start(w: World): AgentProcess {
  const agent = spawnAgent(PARLEY_BIN, ["--mode", "rpc", "--no-session", "-e", MODEL, "--model", "mcptest/m1"], { cwd: w.cwd, env: w.env });
  agents.push(agent);
  return agent;
}

/** Sends a prompt, waits for its run to end, and returns the last assistant text of it. */
async function ask(agent: AgentProcess, message: string): Promise<string> {
  const from = agent.records.length;
  const response = await agent.request({ type: "prompt", message });
  expect(response["success"], JSON.stringify(response)).toBe(true);
  await agent.waitFor((r) => r.type === "agent_settled", undefined, from);
  return lastAssistantText(agent, from);
}

/** The /mcp status text. */
async function status(agent: AgentProcess): Promise<string> {
  const from = agent.records.length;
  await agent.request({ type: "prompt", message: "/mcp" });
  // The start-up notice ("MCP servers need attention") may come first.
  const reply = () => notices(agent, from).find((text) => !text.startsWith("MCP servers need attention"));
  await agent.until(() => reply() !== undefined);
  return reply() ?? "";
}
