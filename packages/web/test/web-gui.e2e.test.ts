/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The web page as a place to work, in Debian's chromium (playwright-core), by role and accessible
 * name: sessions (list, filter, new, switch with an extension's dialog, rename, fork), model and
 * thinking, the context meter and cost, copy buttons, highlighted code, the edit diff, images,
 * "Jump to newest", Stop, Retry and Edit, `/` and `@` completion, light and dark themes, a 390 px
 * phone with no horizontal scrolling, toasts clear of the connection state, and axe-core finding
 * no serious or critical violation in either theme. Screenshots go to a temp folder (or
 * PARLEY_WEB_SCREENSHOTS: scripts/web-screenshots.mjs).
 */
import { mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../../../scripts/headless-chromium.mjs";
import { DEMO, startWeb, START_MS, type WebAgent } from "./helpers/web-server.js";

const SCREENSHOTS = process.env["PARLEY_WEB_SCREENSHOTS"] ?? mkdtempSync(join(tmpdir(), "parley-web-shots-"));
const GUARD = join(import.meta.dirname, "fixtures/gui-extension.ts");
const TALL = join(import.meta.dirname, "fixtures/tall-ui.ts");
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const WAIT = { timeout: START_MS };
const BIG = 1000;

const CODE_REPLY = ["Here is the code:", "", "```ts", "const answer: number = 42; // the answer", "```", ""].join("\n");
const LONG_REPLY = Array.from({ length: 400 }, (_, i) => `Paragraph ${i} of a long reply.`).join("\n\n");
const UNBROKEN = "x".repeat(3000);

/** A stored session of `count` messages, named, older than anything the test makes. */
function writeBigSession(dir: string, cwd: string, count: number): string {
  const file = join(dir, "2020-01-01T00-00-00-000Z_big.jsonl");
  const start = Date.parse("2020-01-01T00:00:00Z");
  const lines = [JSON.stringify({ type: "session", version: 3, id: "big-session", timestamp: new Date(start).toISOString(), cwd })];
  let parentId: string | null = null;
  for (let i = 0; i < count; i++) {
    const id = `e${i}`;
    const ts = start + i * 1000;
    const message =
      i % 2 === 0
        ? { role: "user", content: [{ type: "text", text: `question ${i}` }], timestamp: ts }
        : {
            role: "assistant",
            content: [{ type: "text", text: `answer ${i} with \`code\` and **bold**` }],
            api: "parley-script",
            provider: "parley",
            model: "script",
            usage: {
              input: 1,
              output: 1,
              cacheRead: 0,
              cacheWrite: 0,
              totalTokens: 2,
              cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.001 },
            },
            stopReason: "stop",
            timestamp: ts,
          };
    lines.push(JSON.stringify({ type: "message", id, parentId, timestamp: new Date(ts).toISOString(), message }));
    parentId = id;
  }
  lines.push(JSON.stringify({ type: "session_info", id: "info", parentId, timestamp: new Date(start + count * 1000).toISOString(), name: "Big session" }));
  writeFileSync(file, `${lines.join("\n")}\n`);
  const old = new Date("2020-01-02T00:00:00Z");
  utimesSync(file, old, old);
  return file;
}

/** A stored session whose first answer has two continuations (as a tree move leaves it). */
function writeBranchedSession(dir: string, cwd: string): void {
  const at = (i: number) => new Date(Date.parse("2021-01-01T00:00:00Z") + i * 1000).toISOString();
  const user = (id: string, parentId: string | null, text: string, i: number) =>
    JSON.stringify({ type: "message", id, parentId, timestamp: at(i), message: { role: "user", content: [{ type: "text", text }], timestamp: i } });
  const assistant = (id: string, parentId: string, text: string, i: number) =>
    JSON.stringify({
      type: "message",
      id,
      parentId,
      timestamp: at(i),
      message: {
        role: "assistant",
        content: [{ type: "text", text }],
        api: "parley-script",
        provider: "parley",
        model: "script",
        usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
        stopReason: "stop",
        timestamp: i,
      },
    });
  const lines = [
    JSON.stringify({ type: "session", version: 3, id: "branched", timestamp: at(0), cwd }),
    user("u1", null, "trunk question", 1),
    assistant("a1", "u1", "trunk answer", 2),
    user("u2", "a1", "first branch question", 3),
    assistant("a2", "u2", "first branch answer", 4),
    user("u3", "a1", "second branch question", 5),
    assistant("a3", "u3", "second branch answer", 6),
    JSON.stringify({ type: "session_info", id: "n1", parentId: "a3", timestamp: at(7), name: "Branched session" }),
  ];
  const file = join(dir, "2021-01-01T00-00-00-000Z_branched.jsonl");
  writeFileSync(file, `${lines.join("\n")}\n`);
  const old = new Date("2021-01-02T00:00:00Z");
  utimesSync(file, old, old);
}

let agent: WebAgent;
let browser: Browser;
const contexts: BrowserContext[] = [];
let page: Page;
const problems: string[] = [];

async function open(options: { width: number; height: number; dark: boolean }): Promise<Page> {
  const context = await browser.newContext({
    viewport: { width: options.width, height: options.height },
    colorScheme: options.dark ? "dark" : "light",
    permissions: ["clipboard-read", "clipboard-write"],
  });
  contexts.push(context);
  const p = await context.newPage();
  p.setDefaultTimeout(START_MS);
  p.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") problems.push(`${m.type()}: ${m.text()}`);
  });
  p.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  await p.goto(agent.url);
  await p.locator(".connection[data-state=open]").waitFor(WAIT);
  return p;
}

const box = (p: Page) => p.getByRole("textbox", { name: "Message" });
async function send(p: Page, text: string): Promise<void> {
  await box(p).fill(text);
  await box(p).press("Enter");
}
const idle = (p: Page) => p.locator(".activity", { hasText: "idle" }).waitFor();
const shot = (p: Page, name: string) => p.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
const nav = (p: Page) => p.getByRole("navigation", { name: "Sessions" });

/** axe-core's serious and critical violations on the page as it is. */
async function axeProblems(p: Page): Promise<string[]> {
  await p.evaluate(AXE);
  const violations = await p.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe;
    return (await axe.run()).violations;
  });
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

/** How far the page can scroll sideways (0: none). */
const sideways = (p: Page) => p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const cwd = mkdtempSync(join(tmpdir(), "parley-gui-cwd-"));
  writeFileSync(join(cwd, "notes.txt"), "hello from the notes\n");
  mkdirSync(join(cwd, "src"));
  writeFileSync(join(cwd, "src", "app.ts"), "export {};\n");
  const sessionDir = mkdtempSync(join(tmpdir(), "parley-gui-sessions-"));
  writeBigSession(sessionDir, cwd, BIG);
  writeBranchedSession(sessionDir, cwd);
  const script = join(cwd, "..", `${cwd.split("/").pop()}-script.json`);
  writeFileSync(
    script,
    JSON.stringify([
      { text: CODE_REPLY, toolCalls: [{ name: "edit", arguments: { path: "notes.txt", edits: [{ oldText: "hello", newText: "goodbye" }] } }] },
      "Edited the notes.",
      "The retried answer.",
      "The edited answer.",
      LONG_REPLY,
      "An image, seen.",
      `Unbroken: ${UNBROKEN} https://example.com/${"a".repeat(400)}`,
    ]),
  );
  const agentDir = mkdtempSync(join(tmpdir(), "parley-gui-agentdir-"));
  writeFileSync(
    join(agentDir, "models.json"),
    JSON.stringify({
      providers: {
        lab: { baseUrl: "http://127.0.0.1:9/v1", api: "openai-completions", apiKey: "k", models: [{ id: "thinker", name: "Lab Thinker", reasoning: true }] },
      },
    }),
  );
  agent = await startWeb(["-e", DEMO, "-e", GUARD, "-e", TALL, "--model-script", script, "--session-dir", sessionDir], {
    cwd,
    sessions: true,
    env: { PARLEY_STREAM_DELAY_MS: "3", PI_CODING_AGENT_DIR: agentDir },
  });
  browser = await launchChromium(chromium);
  page = await open({ width: 1280, height: 800, dark: false });
}, 2 * START_MS);

afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await agent?.stop();
});

describe("the web page as a place to work", { timeout: 3 * START_MS }, () => {
  it("has a main landmark, a Sessions navigation listing the folder's sessions, and no serious axe violation (light)", async () => {
    await page.getByRole("main").waitFor();
    await nav(page)
      .getByRole("button", { name: /Big session/ })
      .waitFor();
    await nav(page).getByRole("button", { name: "New session" }).waitFor();
    await box(page).waitFor();
    expect(await page.getByRole("combobox", { name: "Model" }).inputValue()).toBe("parley/script");
    await page.getByRole("meter", { name: "Context" }).waitFor({ state: "attached" });
    expect(await axeProblems(page)).toEqual([]);
    await shot(page, "gui-01-start-light");
  });

  it("shows a reply with highlighted code, Copy buttons that copy, and the edit tool's diff", async () => {
    await send(page, "show me code");
    await page.locator(".message-assistant", { hasText: "Edited the notes." }).waitFor();
    await idle(page);
    // The session just written is listed, as the current one.
    await nav(page).locator("[aria-current=true]", { hasText: "show me code" }).waitFor();
    const code = page.locator(".code-block code").first();
    expect(await code.textContent()).toBe("const answer: number = 42; // the answer");
    expect(await code.locator(".hljs-keyword").count()).toBeGreaterThan(0);
    expect(await code.locator(".hljs-comment").count()).toBe(1);
    await page.locator(".code-block").first().getByRole("button", { name: "Copy" }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe("const answer: number = 42; // the answer");
    const user = page.getByRole("article", { name: "You" }).last();
    await user.getByRole("button", { name: "Copy" }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe("show me code");
    // Every message has its Copy button.
    for (const article of await page.getByRole("article").all()) {
      const name = await article.getAttribute("aria-label");
      if (name === "You" || name === "Assistant") expect(await article.getByRole("button", { name: "Copy" }).count()).toBeGreaterThan(0);
    }
    // The system prompt the run recorded (as pi 1.6 records it) is not a message of the conversation.
    expect(await page.getByRole("article", { name: "system" }).count()).toBe(0);
    const diff = page.locator(".tool .diff");
    await diff.locator(".diff-del", { hasText: "- hello" }).waitFor();
    await diff.locator(".diff-add", { hasText: "+ goodbye" }).waitFor();
    // Tool calls collapse.
    const tool = page.locator("details.tool").first();
    await tool.locator("summary").click();
    expect(await tool.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
    await tool.locator("summary").click();
    await shot(page, "gui-02-code-and-diff");
  });

  it("chooses the model and thinking level from comboboxes, and shows the context meter and cost", async () => {
    const model = page.getByRole("combobox", { name: "Model" });
    await model.selectOption("lab/thinker");
    const thinking = page.getByRole("combobox", { name: "Thinking" });
    await expect.poll(async () => (await thinking.locator("option").allTextContents()).includes("high")).toBe(true);
    await thinking.selectOption("high");
    await expect.poll(() => thinking.inputValue()).toBe("high");
    expect(await model.inputValue()).toBe("lab/thinker");
    await model.selectOption("parley/script");
    await expect.poll(() => thinking.isDisabled()).toBe(true);
    await expect.poll(() => page.locator(".cost").textContent()).toMatch(/^\$\d/);
    expect(await page.getByRole("meter", { name: "Context" }).getAttribute("aria-valuetext")).toBeTruthy();
  });

  it("retries the last reply and edits the last message through forks", async () => {
    const retry = page.getByRole("article", { name: "Assistant" }).last().getByRole("button", { name: "Retry" });
    await retry.click();
    await page.locator(".message-assistant", { hasText: "The retried answer." }).waitFor();
    await idle(page);
    expect(await page.locator(".message-user").count()).toBe(1);
    expect(await page.locator(".message-assistant", { hasText: "Edited the notes." }).count()).toBe(0);
    await page.getByRole("article", { name: "You" }).last().getByRole("button", { name: "Edit" }).click();
    await expect.poll(() => box(page).inputValue()).toBe("show me code");
    await send(page, "show me code, edited");
    await page.locator(".message-assistant", { hasText: "The edited answer." }).waitFor();
    await idle(page);
    expect(await page.locator(".message-user").allTextContents()).toEqual([expect.stringContaining("show me code, edited")]);
  });

  it("does not pull the reader down while a reply streams; Jump to newest does; Stop ends the run", async () => {
    await send(page, "a long one");
    await page.locator(".message-assistant", { hasText: "Paragraph 40 " }).waitFor();
    const scroller = page.getByRole("log", { name: "Conversation" });
    await scroller.evaluate((el) => el.scrollTo({ top: 0 }));
    const jump = page.getByRole("button", { name: "Jump to newest" });
    await jump.waitFor();
    await page.locator(".message-assistant", { hasText: "Paragraph 120 " }).waitFor();
    expect(await scroller.evaluate((el) => el.scrollTop)).toBe(0);
    await jump.click();
    await jump.waitFor({ state: "hidden" });
    await page.getByRole("button", { name: "Stop" }).click();
    await page.locator(".error-line", { hasText: "Aborted" }).waitFor();
    await idle(page);
    await expect.poll(() => scroller.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight)).toBeLessThan(80);
  });

  it("completes /commands and @files in listboxes, and sends a pasted image", async () => {
    await box(page).fill("");
    await box(page).pressSequentially("/demo-m");
    const commands = page.getByRole("listbox", { name: "Commands" });
    await commands.getByRole("option", { name: /\/demo-many/ }).waitFor();
    await box(page).press("Enter");
    expect(await box(page).inputValue()).toBe("/demo-many ");
    await commands.waitFor({ state: "hidden" });
    await box(page).fill("");
    await box(page).pressSequentially("read @note");
    const files = page.getByRole("listbox", { name: "Files" });
    await files.getByRole("option", { name: "notes.txt" }).waitFor();
    await box(page).press("Tab");
    expect(await box(page).inputValue()).toBe("read @notes.txt ");
    await box(page).fill("");
    // A 1×1 PNG, pasted.
    await box(page).evaluate((el) => {
      const bytes = Uint8Array.from(atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="), (c) =>
        c.charCodeAt(0),
      );
      const data = new DataTransfer();
      data.items.add(new File([bytes], "dot.png", { type: "image/png" }));
      el.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
    });
    await page.getByRole("img", { name: "Image 1 to send" }).waitFor();
    await send(page, "what is this image?");
    await page.locator(".message-assistant", { hasText: "An image, seen." }).waitFor();
    await page.getByRole("article", { name: "You" }).last().getByRole("img", { name: "Attached image" }).waitFor();
    expect(await page.getByRole("img", { name: "Image 1 to send" }).count()).toBe(0);
    await idle(page);
  });

  it("switches sessions (an extension's session_before_switch dialog inline), opens a 1,000-message session fast, filters, renames and forks", async () => {
    await send(page, "/guard");
    await page.locator(".toast", { hasText: "guard on" }).waitFor();
    await nav(page)
      .getByRole("button", { name: /Big session/ })
      .click();
    const ask = page.getByRole("dialog", { name: "Leave this session?" });
    await ask.getByRole("button", { name: "No" }).click();
    await ask.waitFor({ state: "detached" });
    expect(await page.locator(".message-user", { hasText: "what is this image?" }).count()).toBe(1);

    const started = Date.now();
    await nav(page)
      .getByRole("button", { name: /Big session/ })
      .click();
    await page.locator(".message-assistant", { hasText: `answer ${BIG - 1} ` }).waitFor();
    const openMs = Date.now() - started;
    // The newest part shows at once; the rest on request, the reader's place kept.
    expect(await page.locator(".message").count()).toBeLessThan(BIG);
    const earlier = page.getByRole("button", { name: /Show earlier messages/ });
    while (await earlier.count()) await earlier.click();
    expect(await page.locator(".message").count()).toBe(BIG);
    await page.locator(".message-user", { hasText: "question 0" }).waitFor();
    expect(await nav(page).locator("[aria-current=true]").textContent()).toContain("Big session");
    const back = Date.now();
    await nav(page)
      .getByRole("button", { name: /show me code, edited/ })
      .click();
    await page.locator(".message-user", { hasText: "what is this image?" }).waitFor();
    const switchMs = Date.now() - back;
    console.log(`web GUI: opened a ${BIG}-message session in ${openMs} ms (click to last message shown), switched away in ${switchMs} ms`);

    // Newest first; the filter narrows the list.
    const times = await nav(page)
      .locator("time")
      .evaluateAll((els) => els.map((el) => Date.parse(el.getAttribute("datetime") ?? "")));
    expect(times).toEqual([...times].sort((x, y) => y - x));
    await nav(page).getByRole("searchbox", { name: "Filter sessions" }).fill("big");
    await expect.poll(() => nav(page).locator(".session").count()).toBe(1);
    await nav(page).getByRole("searchbox", { name: "Filter sessions" }).fill("");

    await nav(page).getByRole("textbox", { name: "Session name" }).fill("Work in progress");
    await nav(page).getByRole("button", { name: "Rename" }).click();
    await nav(page)
      .getByRole("button", { name: /Work in progress/ })
      .waitFor();

    const before = await nav(page).locator(".session").count();
    await page.getByRole("article", { name: "You" }).first().getByRole("button", { name: "Fork from here" }).click();
    await expect.poll(() => box(page).inputValue()).toContain("show me code, edited");
    expect(await page.locator(".message-user").count()).toBe(0);
    await box(page).fill("");
    await nav(page).getByRole("button", { name: "New session" }).click();
    await expect.poll(() => page.locator(".message").count()).toBe(0);
    expect(await nav(page).locator(".session").count()).toBeGreaterThanOrEqual(before);
  });

  it("reaches the tree of a session with branches, and forks from a message on another branch", async () => {
    const tree = nav(page).locator("details.session-tree");
    expect(await tree.isVisible()).toBe(false);
    await nav(page)
      .getByRole("button", { name: /Branched session/ })
      .click();
    await page.locator(".message-assistant", { hasText: "second branch answer" }).waitFor();
    await tree.locator("summary", { hasText: "Session tree" }).click();
    await tree.getByText("You: first branch question").waitFor();
    expect(await tree.locator("[aria-current=true]").allTextContents()).toEqual([
      expect.stringContaining("trunk question"),
      expect.stringContaining("trunk answer"),
      expect.stringContaining("second branch question"),
      expect.stringContaining("second branch answer"),
    ]);
    await tree.locator("li", { hasText: "You: first branch question" }).getByRole("button", { name: "Fork from here" }).click();
    await expect.poll(() => box(page).inputValue()).toBe("first branch question");
    await page.locator(".message-assistant", { hasText: "trunk answer" }).waitFor();
    expect(await page.locator(".message-assistant", { hasText: "second branch answer" }).count()).toBe(0);
    await tree.waitFor({ state: "hidden" });
    await box(page).fill("");
  });

  it("follows the system theme, toggles it, and has no serious axe violation in dark", async () => {
    const dark = await open({ width: 1280, height: 800, dark: true });
    expect(await dark.evaluate(() => document.documentElement.dataset["theme"])).toBe("dark");
    expect(await page.evaluate(() => document.documentElement.dataset["theme"])).toBe("light");
    await nav(dark)
      .getByRole("button", { name: /Work in progress/ })
      .click();
    await dark.locator(".message-assistant").first().waitFor();
    expect(await axeProblems(dark)).toEqual([]);
    await shot(dark, "gui-03-dark");
    const toggle = dark.getByRole("button", { name: "Dark theme" });
    expect(await toggle.getAttribute("aria-pressed")).toBe("true");
    await toggle.click();
    expect(await dark.evaluate(() => document.documentElement.dataset["theme"])).toBe("light");
    await dark.reload();
    expect(await dark.evaluate(() => document.documentElement.dataset["theme"])).toBe("light");
    await dark.getByRole("button", { name: "Dark theme" }).click();
    expect(await dark.evaluate(() => document.documentElement.dataset["theme"])).toBe("dark");
  });

  it("fits a 390 px phone in both themes: no sideways scrolling whatever the content, sessions a tap away, toasts clear of the connection state", async () => {
    for (const darkTheme of [false, true]) {
      const phone = await open({ width: 390, height: 844, dark: darkTheme });
      await send(phone, `/demo-title ${UNBROKEN.slice(0, 400)}`);
      await send(phone, "/demo-notify");
      const marker = `unbroken-${darkTheme ? "dark" : "light"}`;
      await send(phone, `${marker} ${UNBROKEN}\n\n\`\`\`\n${UNBROKEN}\n\`\`\`\n\nhttps://example.com/${"a".repeat(400)} \`${UNBROKEN}\``);
      await phone.locator(".message-user", { hasText: marker }).waitFor();
      await idle(phone);
      await send(phone, `/long ${UNBROKEN}`);
      await phone.getByRole("dialog", { name: UNBROKEN.slice(0, 40) }).waitFor();
      await phone.locator(".statusbar .status", { hasText: "xxxxxxxx" }).waitFor();
      await shot(phone, `gui-04-phone-${darkTheme ? "dark" : "light"}`);
      expect(await sideways(phone)).toBe(0);
      const connection = await phone.locator(".connection").boundingBox();
      for (const toast of await phone.locator(".toast").all()) {
        const b = await toast.boundingBox();
        if (!b || !connection) continue;
        const overlaps =
          b.x < connection.x + connection.width && connection.x < b.x + b.width && b.y < connection.y + connection.height && connection.y < b.y + b.height;
        expect(overlaps).toBe(false);
      }
      expect(await axeProblems(phone)).toEqual([]);
      await phone.getByRole("button", { name: "Sessions" }).click();
      await nav(phone).getByRole("button", { name: "New session" }).waitFor();
      expect(await sideways(phone)).toBe(0);
      await phone.getByRole("button", { name: "Sessions" }).click();
      await nav(phone).waitFor({ state: "hidden" });
      await phone
        .getByRole("dialog", { name: UNBROKEN.slice(0, 40) })
        .getByRole("button", { name: "short" })
        .click();
      await phone.getByRole("dialog").waitFor({ state: "detached" });
    }
  });

  it("collapses dialog outcome notes to one line", async () => {
    await send(page, "/demo-many");
    for (const title of ["Pick a colour", "Proceed?", "Your name?", "Edit the note"]) await page.getByRole("dialog", { name: title }).press("Escape");
    await page.locator(".toast", { hasText: "many: select=cancelled" }).waitFor();
    expect(await page.locator(".dialog-note:visible").count()).toBeLessThanOrEqual(1);
  });

  it("logged no console error or warning and no uncaught error", () => {
    expect(problems).toEqual([]);
  });
});
