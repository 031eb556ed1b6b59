/**
 * An OAuth login's whole resolved auth, through the spawned CLI and nothing beyond 127.0.0.1: a
 * provider object (fixtures/agent/oauth-base-url.js) whose login's `toAuth` names a base URL and a
 * header of its own. As pi 1.6 does, the request goes to that base URL (not the model's), with the
 * login's key and header; a login that is due is refreshed and saved first, and the refreshed
 * login's resolved auth is the one sent. pi 1.6 runs the same steps against the same server.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Side } from "./helpers/newest-pi.js";
import { type AuthDirs, authDirs, replyTo, startLoggedIn } from "./helpers/oauth-world.js";
import type { AgentProcess, Rec } from "./helpers/spawn.js";

const FIXTURE = resolve(import.meta.dirname, "fixtures/agent/oauth-base-url.js");
const REGISTRY_CALL = resolve(import.meta.dirname, "fixtures/agent/oauth-registry-call.js");

const requests: { url: string | undefined; headers: IncomingHttpHeaders }[] = [];
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    requests.push({ url: req.url, headers: req.headers });
    res.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (delta: object, finish: string | null) =>
      `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: "ent-1", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    res.end(`${chunk({ role: "assistant", content: "via the login's host" }, null)}${chunk({}, "stop")}data: [DONE]\n\n`);
  });
});
let loginBase = "";
beforeAll(async () => {
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  loginBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}/enterprise/v1`;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

const agentDirWith = (login: object): AuthDirs => authDirs("parley-oauth-auth-", { entco: { type: "oauth", ...login } });

const startAgent = (side: Side, dirs: AuthDirs, extra: string[] = []): AgentProcess =>
  startLoggedIn(side, dirs, ["-e", FIXTURE, ...extra, "--provider", "entco", "--model", "ent-1"]);

describe("an OAuth login's resolved auth in requests", () => {
  for (const bin of ["parley", "pi"] as const) {
    it(`${bin}: sends the request to the login's base URL with its key and headers`, async () => {
      const dirs = agentDirWith({ access: "tok-1", refresh: "r-1", expires: Date.now() + 3_600_000, baseUrl: loginBase });
      const agent = startAgent(bin, dirs);
      try {
        const from = requests.length;
        expect(await replyTo(agent, "hello")).toBe("via the login's host");
        const sent = requests.slice(from);
        expect(sent).toHaveLength(1);
        expect(sent[0]?.url).toBe("/enterprise/v1/chat/completions");
        expect(sent[0]?.headers.authorization).toBe("Bearer tok-1");
        expect(sent[0]?.headers["x-login-host"]).toBe("enterprise");
      } finally {
        agent.kill();
      }
    });

    it(`${bin}: a login that is due is refreshed and saved first, and the refreshed login's auth is sent`, async () => {
      const dirs = agentDirWith({ access: "tok-2", refresh: "r-2", expires: Date.now() - 1, baseUrl: loginBase });
      const agent = startAgent(bin, dirs);
      try {
        const from = requests.length;
        expect(await replyTo(agent, "hello")).toBe("via the login's host");
        const sent = requests.slice(from);
        expect(sent.map((r) => [r.url, r.headers.authorization])).toEqual([["/enterprise/v1/chat/completions", "Bearer tok-2-refreshed"]]);
        const saved = JSON.parse(readFileSync(dirs.authFile, "utf8")) as Record<string, Record<string, unknown>>;
        expect(saved["entco"]).toMatchObject({ type: "oauth", access: "tok-2-refreshed", baseUrl: loginBase });
      } finally {
        agent.kill();
      }
    });
  }
});

describe("an OAuth login's resolved auth beside the prompt", () => {
  /** Where each request since `from` went, with what key and login header. */
  const seenSince = (from: number) => requests.slice(from).map((r) => [r.url, r.headers.authorization, r.headers["x-login-host"]]);
  const viaLogin = ["/enterprise/v1/chat/completions", "Bearer tok-3", "enterprise"];

  it("compaction summaries and ctx.modelRegistry's requests go to the login's base URL with its key and headers, in parley as in pi 1.6", async () => {
    const seen: Record<string, unknown> = {};
    for (const bin of ["pi", "parley"] as const) {
      const dirs = agentDirWith({ access: "tok-3", refresh: "r-3", expires: Date.now() + 3_600_000, baseUrl: loginBase });
      // A budget of one token: the two exchanges below are enough to compact.
      writeFileSync(join(dirs.agentDir, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 1 } }));
      const agent = startAgent(bin, dirs, ["-e", REGISTRY_CALL]);
      try {
        await replyTo(agent, "one");
        await replyTo(agent, "two");
        const beforeCompact = requests.length;
        const compacted = await agent.request({ type: "compact" });
        expect(compacted["success"], JSON.stringify(compacted)).toBe(true);
        const summary = (compacted["data"] as Record<string, unknown>)["summary"];
        const compaction = seenSince(beforeCompact);

        const beforeCall = requests.length;
        const from = agent.records.length;
        await agent.request({ type: "prompt", message: "/registry-call" });
        const note = await agent.waitFor((r: Rec) => r.type === "extension_ui_request" && r["method"] === "notify", undefined, from);
        seen[bin] = { summary, compaction, registry: { call: JSON.parse(String(note["message"])), sent: seenSince(beforeCall) } };
      } finally {
        agent.kill();
      }
    }
    expect(seen["parley"]).toEqual(seen["pi"]);
    expect(seen["parley"]).toEqual({
      // The cut splits the last turn: the history and the turn's beginning are summarised apart.
      summary: expect.stringContaining("via the login's host"),
      compaction: [viaLogin, viaLogin],
      registry: {
        call: {
          auth: { ok: true, apiKey: "tok-3", loginHeader: "enterprise", baseUrl: loginBase },
          reply: { stopReason: "stop", text: "via the login's host" },
        },
        sent: [viaLogin],
      },
    });
  });
});
