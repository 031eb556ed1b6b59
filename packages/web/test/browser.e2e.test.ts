/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The web UI in a real browser: Debian's chromium driven by playwright-core, two browser contexts
 * (two "tabs" with separate storage) on one `parley --mode web` with the demo extension and a
 * scripted model. Screenshots of the main states go to a temp folder (or PARLEY_WEB_SCREENSHOTS).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { launchChromium } from "../../../scripts/headless-chromium.mjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO, startWeb, START_MS, type WebAgent } from "./helpers/web-server.js";

/** A temp folder unless PARLEY_WEB_SCREENSHOTS names one (scripts/web-screenshots.mjs: the committed ones, on purpose). */
const SCREENSHOTS = process.env["PARLEY_WEB_SCREENSHOTS"] ?? mkdtempSync(join(tmpdir(), "parley-web-shots-"));
const XSS_EXTENSION = join(import.meta.dirname, "fixtures/xss-extension.ts");
const TALL_EXTENSION = join(import.meta.dirname, "fixtures/tall-ui.ts");
const WAIT = { timeout: START_MS };

/** Each would set window.__xss if it ever ran, or leave an element behind if it were parsed. */
const PAYLOADS = [
  `<img src=x onerror="window.__xss=1">`,
  `<script>window.__xss=1</script>`,
  `<svg onload="window.__xss=1"><circle r=1></svg>`,
  `"><img src=x onerror=window.__xss=1>`,
  `'><iframe srcdoc="<script>parent.__xss=1</script>"></iframe>`,
  `<a href="javascript:window.__xss=1">click me</a>`,
  `[md link](javascript:window.__xss=1)`,
  `![md image](x" onerror="window.__xss=1)`,
  `<details open ontoggle="window.__xss=1">x</details>`,
  `<style>body{display:none}</style>`,
  `&lt;img src=x onerror=window.__xss=1&gt;`,
  `javascript:window.__xss=1`,
];

const MARKDOWN = [
  "# Streamed reply",
  "",
  "Some **bold** text, a [link](https://example.com/docs) and `inline code`.",
  "",
  "Entities: &copy; &mdash; &#169; &#xA9; &unknown; &amp;lt;",
  "",
  "- item one",
  "- item two",
  "",
  "```js",
  "console.log('hello');",
  "```",
  "",
].join("\n");

const LONG = Array.from({ length: 2000 }, (_, i) => `word${i}`).join(" ");
const LONG_TOO = Array.from({ length: 600 }, (_, i) => `part${i}`).join(" ");

let agent: WebAgent;
let browser: Browser;
let contexts: BrowserContext[] = [];
let a: Page;
let b: Page;

const shot = async (page: Page, name: string): Promise<void> => {
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
};

/** Console errors and warnings, and uncaught page errors, of every tab openPage opened: any is a bug. */
const consoleProblems: string[] = [];

async function openPage(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  page.setDefaultTimeout(START_MS);
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") consoleProblems.push(`${message.type()}: ${message.text()} (${message.location().url})`);
  });
  page.on("pageerror", (error) => consoleProblems.push(`pageerror: ${error.message}`));
  await page.goto(agent.url);
  await page.locator(".connection[data-state=open]").waitFor(WAIT);
  return page;
}

async function send(page: Page, text: string): Promise<void> {
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill(text);
  await box.press("Enter");
}

const dialog = (page: Page, name: string) => page.getByRole("dialog", { name, exact: true });
const toast = (page: Page, text: string) => page.locator(".toast", { hasText: text });

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const cwd = mkdtempSync(join(tmpdir(), "parley-web-cwd-"));
  writeFileSync(join(cwd, "notes.txt"), "the notes file says hello\n");
  const script = join(cwd, "script.json");
  writeFileSync(
    script,
    JSON.stringify([
      { text: MARKDOWN, toolCalls: [{ name: "read", arguments: { path: "notes.txt" } }] },
      "Done reading the notes.",
      `Model text with payloads:\n\n${PAYLOADS.join("\n\n")}`,
      LONG,
      LONG_TOO,
    ]),
  );
  agent = await startWeb(["-e", DEMO, "-e", XSS_EXTENSION, "-e", TALL_EXTENSION, "--model-script", script], { cwd, env: { PARLEY_STREAM_DELAY_MS: "5" } });
  browser = await launchChromium(chromium);
  contexts = [await browser.newContext({ viewport: { width: 1100, height: 800 } }), await browser.newContext({ viewport: { width: 1100, height: 800 } })];
  a = await openPage(contexts[0]!);
  b = await openPage(contexts[1]!);
}, 2 * START_MS);

afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await agent?.stop();
});

describe("the web UI in two tabs", { timeout: 3 * START_MS }, () => {
  it("starts with the extension's title, status and widget", async () => {
    for (const page of [a, b]) {
      await expect.poll(() => page.title(), WAIT).toBe("parley demo (startup)");
      await page.locator(".statusbar .status", { hasText: "ready" }).waitFor();
      await page.locator(".widgets-above .widget", { hasText: "parley RPC demo" }).waitFor();
    }
    await shot(a, "01-start");
  });

  it("shows every dialog kind inline in both tabs, oldest first, and answers them from one", async () => {
    await send(a, "/demo-many");
    const titles = ["Pick a colour", "Proceed?", "Your name?", "Edit the note"];
    for (const page of [a, b]) {
      for (const title of titles) await dialog(page, title).waitFor();
      const order = await page.locator(".dialogs [role=dialog] h2").allTextContents();
      expect(order).toEqual(titles);
      // The conversation stays in view above the dialogs.
      await expect.poll(() => page.locator(".transcript").isVisible()).toBe(true);
    }
    await shot(a, "02-dialogs");
    const editor = dialog(a, "Edit the note").getByRole("textbox");
    expect(await editor.inputValue()).toBe("line one\nline two");

    // select: arrows and Enter.
    await dialog(a, "Pick a colour").getByRole("button", { name: "red" }).focus();
    await a.keyboard.press("ArrowDown");
    await a.keyboard.press("Enter");
    await dialog(a, "Proceed?").getByRole("button", { name: "Yes" }).click();
    const input = dialog(a, "Your name?").getByRole("textbox");
    expect(await input.getAttribute("placeholder")).toBe("type a name");
    await input.fill("Ada");
    await input.press("Enter");
    await editor.fill("x\ny");
    await editor.press("Control+Enter");

    for (const page of [a, b]) await toast(page, 'many: select=green confirm=true input=Ada editor="x\\ny"').waitFor();
    expect(await a.getByRole("dialog").count()).toBe(0);
    expect(await b.getByRole("dialog").count()).toBe(0);
    // Notes collapse: the newest shows, counting the earlier ones.
    await b.locator(".dialog-note", { hasText: "answered in another tab" }).last().waitFor();
    await b.locator(".dialog-note[data-earlier]").waitFor();
  });

  it("cancels every dialog kind (Esc and the Cancel button)", async () => {
    await send(b, "/demo-many");
    await dialog(b, "Edit the note").waitFor();
    await dialog(b, "Pick a colour").getByRole("button", { name: "blue" }).press("Escape");
    await dialog(b, "Proceed?").getByRole("button", { name: "No" }).press("Escape");
    await dialog(b, "Your name?").getByRole("button", { name: "Cancel" }).click();
    await dialog(b, "Edit the note").getByRole("textbox").press("Escape");
    for (const page of [a, b]) await toast(page, "many: select=cancelled confirm=false input=cancelled editor=cancelled").waitFor();
  });

  it("counts a timed dialog down and closes it with a note when it times out", async () => {
    await send(a, "/demo-timed 6000");
    const timed = dialog(b, "Quick!");
    await timed.waitFor();
    const countdown = timed.locator(".countdown");
    const first = Number((await countdown.textContent())?.match(/\d+/)?.[0]);
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThanOrEqual(6);
    await shot(b, "03-countdown");
    await expect.poll(async () => Number((await countdown.textContent())?.match(/\d+/)?.[0]), WAIT).toBeLessThan(first);
    for (const page of [a, b]) {
      await page.locator(".dialog-note", { hasText: "“Quick!” timed out" }).waitFor();
      await toast(page, "timed confirm: false").waitFor();
      expect(await dialog(page, "Quick!").count()).toBe(0);
    }
  });

  it("lets a tab that reloads mid-dialog see the dialog again and answer it", async () => {
    await send(a, "/demo-input");
    await dialog(b, "Your name?").waitFor();
    await b.reload();
    await b.locator(".connection[data-state=open]").waitFor();
    const input = dialog(b, "Your name?").getByRole("textbox");
    await input.fill("Bob");
    await dialog(b, "Your name?").getByRole("button", { name: "Submit" }).click();
    await toast(a, "input: Bob").waitFor();
    await a.locator(".dialog-note", { hasText: "answered in another tab" }).last().waitFor();
    expect(await dialog(a, "Your name?").count()).toBe(0);
  });

  it("takes the first of two simultaneous answers and closes the dialog everywhere", async () => {
    await send(a, "/demo-select");
    await dialog(a, "Pick a colour").waitFor();
    await dialog(b, "Pick a colour").waitFor();
    // Both clicks land before either tab hears of the other's answer.
    const red = await dialog(a, "Pick a colour").getByRole("button", { name: "red" }).elementHandle();
    const blue = await dialog(b, "Pick a colour").getByRole("button", { name: "blue" }).elementHandle();
    await Promise.all([red?.evaluate((button) => (button as HTMLButtonElement).click()), blue?.evaluate((button) => (button as HTMLButtonElement).click())]);
    await toast(a, "select: ").first().waitFor();
    const notes = await a.locator(".toast", { hasText: /select: (red|blue)/ }).allTextContents();
    expect(notes).toHaveLength(1);
    for (const page of [a, b]) expect(await dialog(page, "Pick a colour").count()).toBe(0);
    // The losing tab says so in words, whichever way it heard (no raw error, no dialog id).
    const loser = notes[0]?.includes("red") ? b : a;
    await loser.locator(".dialog-note", { hasText: "“Pick a colour” was answered in another tab" }).waitFor();
    expect(await loser.locator(".dialog-note", { hasText: "no longer pending" }).count()).toBe(0);
  });

  it("corrects a tab's note when its answer arrives after another tab's (refused as already answered)", async () => {
    // A third tab whose incoming messages the test can hold back, so it answers a dialog that
    // another tab has already answered: the race of the test above, made certain.
    const late = await contexts[1]!.newPage();
    await late.addInitScript(() => {
      const held: (() => void)[] = [];
      const w = window as unknown as { __hold: boolean; __release: () => void };
      w.__hold = false;
      w.__release = () => {
        w.__hold = false;
        for (const deliver of held.splice(0)) deliver();
      };
      const add = WebSocket.prototype.addEventListener;
      WebSocket.prototype.addEventListener = function (
        this: WebSocket,
        type: string,
        listener: EventListenerOrEventListenerObject,
        options?: boolean | AddEventListenerOptions,
      ) {
        if (type !== "message" || typeof listener !== "function") return add.call(this, type, listener, options);
        return add.call(this, type, (event: Event) => (w.__hold ? held.push(() => listener.call(this, event)) : listener.call(this, event)), options);
      } as typeof WebSocket.prototype.addEventListener;
    });
    try {
      late.setDefaultTimeout(START_MS);
      late.on("pageerror", (error) => consoleProblems.push(`pageerror: ${error.message}`));
      await late.goto(agent.url);
      await late.locator(".connection[data-state=open]").waitFor();
      await send(a, "/demo-select");
      await dialog(late, "Pick a colour").waitFor();
      await late.evaluate(() => ((window as unknown as { __hold: boolean }).__hold = true));
      const greens = await toast(a, "select: green").count();
      await dialog(a, "Pick a colour").getByRole("button", { name: "green" }).click();
      // The extension has had tab a's answer: the one from the held tab comes second, for certain.
      await expect.poll(() => toast(a, "select: green").count(), WAIT).toBeGreaterThan(greens);
      await dialog(late, "Pick a colour").getByRole("button", { name: "blue" }).click();
      await late.locator(".dialog-note", { hasText: "“Pick a colour” answered" }).waitFor();
      await late.evaluate(() => (window as unknown as { __release: () => void }).__release());
      await late.locator(".dialog-note", { hasText: "“Pick a colour” was answered in another tab first; this answer was not used" }).waitFor();
      expect(await late.locator(".dialog-note", { hasText: "no longer pending" }).count()).toBe(0);
      expect(await a.locator(".dialog-note", { hasText: "not used" }).count()).toBe(0);
      // Like every note, it goes after a while, and the emptied dialogs section hides.
      await late.locator(".dialog-note", { hasText: "not used" }).waitFor({ state: "detached" });
      await late.locator(".dialogs").waitFor({ state: "hidden" });
    } finally {
      await late.close();
    }
  });

  it("shows notifications as toasts by type, statuses, widgets by placement, the title and the prompt text", async () => {
    await send(a, "/demo-notify");
    for (const page of [a, b]) {
      await page.getByRole("status").filter({ hasText: "an info note" }).waitFor();
      await page.getByRole("status").filter({ hasText: "a warning" }).waitFor();
      await page.getByRole("alert").filter({ hasText: "an error" }).waitFor();
    }
    await send(a, "/demo-widgets");
    for (const page of [a, b]) {
      await page.locator(".widgets-above .widget", { hasText: "above the editor" }).waitFor();
      await page.locator(".widgets-below .widget", { hasText: "(second line)" }).waitFor();
      // Above and below the prompt box, in the document's order.
      const positions = await page.evaluate(() => {
        const top = (selector: string) => document.querySelector(selector)?.getBoundingClientRect().top ?? Number.NaN;
        return [top(".widgets-above"), top("#prompt-input"), top(".widgets-below")];
      });
      expect(positions[0]).toBeLessThan(positions[1]!);
      expect(positions[1]).toBeLessThan(positions[2]!);
    }
    await send(a, "/demo-title Hello from the web");
    for (const page of [a, b]) await expect.poll(() => page.title()).toBe("Hello from the web");
    await send(a, "/demo-prefill text from the extension");
    for (const page of [a, b]) await expect.poll(() => page.getByRole("textbox", { name: "Message" }).inputValue()).toBe("text from the extension");
    await a.locator(".statusbar .status", { hasText: "dialogs answered" }).waitFor();
    await shot(a, "04-notifications-widgets");
    await send(a, "/demo-widgets clear");
    await a.getByRole("textbox", { name: "Message" }).fill("");
    await b.getByRole("textbox", { name: "Message" }).fill("");
  });

  it("keeps the prompt box, the status bar and some conversation in the window under widgets and a select of 300 lines each", async () => {
    await send(a, "/tall 300");
    const tall = dialog(a, "A tall select");
    await tall.waitFor();
    await a.locator(".widgets-below .widget-line", { hasText: "tall line 299" }).waitFor({ state: "attached" });
    const height = a.viewportSize()?.height ?? 0;
    const within = async (box: { y: number; height: number } | null): Promise<void> => {
      expect(box).not.toBeNull();
      expect(box!.y).toBeGreaterThanOrEqual(0);
      expect(box!.y + box!.height).toBeLessThanOrEqual(height);
    };
    await within(await a.getByRole("textbox", { name: "Message" }).boundingBox());
    await within(await a.locator(".statusbar").boundingBox());
    expect((await a.locator(".transcript").boundingBox())?.height).toBeGreaterThan(height * 0.1);
    await shot(a, "08-tall-extension-ui");
    // The last option is a scroll away, and answers.
    await tall.getByRole("button", { name: "tall line 299" }).click();
    await toast(a, "tall: tall line 299").waitFor();
    await send(a, "/tall clear");
    await expect.poll(() => a.locator(".widget", { hasText: "tall line" }).count(), WAIT).toBe(0);
  });

  it("streams a reply as markdown with its tool call and output, in both tabs", async () => {
    await send(a, "show me some markdown");
    for (const page of [a, b]) {
      await page.locator(".message-assistant", { hasText: "Done reading the notes." }).waitFor();
      await page.locator(".message-user", { hasText: "show me some markdown" }).waitFor();
      await page.locator(".message-assistant h1", { hasText: "Streamed reply" }).waitFor();
      await page.locator(".message-assistant strong", { hasText: "bold" }).waitFor();
      expect(await page.locator(".message-assistant a", { hasText: "link" }).getAttribute("href")).toBe("https://example.com/docs");
      expect(await page.locator(".message-assistant pre code").first().textContent()).toBe("console.log('hello');");
      expect(await page.locator(".message-assistant li").allTextContents()).toEqual(["item one", "item two"]);
      await page.locator(".message-assistant p", { hasText: "Entities: © — © © &unknown; &lt;" }).waitFor();
      await page.locator(".tool .tool-name", { hasText: "read" }).waitFor();
      await page.locator(".tool .tool-output", { hasText: "the notes file says hello" }).waitFor();
    }
    await shot(a, "05-streamed-reply");
    // Dialogs under the conversation, which stays readable above them.
    await send(a, "/demo-many");
    await dialog(a, "Edit the note").waitFor();
    await a.locator(".message-assistant h1", { hasText: "Streamed reply" }).scrollIntoViewIfNeeded();
    expect(await a.locator(".message-assistant", { hasText: "Done reading the notes." }).isVisible()).toBe(true);
    await shot(a, "07-conversation-and-dialogs");
    for (const title of ["Pick a colour", "Proceed?", "Your name?", "Edit the note"]) await dialog(a, title).press("Escape");
    await toast(a, "many: select=cancelled").waitFor();
    // A tab that connects now gets the same conversation.
    const late = await openPage(contexts[1]!);
    await late.locator(".message-assistant h1", { hasText: "Streamed reply" }).waitFor();
    await late.locator(".tool .tool-output", { hasText: "the notes file says hello" }).waitFor();
    await late.close();
  });

  it("renders payloads in model text and in every extension string as text: nothing runs, nothing is injected", async () => {
    const before = await a.evaluate(
      () => document.querySelectorAll("img, script:not([src]), svg, iframe, style, a[href^='javascript'], [onerror], [onload], [ontoggle]").length,
    );
    await send(a, "payloads please");
    await a.locator(".message-assistant", { hasText: "Model text with payloads" }).waitFor();
    await send(a, `/xss ${JSON.stringify(PAYLOADS)}`);
    const all = PAYLOADS.join(" ");
    for (const page of [a, b]) {
      await dialog(page, all).first().waitFor();
      // The four dialogs arrive one after another: wait for the last, not just the first.
      await expect.poll(() => page.getByRole("dialog").count()).toBe(4);
      await expect.poll(() => page.title()).toBe(all);
      await page.locator(".error-line", { hasText: "Extension error" }).waitFor();
      await page.getByRole("alert").filter({ hasText: "<script>window.__xss=1</script>" }).first().waitFor();
    }
    await shot(a, "06-xss-inert");
    for (const page of [a, b]) {
      const result = await page.evaluate(() => ({
        flag: (window as { __xss?: unknown }).__xss,
        parentFlag: (window.parent as { __xss?: unknown }).__xss,
        injected: document.querySelectorAll("img, script:not([src]), svg, iframe, style, a[href^='javascript'], [onerror], [onload], [ontoggle]").length,
        scripts: document.querySelectorAll("script").length,
        text: document.body.textContent ?? "",
        options: [...document.querySelectorAll(".dialog-select .options button")].map((b) => b.textContent),
        widget: [...document.querySelectorAll(".widgets-below .widget-line")].map((l) => l.textContent),
        bodyVisible: getComputedStyle(document.body).display !== "none",
      }));
      expect(result.flag).toBeUndefined();
      expect(result.parentFlag).toBeUndefined();
      expect(result.injected).toBe(before);
      expect(result.scripts).toBe(1);
      expect(result.bodyVisible).toBe(true);
      expect(result.options).toEqual(PAYLOADS);
      expect(result.widget).toEqual(PAYLOADS);
      expect(result.text).toContain(`<img src=x onerror="window.__xss=1">`);
    }
    // The select's options are the payloads, answerable as they are; the rest are cancelled.
    await dialog(a, all)
      .filter({ has: a.locator(".options") })
      .getByRole("button", { name: PAYLOADS[1]!, exact: true })
      .click();
    for (let i = 0; i < 3; i++) await a.getByRole("dialog").first().press("Escape");
    await toast(b, "xss dialogs closed").waitFor();
    expect(await a.evaluate(() => (window as { __xss?: unknown }).__xss)).toBeUndefined();
  });

  it("aborts a streaming reply", async () => {
    await send(b, "a long answer please");
    await a.locator(".message-assistant", { hasText: "word20" }).waitFor();
    await a.getByRole("button", { name: "Stop" }).click();
    for (const page of [a, b]) {
      await page.locator(".error-line", { hasText: "Aborted" }).waitFor();
      await page.locator(".activity", { hasText: "idle" }).waitFor();
    }
    expect(await a.locator(".message-assistant", { hasText: "word1999" }).count()).toBe(0);
  });

  it("answers every dialog kind with the keyboard alone: focus goes to the dialogs, then back to the prompt", async () => {
    const focused = () =>
      a.evaluate(() =>
        document.activeElement?.closest("[role=dialog]")?.getAttribute("aria-labelledby")
          ? (document.activeElement?.closest("[role=dialog]")?.querySelector("h2")?.textContent ?? "")
          : (document.activeElement?.id ?? ""),
      );
    await a.getByRole("textbox", { name: "Message" }).focus();
    await a.keyboard.type("/demo-many");
    await a.keyboard.press("Enter");
    await dialog(a, "Edit the note").waitFor();
    // Focus is in the oldest dialog, on its first option; arrows move between options.
    expect(await focused()).toBe("Pick a colour");
    await a.keyboard.press("ArrowDown");
    await a.keyboard.press("ArrowDown");
    await a.keyboard.press("Enter");
    // The next dialog takes the focus: Tab to "No".
    await dialog(a, "Pick a colour").waitFor({ state: "detached" });
    expect(await focused()).toBe("Proceed?");
    await a.keyboard.press("Tab");
    await a.keyboard.press("Enter");
    await dialog(a, "Proceed?").waitFor({ state: "detached" });
    expect(await focused()).toBe("Your name?");
    await a.keyboard.type("Kim");
    await a.keyboard.press("Enter");
    await dialog(a, "Your name?").waitFor({ state: "detached" });
    expect(await focused()).toBe("Edit the note");
    await a.keyboard.press("End");
    await a.keyboard.type("!");
    await a.keyboard.press("Control+Enter");
    await toast(a, "many: select=blue confirm=false input=Kim").waitFor();
    expect(await a.locator(".toast", { hasText: "many: " }).last().textContent()).toContain('editor="line one\\nline two!"');
    expect(await focused()).toBe("prompt-input");
  });

  it("keeps streaming to the other tabs when a tab closes mid-reply", async () => {
    const extra = await openPage(contexts[1]!);
    await send(extra, "a long answer please");
    await a.locator(".message-assistant", { hasText: "part20" }).waitFor();
    await extra.close();
    await a.locator(".message-assistant", { hasText: "part599" }).waitFor();
    await a.locator(".activity", { hasText: "idle" }).waitFor();
    expect(agent.child.exitCode).toBeNull();
  });

  it("keeps a dialog open when its answer cannot be sent (parley gone), saying so", async () => {
    const own = await startWeb(["-e", DEMO]);
    const page = await contexts[0]!.newPage();
    try {
      page.setDefaultTimeout(START_MS);
      await page.goto(own.url);
      await page.locator(".connection[data-state=open]").waitFor();
      await send(page, "/demo-select");
      await dialog(page, "Pick a colour").waitFor();
      // No shutdown dismiss: the agent dies at once, and the page cannot know the dialog ended.
      own.child.kill("SIGKILL");
      await own.exited;
      await page.locator(".connection[data-state=closed], .connection[data-state=connecting]").first().waitFor();
      await dialog(page, "Pick a colour").getByRole("button", { name: "red" }).click();
      await dialog(page, "Pick a colour").getByRole("alert").filter({ hasText: "not sent" }).waitFor();
      expect(await page.locator(".dialog-note", { hasText: "answered" }).count()).toBe(0);
    } finally {
      await page.close();
      await own.stop();
    }
  });

  it("logged no console error or warning and no uncaught error in any tab (a favicon 401 included)", () => {
    expect(consoleProblems).toEqual([]);
  });

  it("refuses a wrong token in the browser too", async () => {
    const page = await contexts[0]!.newPage();
    const response = await page.goto(agent.url.replace(/token=[^&]+/, "token=nope"));
    expect(response?.status()).toBe(401);
    await page.close();
  });
});
