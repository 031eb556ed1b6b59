/**
 * The terminal client (examples/rpc-extension-ui.ts) driven the way a person uses it: in a
 * tmux pane of fixed size, started with the documented command from a shell, keys sent with
 * `send-keys`, the screen read with `capture-pane`. Every wait polls the screen against a
 * deadline. .ci/run installs tmux when it is missing; without it this test fails, not skips.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The documented command (docs/cli.md, "Terminal client"). */
const COMMAND = "./node_modules/.bin/jiti examples/rpc-extension-ui.ts";
const SOCKET = `parley-tui-test-${process.pid}`;
const SESSION = "tui";
const PROMPT = "tui-shell$ ";
const WIDTH = 110;
const HEIGHT = 34;

const hasTmux = spawnSync("tmux", ["-V"], { stdio: "ignore" }).status === 0;

function tmux(...args: string[]): string {
  return execFileSync("tmux", ["-L", SOCKET, "-f", "/dev/null", ...args], { encoding: "utf8" });
}
const capture = (): string[] => tmux("capture-pane", "-p", "-t", SESSION).replace(/\n$/, "").split("\n");
const keys = (...names: string[]): void => void tmux("send-keys", "-t", SESSION, ...names);
const typeText = (text: string): void => void tmux("send-keys", "-t", SESSION, "-l", text);
const paneInfo = (format: string): string => tmux("display-message", "-p", "-t", SESSION, format).trim();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// As the agent tests' helpers: a ceiling against a hang (a minute at least), scaled on a slow machine.
const AGENT_CEILING_MS = 60_000;
const scale = Number(process.env["PARLEY_TEST_DEADLINE_SCALE"] ?? "1");
const scaled = (ms: number): number => Math.round(ms * (Number.isFinite(scale) && scale > 0 ? scale : 1));

/** Polls the screen until `predicate` holds; fails with the last screen after `timeoutMs`. */
async function waitFor(what: string, predicate: (screen: string[]) => boolean, timeoutMs = AGENT_CEILING_MS): Promise<string[]> {
  // A ceiling against a hang, not a speed requirement: at least a minute, scaled on a slow machine.
  timeoutMs = scaled(Math.max(timeoutMs, AGENT_CEILING_MS));
  const deadline = Date.now() + timeoutMs;
  let screen: string[] = [];
  for (;;) {
    screen = capture();
    if (predicate(screen)) return screen;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; the screen:\n${screen.join("\n")}`);
    await sleep(40);
  }
}
const showing =
  (...texts: (string | RegExp)[]) =>
  (screen: string[]) =>
    texts.every((t) => screen.some((line) => (typeof t === "string" ? line.includes(t) : t.test(line))));
const rowOf = (screen: string[], text: string): number => screen.findIndex((line) => line.includes(text));
const lastLine = (screen: string[]): string => [...screen].reverse().find((line) => line.trim() !== "") ?? "";

/** Types a line into the client's input and presses Enter. */
function submit(text: string): void {
  typeText(text);
  keys("Enter");
}

describe.sequential("examples/rpc-extension-ui.ts under tmux", () => {
  let home = "";

  beforeAll(() => {
    expect(hasTmux, "tmux is needed for this test: apt-get install tmux (.ci/run does)").toBe(true);
    home = mkdtempSync(join(tmpdir(), "parley-tui-"));
    // A clean environment: no API keys (parley stays on its offline model), no user extensions.
    const env = [`PATH=${process.env["PATH"] ?? ""}`, `HOME=${home}`, "TERM=screen", "LANG=C.UTF-8", `PS1=${PROMPT}`, "HISTFILE="];
    tmux("new-session", "-d", "-s", SESSION, "-x", String(WIDTH), "-y", String(HEIGHT), "-c", ROOT, "env", "-i", ...env, "bash", "--norc", "--noprofile");
  });

  afterAll(() => {
    if (hasTmux) spawnSync("tmux", ["-L", SOCKET, "kill-server"], { stdio: "ignore" });
    if (home) rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  });

  it("starts with the agent's real commands, its status in the status bar and its widget in place", async () => {
    await waitFor("the shell prompt", (screen) => screen.some((line) => line.startsWith(PROMPT.trim())));
    submit(`${COMMAND}; echo "client exit status: $?"`);
    const screen = await waitFor(
      "the command list and the status bar",
      (s) => showing("/demo-select", "/demo-timed-editor", "/demo-degraded")(s) && lastLine(s).includes("rpc-demo: ready"),
      40_000,
    );
    expect(paneInfo("#{alternate_on}")).toBe("1");
    const status = lastLine(screen);
    expect(status).toContain("parley demo (startup)"); // the title the extension set
    expect(status).toContain("parley offline demo"); // the model
    // The widget sits above the input line, which sits above the status bar.
    const widget = rowOf(screen, "parley RPC demo");
    const input = rowOf(screen, "› a message or /command");
    expect(widget).toBeGreaterThan(rowOf(screen, "/demo-degraded"));
    expect(rowOf(screen, "try /demo-select, /demo-confirm")).toBe(widget + 1);
    expect(input).toBeGreaterThan(widget + 1);
    expect(input).toBe(screen.length - 2);
  });

  it("select: arrow down + Enter answers green", async () => {
    submit("/demo-select");
    await waitFor("the select dialog", showing("Pick a colour (select)", "❯ red", "↑/↓ move · Enter choose · Esc cancel"));
    keys("Down");
    await waitFor("the cursor on green", showing("❯ green"));
    keys("Enter");
    const screen = await waitFor("the extension's notify", showing("ℹ select: green"));
    expect(screen.some((line) => line.includes("Pick a colour (select)"))).toBe(false);
    expect(lastLine(screen)).toContain("rpc-demo: 1 dialog answered");
  });

  it("confirm: y answers yes", async () => {
    submit("/demo-confirm");
    await waitFor("the confirm dialog", showing("Proceed? (confirm)", "The demo will pretend to do something.", "[y] Yes"));
    keys("y");
    await waitFor("the extension's notify", showing("ℹ confirm: true"));
  });

  it("input: a typed name + Enter", async () => {
    submit("/demo-input");
    await waitFor("the input dialog with its placeholder", showing("Your name? (input)", "│ › type a name"));
    typeText("Ada Lovelace");
    await waitFor("the typed name", showing("│ › Ada Lovelace"));
    keys("Enter");
    await waitFor("the extension's notify", showing("ℹ input: Ada Lovelace"));
  });

  it("editor: two more lines after the prefill, submitted with Ctrl-S", async () => {
    submit("/demo-editor");
    await waitFor("the editor with its prefill and keys", showing("Edit the note (editor)", "│ line one", "│ line two", "Ctrl-S or Ctrl-D submit"));
    keys("Enter");
    typeText("alpha");
    keys("Enter");
    typeText("beta");
    await waitFor("the typed lines", showing("│ alpha", "│ beta"));
    keys("C-s");
    const screen = await waitFor("the extension's notify", showing("ℹ editor: 4 lines"));
    expect(screen.some((line) => line.includes("Edit the note (editor)"))).toBe(false);
  });

  it("a timed confirm shows its countdown, then closes by itself and the extension gets false", async () => {
    const started = Date.now();
    submit("/demo-timed 1500");
    const seen = new Set<string>();
    const screen = await waitFor("the dialog to close by itself", (s) => {
      for (const line of s) {
        const match = /Quick! \(confirm\).*⏱ (\d+\.\d)s left/.exec(line);
        if (match) seen.add(match[1]!);
      }
      return showing("ℹ timed confirm: false")(s);
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    // Several different readings of a countdown that starts at (at most) 1.5 s.
    expect(seen.size).toBeGreaterThanOrEqual(3);
    expect(Math.max(...[...seen].map(Number))).toBeLessThanOrEqual(1.5);
    expect(screen.some((line) => line.includes("“Quick!” timed out; the dialog closed by itself"))).toBe(true);
    expect(screen.some((line) => line.includes("Quick! (confirm)"))).toBe(false);
  });

  it("widgets stay above and below the input line while the transcript grows", async () => {
    submit("/demo-widgets");
    const before = await waitFor("both widgets", showing("▍ above the editor", "▍ below the editor", "▍ (second line)"));
    const above = rowOf(before, "▍ above the editor");
    const input = rowOf(before, "› a message or /command");
    const below = rowOf(before, "▍ below the editor");
    expect(above).toBeLessThan(input);
    expect(below).toBe(input + 1);
    expect(rowOf(before, "▍ (second line)")).toBe(below + 1);
    expect(before.length - 1).toBe(below + 2); // then the status bar, last
    submit("/demo-notify");
    const after = await waitFor("the notifications", showing("ℹ an info note", "⚠ a warning", "✖ an error"));
    expect([rowOf(after, "▍ above the editor"), rowOf(after, "› a message or /command"), rowOf(after, "▍ below the editor")]).toEqual([above, input, below]);
    // Widgets are drawn once, in place: never copied into the transcript.
    expect(after.filter((line) => line.includes("parley RPC demo"))).toHaveLength(1);
  });

  it("set_editor_text prefills the input line; Enter sends it and the reply streams in", async () => {
    submit("/demo-prefill hello there");
    await waitFor("the prefilled input line", showing(/^› hello there\s*$/));
    keys("Enter");
    await waitFor("the offline model's reply", showing("› hello there", "offline demo model"));
  });

  it("emoji, ZWJ sequences, CJK and combining marks are edited by cluster; the agent receives exactly the text typed", async () => {
    typeText("/demo-echo x🎉");
    await waitFor("the party popper", showing(/^› \/demo-echo x🎉\s*$/));
    keys("BSpace"); // the whole emoji goes, not half of its surrogate pair
    await waitFor("the emoji gone", showing(/^› \/demo-echo x\s*$/));
    typeText("👨‍👩‍👧你好e");
    typeText("\u0301"); // a combining acute accent, arriving on its own, joins the e
    await waitFor("the typed text", showing(/^› \/demo-echo x👨‍👩‍👧你好(?:é|e\u0301)\s*$/));
    // Cursor columns by display width: "› " 2, "/demo-echo x" 12, the family 2, each CJK character 2, é 1.
    expect(Number(paneInfo("#{cursor_x}"))).toBe(2 + 12 + 2 + 4 + 1);
    keys("Left", "Left", "Left"); // over é, 好 and 你: one cluster each
    await waitFor("the cursor after the family", () => Number(paneInfo("#{cursor_x}")) === 2 + 12 + 2);
    typeText("Z");
    keys("Right", "Right", "Right", "BSpace"); // at the end: Backspace takes é whole (e and its accent)
    await waitFor("the edited line", showing(/^› \/demo-echo x👨‍👩‍👧Z你好\s*$/));
    keys("Enter");
    await waitFor("the echo of exactly the text typed", showing('ℹ echo: "x👨‍👩‍👧Z你好"'));
  });

  it("assistant text renders as markdown", async () => {
    submit("what's in package.json?");
    const screen = await waitFor("the offline model's summary", showing("It describes the package parley-monorepo"), 30_000);
    // `code` and **bold** are styled, not shown raw.
    expect(screen.some((line) => line.includes("`parley-monorepo`") || line.includes("**package.json**"))).toBe(false);
    expect(screen.some((line) => line.includes("package.json: "))).toBe(true);
  });

  it("Ctrl-C twice closes the agent, restores the terminal and returns to the shell", async () => {
    // The first Ctrl-C clears the line and arms; the second quits (pi's app.clear).
    keys("C-c");
    await waitFor("the armed status", (s) => lastLine(s).includes("Ctrl-C again quits"));
    keys("C-c");
    const screen = await waitFor(
      "the shell again",
      (s) => showing("agent closed (exit code 0)", "client exit status: 0")(s) && lastLine(s).startsWith(PROMPT.trim()),
    );
    expect(screen.some((line) => line.includes("rpc-demo:"))).toBe(false); // the client's screen is gone
    expect(paneInfo("#{alternate_on}")).toBe("0");
    expect(paneInfo("#{pane_current_command}")).toBe("bash");
    // The shell reads lines again: the terminal was handed back in a usable state.
    submit("echo terminal-ok-$((20+22))");
    await waitFor("the shell's answer", showing("terminal-ok-42"));
  });

  it("against pi (`-- CMD ARGS`): degrades without get_ui_state and dismiss records", async () => {
    keys("C-l");
    submit(
      `${COMMAND} -- node node_modules/@mariozechner/pi-coding-agent/dist/cli.js --mode rpc --no-session -e examples/extensions/rpc-demo.ts; echo "pi client exit status: $?"`,
    );
    await waitFor(
      "pi's commands and the demo's status, built from records",
      (s) => showing("agent: pi-compatible", "/demo-select", "▍ parley RPC demo")(s) && lastLine(s).includes("rpc-demo: ready"),
      30_000,
    );
    // No extension_ui_dismissed from pi: the client ends the dialog at its deadline.
    submit("/demo-timed 1000");
    await waitFor("the countdown", showing(/Quick! \(confirm\).*⏱ \d\.\ds left/));
    await waitFor("the dialog to close by itself", showing("“Quick!” timed out; the dialog closed by itself", "ℹ timed confirm: false"));
    keys("C-d"); // on an empty line: quit
    await waitFor("the shell again", (s) => showing("agent closed", "pi client exit status: 0")(s) && lastLine(s).startsWith(PROMPT.trim()));
  });

  it("layout at 60 and 200 columns: wrapped descriptions align, the status bar keeps the model and shows a waiting dialog", async () => {
    tmux("resize-window", "-t", SESSION, "-x", "60", "-y", "60");
    keys("C-l");
    submit(`${COMMAND}; echo "narrow client exit status: $?"`);
    let screen = await waitFor("the command list at 60 columns", (s) => showing("/demo-degraded")(s) && lastLine(s).includes("parley offline demo"), 40_000);
    // A description too long for the line wraps under itself, not to column 0.
    const timed = rowOf(screen, "/demo-timed ");
    const column = screen[timed]!.indexOf("confirm() with a timeout");
    expect(column).toBeGreaterThan(10);
    expect(screen[timed + 1]!.slice(0, column).trim()).toBe("");
    expect(screen[timed + 1]!.slice(column).trim()).not.toBe("");
    // The status bar: title cut with an ellipsis, the activity and the whole model kept.
    let status = lastLine(screen);
    expect(status).toContain("…");
    expect(status).toContain("idle │ parley offline demo (no API key)");
    submit("/demo-select");
    screen = await waitFor("the dialog in the status bar", (s) => lastLine(s).includes("⏸ select │ parley offline demo (no API key)"));
    expect(lastLine(screen)).not.toContain("idle");

    tmux("resize-window", "-t", SESSION, "-x", "200", "-y", "60");
    screen = await waitFor("the wide status bar", (s) => lastLine(s).includes("⏸ a select dialog waits for you │ parley offline demo (no API key)"));
    status = lastLine(screen);
    expect(status).toContain("parley demo (startup)");
    expect(status).not.toContain("…");
    // At 200 columns each description fits on its command's line.
    const wide = rowOf(screen, "/demo-timed ");
    expect(screen[wide]).toContain("confirm() with a timeout (default 5000 ms, or the number given)");
    keys("Escape");
    await waitFor("idle again", (s) => lastLine(s).includes("idle │ parley offline demo"));
    // An editor dialog is "an editor dialog".
    submit("/demo-editor");
    await waitFor("the editor in the status bar", (s) => lastLine(s).includes("⏸ an editor dialog waits for you"));
    keys("Escape");
    await waitFor("idle again", (s) => lastLine(s).includes("idle │ parley offline demo"));
    keys("C-c");
    await waitFor("the armed status", (s) => lastLine(s).includes("Ctrl-C again quits"));
    keys("C-c");
    await waitFor("the shell again", (s) => showing("narrow client exit status: 0")(s) && lastLine(s).startsWith(PROMPT.trim()));
  });

  describe("while the agent works, as in pi's terminal UI", () => {
    const working = (s: string[]): boolean => /working/.test(lastLine(s));
    const idle = (s: string[]): boolean => lastLine(s).includes("idle │ parley offline demo");

    it("Enter queues a steer and Alt+Enter a follow-up under the reply; the status bar counts them; each joins the transcript when taken", async () => {
      keys("C-l");
      // Slow replies (the offline model's deltas 300 ms apart), so there is time to type while one streams.
      submit(`PARLEY_STREAM_DELAY_MS=300 ${COMMAND}; echo "queue client exit status: $?"`);
      await waitFor("the client", (s) => showing("/demo-select")(s) && idle(s), 40_000);
      submit("what's in package.json?");
      await waitFor("the agent working", working);
      typeText("also list the folder");
      keys("Enter");
      typeText("and then say bye");
      keys("M-Enter");
      const queued = await waitFor(
        "both queued, counted in the status bar",
        (s) => showing("⏳ steer: also list the folder", "⏳ follow-up: and then say bye")(s) && lastLine(s).includes("1 steer, 1 follow-up queued"),
      );
      // Below the transcript (the rule), above the widgets and the input line; not in the transcript yet.
      const rule = queued.findIndex((line) => /^─+$/.test(line.trim()));
      expect(rowOf(queued, "⏳ steer: also list the folder")).toBe(rule + 1);
      expect(rowOf(queued, "⏳ follow-up: and then say bye")).toBe(rule + 2);
      expect(rowOf(queued, "▍ parley RPC demo")).toBe(rule + 3);
      expect(queued.some((line) => line.startsWith("› also list the folder"))).toBe(false);
      const done = await waitFor(
        "both taken in turn, and the agent idle",
        (s) => showing("› also list the folder  (steer)", "› and then say bye  (follow-up)")(s) && idle(s) && !showing("⏳")(s),
        120_000,
      );
      // Each joined the transcript after the reply it waited for: the steer after the first reply, the follow-up after the steer's.
      expect(rowOf(done, "package.json: ")).toBeLessThan(rowOf(done, "› also list the folder  (steer)"));
      expect(rowOf(done, "› also list the folder  (steer)")).toBeLessThan(rowOf(done, "› and then say bye  (follow-up)"));
    });

    it("Esc aborts the running turn; what was queued comes back to the input line", async () => {
      keys("C-l");
      submit("what's in package.json?");
      await waitFor("the agent working", working);
      typeText("queued one");
      keys("Enter");
      await waitFor("the steer queued", showing("⏳ steer: queued one"));
      keys("Escape");
      const screen = await waitFor("the turn aborted and the agent idle", (s) => idle(s) && showing("↳ aborted by Esc", /^› queued one\s*$/)(s));
      expect(screen.some((line) => line.includes("⏳"))).toBe(false);
      keys("C-u");
      await waitFor("the line empty", showing("› a message or /command"));
    });

    it("Ctrl-C clears the line, another key disarms it; on an idle, empty line a second Esc quits", async () => {
      typeText("a draft");
      await waitFor("the draft", showing(/^› a draft\s*$/));
      keys("C-c");
      await waitFor("the line cleared and the status armed", (s) => showing("› a message or /command")(s) && lastLine(s).includes("Ctrl-C again quits"));
      typeText("x");
      await waitFor("disarmed by another key", (s) => showing(/^› x\s*$/)(s) && idle(s));
      keys("BSpace");
      keys("Escape");
      await waitFor("the Esc armed", (s) => lastLine(s).includes("Esc again quits"));
      keys("Escape");
      await waitFor("the shell again", (s) => showing("queue client exit status: 0")(s) && lastLine(s).startsWith(PROMPT.trim()));
    });
  });
});
