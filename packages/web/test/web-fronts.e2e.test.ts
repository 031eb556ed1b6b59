/// <reference lib="dom" />
/**
 * Web mode's front door under stress, through the spawned CLI: a stalled tab cut without holding
 * the others up, a tab that opens mid-reply shown the reply from its beginning, the flags that
 * expose it (a short token, a non-loopback host), and a page whose parley restarted with a new
 * token (Chromium).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { connect as connectTcp, type Socket } from "node:net";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { launchChromium } from "../../../scripts/headless-chromium.mjs";
import { urlHost } from "../../agent/src/modes/web/http-server.js";
import { connectRaw, PARLEY_BIN, startWeb, START_MS, type RawClient, type Rec, type WebAgent } from "./helpers/web-server.js";

const FLOOD = join(import.meta.dirname, "fixtures/flood.ts");

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function web(args: string[], options: Parameters<typeof startWeb>[1] = {}): Promise<WebAgent> {
  const agent = await startWeb(args, options);
  cleanups.push(() => agent.stop());
  return agent;
}

async function raw(agent: WebAgent): Promise<RawClient> {
  const client = await connectRaw(agent.wsUrl);
  cleanups.push(async () => {
    await client.close();
    expect(client.invalid).toEqual([]);
  });
  return client;
}

/** A WebSocket client that completes the handshake and then never reads a byte. */
async function stalledClient(agent: WebAgent): Promise<Socket> {
  const url = new URL(agent.url);
  const socket = connectTcp(Number(url.port), url.hostname);
  cleanups.push(() => void socket.destroy());
  await once(socket, "connect");
  socket.write(
    [
      `GET /ws?token=${encodeURIComponent(agent.token)} HTTP/1.1`,
      `Host: ${url.host}`,
      "Upgrade: websocket",
      "Connection: Upgrade",
      `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}`,
      "Sec-WebSocket-Version: 13",
      "",
      "",
    ].join("\r\n"),
  );
  const [head] = (await once(socket, "data")) as [Buffer];
  expect(head.toString("latin1")).toMatch(/^HTTP\/1\.1 101/);
  socket.pause();
  return socket;
}

/** The text of an assistant message as a page rebuilds it: message_start's content, then the text deltas. */
function rebuiltText(records: Rec[]): string {
  let text = "";
  for (const record of records) {
    if (record.type === "message_start") {
      const message = record["message"] as { role: string; content: { type: string; text?: string }[] };
      if (message.role === "assistant") text = message.content.map((c) => (c.type === "text" ? (c.text ?? "") : "")).join("");
    } else if (record.type === "message_update") {
      const delta = record["assistantMessageEvent"] as { type: string; delta?: string };
      if (delta.type === "text_delta") text += delta.delta ?? "";
    }
  }
  return text;
}

describe("web mode's front door", { timeout: 4 * START_MS }, () => {
  it("cutting a tab that stopped reading does not hold up another tab: every record reaches it in order, without a long pause", async () => {
    const agent = await web(["-e", FLOOD]);
    const stalled = await stalledClient(agent);
    const healthy = await raw(agent);
    const arrivals: number[] = [];
    // Checked per message as it comes (a scan of all records each time would be quadratic).
    const done = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the flood did not end; stderr:\n${agent.stderr()}`)), 3 * START_MS);
      healthy.socket.on("message", (data) => {
        arrivals.push(performance.now());
        if (String(data).includes('"flood done"')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    // ~90 MB of 1 KB records: the stalled tab passes the 64 MiB it may hold and is cut.
    const COUNT = 80_000;
    const from = healthy.records.length;
    healthy.send({ type: "prompt", message: `/flood ${COUNT}` });
    await done;
    expect(agent.stderr()).toContain("a connection stopped reading");
    const seen = healthy.records
      .slice(from)
      .flatMap((r) => (r["method"] === "notify" && typeof r["message"] === "string" && r["message"].startsWith("flood ") ? [r["message"].split(" ")[1]] : []));
    expect(seen.length).toBe(COUNT + 1);
    expect(seen.slice(0, COUNT).every((n, i) => n === String(i))).toBe(true);
    // No long pause while the stalled tab is cut (the hub hands a socket at most 256 KiB, so the
    // cut fails few pending writes; connection-hub.test.ts checks that bound exactly). The
    // ceiling is generous: a loaded 2-core machine shows pauses of a few hundred ms (GC).
    let longest = 0;
    for (let i = 1; i < arrivals.length; i++) longest = Math.max(longest, (arrivals[i] ?? 0) - (arrivals[i - 1] ?? 0));
    expect(longest).toBeLessThan(1000);
    stalled.destroy();
  });

  it("a tab that connects mid-reply gets the reply from its beginning after its get_messages, then the rest live", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "parley-web-mid-"));
    const words = Array.from({ length: 400 }, (_, i) => `w${i}`).join(" ");
    const script = join(cwd, "script.json");
    writeFileSync(script, JSON.stringify([words, `second ${words}`]));
    const agent = await web(["--model-script", script], { cwd, env: { PARLEY_STREAM_DELAY_MS: "10" } });
    const first = await raw(agent);
    for (const [done, reply] of [words, `second ${words}`].entries()) {
      const start = first.records.length;
      first.send({ type: "prompt", message: "go" });
      // Part of the reply has gone out before the second tab connects.
      await first.waitFor(() => first.records.slice(start).filter((r) => r.type === "message_update").length >= 30, start);
      const late = await raw(agent);
      const messages = await late.request({ type: "get_messages" });
      const finished = (messages["data"] as { messages: { role: string }[] }).messages.filter((m) => m.role === "assistant");
      const end = await late.waitFor((r) => r.type === "message_end" && (r["message"] as { role: string }).role === "assistant");
      const after = late.records.slice(late.records.indexOf(messages) + 1, late.records.indexOf(end) + 1);
      // Not in get_messages (it is not finished), so the replay after the response is the only way to see its beginning.
      expect(finished).toHaveLength(done);
      expect(after[0]?.type).toBe("message_start");
      expect(rebuiltText(after)).toBe(reply);
      await first.waitFor((r) => r.type === "agent_settled", start);
      await late.close();
    }
  });

  it("a page opened or reloaded mid-reply shows the reply from its beginning while it streams (Chromium)", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "parley-web-page-mid-"));
    // Long enough (3000 words, 10 ms a delta) that it still streams while pages open and reload.
    const words = Array.from({ length: 3000 }, (_, i) => `w${i}`);
    const script = join(cwd, "script.json");
    writeFileSync(script, JSON.stringify([words.join(" ")]));
    const agent = await web(["--model-script", script], { cwd, env: { PARLEY_STREAM_DELAY_MS: "10" } });
    const browser = await launchChromium(chromium);
    cleanups.push(() => browser.close());
    const open = async () => {
      const page = await browser.newPage();
      page.setDefaultTimeout(START_MS);
      await page.goto(agent.url);
      await page.locator(".connection[data-state=open]").waitFor();
      return page;
    };
    const a = await open();
    const box = a.getByRole("textbox", { name: "Message" });
    await box.fill("go");
    await box.press("Enter");
    await a.locator(".transcript", { hasText: "w40 " }).waitFor();
    const b = await open();
    const last = words.at(-1) ?? "";
    /** The page shows the reply's first words while its last one has not come yet. */
    const showsBeginningMidReply = async (page: typeof a): Promise<void> => {
      await page.locator(".transcript", { hasText: "w0 w1 w2" }).waitFor();
      expect(await page.locator(".transcript").textContent()).not.toContain(last);
    };
    await showsBeginningMidReply(b);
    await b.reload();
    await b.locator(".connection[data-state=open]").waitFor();
    await showsBeginningMidReply(b);
    // And it ends whole, as in the first page.
    await b.locator(".transcript", { hasText: last }).waitFor();
    await a.locator(".transcript", { hasText: last }).waitFor();
  });

  it("a --web-token shorter than 16 characters is refused with a clear error; 16 are taken", async () => {
    const run = (token: string): Promise<{ code: number | null; stderr: string }> =>
      new Promise((resolve) => {
        const home = mkdtempSync(join(tmpdir(), "parley-web-token-"));
        const child = spawn(PARLEY_BIN, ["--mode", "web", "--web-port", "0", "--no-session", "--web-token", token], {
          cwd: home,
          env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent") },
        });
        let stderr = "";
        child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
        child.stdout.once("data", () => child.kill("SIGTERM"));
        child.on("exit", (code) => resolve({ code, stderr }));
      });
    for (const token of ["x", "fifteen-chars-x"]) {
      const { code, stderr } = await run(token);
      expect(code, stderr).not.toBe(0);
      expect(stderr).toContain(`--web-token is ${token.length} character`);
      expect(stderr).toContain("at least 16");
    }
    const accepted = await web(["--web-token", "sixteen-chars-xx"]);
    expect(accepted.token).toBe("sixteen-chars-xx");
  });

  it("a non-loopback --web-host is warned of on stderr before listening; a wildcard host prints an address of this machine", async () => {
    // 192.0.2.1 (TEST-NET-1) is nobody's address: listening fails, after the warning.
    const home = mkdtempSync(join(tmpdir(), "parley-web-host-"));
    const child = spawn(PARLEY_BIN, ["--mode", "web", "--web-port", "0", "--no-session", "--web-host", "192.0.2.1"], {
      cwd: home,
      env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent") },
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const [code] = (await once(child, "exit")) as [number | null];
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/warning: --web-host 192\.0\.2\.1 is not a loopback address/);
    // Which address a wildcard prints (listening there is not for a test).
    const interfaces = {
      lo: [{ address: "127.0.0.1", netmask: "255.0.0.0", family: "IPv4", mac: "00:00:00:00:00:00", internal: true, cidr: "127.0.0.1/8" }],
      eth0: [
        { address: "fe80::1", netmask: "ffff:ffff:ffff:ffff::", family: "IPv6", mac: "02:00:00:00:00:01", internal: false, cidr: "fe80::1/64", scopeid: 2 },
        { address: "192.168.7.20", netmask: "255.255.255.0", family: "IPv4", mac: "02:00:00:00:00:01", internal: false, cidr: "192.168.7.20/24" },
        {
          address: "2001:db8::20",
          netmask: "ffff:ffff:ffff:ffff::",
          family: "IPv6",
          mac: "02:00:00:00:00:01",
          internal: false,
          cidr: "2001:db8::20/64",
          scopeid: 0,
        },
      ],
    } as const;
    const copy = JSON.parse(JSON.stringify(interfaces)) as NonNullable<Parameters<typeof urlHost>[1]>;
    expect(urlHost("0.0.0.0", copy)).toBe("192.168.7.20");
    expect(urlHost("::", copy)).toBe("2001:db8::20");
    expect(urlHost("0.0.0.0", { lo: copy["lo"] ?? [] })).toBe("127.0.0.1");
    expect(urlHost("10.1.2.3", copy)).toBe("10.1.2.3");
  });

  it("a page whose parley restarted with a new token says so and what to do, instead of reconnecting forever", async () => {
    const first = await startWeb([]);
    let browser: Browser | undefined;
    cleanups.push(async () => {
      await browser?.close();
      await first.stop();
    });
    browser = await launchChromium(chromium);
    const page = await browser.newPage();
    page.setDefaultTimeout(START_MS);
    await page.goto(first.url);
    await page.locator(".connection[data-state=open]").waitFor();
    const port = new URL(first.url).port;
    await first.stop();
    // The same port, a new random token.
    await web(["--web-port", port]);
    const status = page.locator(".connection[data-state=refused]");
    await status.waitFor();
    expect(await status.textContent()).toContain("new token");
    await page.locator(".toast", { hasText: "Open the URL it printed" }).waitFor();
  });
});
