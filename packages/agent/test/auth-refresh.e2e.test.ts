/**
 * OAuth logins that last, through the spawned CLI and nothing beyond 127.0.0.1: an extension
 * provider's login (fixtures/oauth-provider.ts) against a token server here whose refresh tokens
 * work once. A token that is due is refreshed before the request and saved to auth.json; a pi 1.6
 * and a parley sharing one auth.json and refreshing at the same time both keep working, no spent
 * refresh token is ever sent, and the file stays whole.
 */
import { spawn } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentText, startAcp } from "./helpers/acp-client.js";
import type { Side } from "./helpers/newest-pi.js";
import { type AuthDirs, authDirs, replyTo, startLoggedIn } from "./helpers/oauth-world.js";
import { PARLEY_BIN, ROOT, type AgentProcess, type Rec } from "./helpers/spawn.js";

const FIXTURE = resolve(import.meta.dirname, "fixtures/oauth-provider.ts");
const CLOCK_FIXTURE = resolve(import.meta.dirname, "fixtures/advance-clock.ts");

/** The token server: refresh tokens are single-use; access tokens live `lifetimeMs`. */
class TokenServer {
  server: Server = createServer();
  url = "";
  lifetimeMs = 60 * 60_000;
  refreshes = 0;
  spent: string[] = [];
  #serial = 0;
  #refresh = new Set<string>();
  #access = new Map<string, number>();

  issue(lifetimeMs = this.lifetimeMs): { access: string; refresh: string; expires: number } {
    const n = ++this.#serial;
    const tokens = { access: `access-${n}`, refresh: `refresh-${n}`, expires: Date.now() + lifetimeMs };
    this.#refresh.add(tokens.refresh);
    this.#access.set(tokens.access, tokens.expires);
    return tokens;
  }

  get latestRefresh(): string {
    return `refresh-${this.#serial}`;
  }

  async start(): Promise<void> {
    this.server.on("request", (req, res) => {
      let body = "";
      req.on("data", (d: Buffer) => {
        body += d.toString();
      });
      req.on("end", () => {
        if (req.url === "/token") {
          const { refresh } = JSON.parse(body) as { refresh?: string };
          if (refresh === undefined || !this.#refresh.delete(refresh)) {
            this.spent.push(String(refresh));
            res.writeHead(400).end("invalid_grant");
            return;
          }
          this.refreshes++;
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(this.issue()));
          return;
        }
        const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
        const expires = this.#access.get(token);
        res.writeHead(expires !== undefined && expires > Date.now() ? 200 : 401).end();
      });
    });
    await new Promise<void>((ok) => this.server.listen(0, "127.0.0.1", ok));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
}

const tokenServer = new TokenServer();
beforeAll(() => tokenServer.start());
afterAll(() => new Promise<void>((ok) => tokenServer.server.close(() => ok())));

const agentDirWith = (login: object): AuthDirs => authDirs("parley-auth-", { other: { type: "api_key", key: "kept" }, tokco: { type: "oauth", ...login } });

const startAgent = (side: Side, dirs: AuthDirs, extra: string[] = []): AgentProcess =>
  startLoggedIn(side, dirs, ["-e", FIXTURE, ...extra, "--provider", "tokco", "--model", "m1"], { OAUTH_TEST_SERVER: tokenServer.url });

function stored(authFile: string): Record<string, Record<string, unknown>> {
  return JSON.parse(readFileSync(authFile, "utf8")) as Record<string, Record<string, unknown>>;
}

describe("OAuth tokens in a session", () => {
  it("refreshes an expired token before the request and saves the new tokens to auth.json (other entries and the file's mode kept)", async () => {
    const old = tokenServer.issue(-1);
    const dirs = agentDirWith(old);
    const before = tokenServer.refreshes;
    const parley = startAgent("parley", dirs);
    try {
      const reply = await replyTo(parley, "hello");
      expect(reply).toMatch(/^accepted access-\d+$/);
      expect(tokenServer.refreshes).toBe(before + 1);
      const file = stored(dirs.authFile);
      expect(file["other"]).toEqual({ type: "api_key", key: "kept" });
      expect(file["tokco"]?.["type"]).toBe("oauth");
      expect(file["tokco"]?.["access"]).toBe(reply.replace("accepted ", ""));
      expect(file["tokco"]?.["refresh"]).not.toBe(old.refresh);
      expect(statSync(dirs.authFile).mode & 0o777).toBe(0o600);
      // A second request uses the saved token: no second refresh.
      expect(await replyTo(parley, "again")).toBe(reply);
      expect(tokenServer.refreshes).toBe(before + 1);
    } finally {
      parley.kill();
    }
  });

  it("refreshes a token that becomes due mid-session, without the client noticing", async () => {
    // Valid for half an hour past pi-ai's five-minute window: not due at first, however long the
    // first prompt takes. Then the test moves parley's clock 31 minutes on (fixtures/advance-clock.ts):
    // the token is due at the second prompt, whatever the machine's speed. (The new token lives an
    // hour by the token server's clock, so it is not due in parley's.)
    const first = tokenServer.issue(35 * 60_000);
    const dirs = agentDirWith(first);
    const parley = startAgent("parley", dirs, ["-e", CLOCK_FIXTURE]);
    try {
      expect(await replyTo(parley, "one")).toBe(`accepted ${first.access}`);
      const before = tokenServer.refreshes;
      const advanced = await parley.request({ type: "prompt", message: `/advance-clock ${31 * 60_000}` });
      expect(advanced["success"], JSON.stringify(advanced)).toBe(true);
      expect(tokenServer.refreshes).toBe(before);
      const reply = await replyTo(parley, "two");
      expect(reply).toMatch(/^accepted access-\d+$/);
      expect(reply).not.toBe(`accepted ${first.access}`);
      expect(tokenServer.refreshes).toBe(before + 1);
      expect(stored(dirs.authFile)["tokco"]?.["access"]).toBe(reply.replace("accepted ", ""));
    } finally {
      parley.kill();
    }
  });

  it("a refresh the server refuses fails that request with the reason, leaves auth.json as it was, and parley goes on", async () => {
    const dirs = agentDirWith({ access: "access-gone", refresh: "refresh-never-issued", expires: Date.now() - 1000 });
    const before = readFileSync(dirs.authFile, "utf8");
    const parley = startAgent("parley", dirs);
    try {
      const from = parley.records.length;
      const response = await parley.request({ type: "prompt", message: "hello" });
      expect(response["success"], JSON.stringify(response)).toBe(true);
      const end = await parley.waitFor((r: Rec) => r.type === "agent_end", undefined, from);
      const last = (end["messages"] as { role: string; stopReason?: string; errorMessage?: string }[]).at(-1);
      expect(last?.stopReason).toBe("error");
      expect(last?.errorMessage).toContain("OAuth refresh failed for tokco");
      expect(readFileSync(dirs.authFile, "utf8")).toBe(before);
      expect((await parley.request({ type: "get_state" }))["success"]).toBe(true);
    } finally {
      parley.kill();
    }
  });

  it("a pi 1.6 and a parley sharing one auth.json, refreshing at the same time, both keep working", async () => {
    // Every token the server issues is already inside the refresh window: each request of each
    // agent refreshes, each time against the tokens the other one may just have rotated.
    const saved = tokenServer.lifetimeMs;
    tokenServer.lifetimeMs = 60_000;
    const dirs = agentDirWith(tokenServer.issue(-1));
    const spentBefore = tokenServer.spent.length;
    const pi = startAgent("pi", dirs);
    const parley = startAgent("parley", dirs);
    try {
      for (let round = 0; round < 5; round++) {
        const [fromPi, fromParley] = await Promise.all([replyTo(pi, `round ${round}`), replyTo(parley, `round ${round}`)]);
        expect(fromPi).toMatch(/^accepted /);
        expect(fromParley).toMatch(/^accepted /);
      }
      expect(tokenServer.spent.slice(spentBefore)).toEqual([]);
      const file = stored(dirs.authFile);
      expect(file["other"]).toEqual({ type: "api_key", key: "kept" });
      expect(file["tokco"]?.["refresh"]).toBe(tokenServer.latestRefresh);
    } finally {
      tokenServer.lifetimeMs = saved;
      pi.kill();
      parley.kill();
    }
  });
});

describe("OAuth tokens in ACP mode", () => {
  it("an expired token is refreshed and saved before an ACP session's prompt", async () => {
    const old = tokenServer.issue(-1);
    const dirs = agentDirWith(old);
    const h = await startAcp(["-e", FIXTURE, "--provider", "tokco", "--model", "m1"], {
      cwd: dirs.home,
      home: dirs.home,
      env: { OAUTH_TEST_SERVER: tokenServer.url, PI_OFFLINE: "1" },
    });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: dirs.home, mcpServers: [] });
      const response = await h.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hello" }] });
      expect(response.stopReason).toBe("end_turn");
      const text = agentText(h, sessionId);
      expect(text).toMatch(/^accepted access-\d+$/);
      const file = stored(dirs.authFile);
      expect(file["tokco"]?.["access"]).toBe(text.replace("accepted ", ""));
      expect(file["tokco"]?.["refresh"]).not.toBe(old.refresh);
    } finally {
      await h.close();
    }
  });
});

/** `parley auth print-bearer-token` refreshes through the same store (pi's built-in providers only: no extensions load). */
describe("parley auth with a lock held by pi's library", () => {
  it("waits for proper-lockfile's lock on auth.json, then reads what the holder wrote", async () => {
    const dirs = agentDirWith(tokenServer.issue());
    writeFileSync(dirs.authFile, JSON.stringify({ openai: { type: "api_key", key: "before" } }), { mode: 0o600 });
    // Hold the lock from another process with the very library pi uses, then replace the key.
    const holder = spawn(
      process.execPath,
      [
        "-e",
        `const l=require(${JSON.stringify(join(ROOT, "node_modules/proper-lockfile"))});const fs=require("fs");const f=${JSON.stringify(dirs.authFile)};` +
          `const release=l.lockSync(f);process.stdout.write("locked\\n");setTimeout(()=>{fs.writeFileSync(f,JSON.stringify({openai:{type:"api_key",key:"after"}}));release();},1500);`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    await new Promise<void>((ok) => holder.stdout.once("data", () => ok()));
    const out = await new Promise<string>((ok) => {
      const child = spawn(PARLEY_BIN, ["auth", "check", "--provider", "openai", "--credentials"], {
        env: { ...process.env, HOME: dirs.home, PI_CODING_AGENT_DIR: dirs.agentDir },
        stdio: ["ignore", "pipe", "inherit"],
      });
      let text = "";
      child.stdout.on("data", (d: Buffer) => {
        text += d.toString();
      });
      child.on("close", () => ok(text));
    });
    expect(out).toBe("after\n");
  });
});
