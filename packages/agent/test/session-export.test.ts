/**
 * export_html: a self-contained, script-free page with the conversation in the HTML itself,
 * every session string escaped.
 */
import { afterAll, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { AssistantMessage } from "@parley/protocol";
import { createSession, escapeHtml, exportHtml, type Session } from "../src/session/index.js";

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "parley-export-"));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const usage = {
  input: 12,
  output: 34,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 46,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.0123 },
};
function assistant(content: AssistantMessage["content"], extra: Partial<AssistantMessage> = {}): AssistantMessage {
  return { role: "assistant", content, api: "a", provider: "prov", model: "mod", usage, stopReason: "stop", timestamp: 1, ...extra };
}

const NASTY = `<script>alert("x")</script> & <img src=x onerror=alert(1)> 'quoted' "double"`;

function conversation(session: Session): void {
  session.setName(`Name with <b>tags</b> & ampersand`);
  session.append({ type: "message", message: { role: "user", content: `Please run ${NASTY}`, timestamp: 1 } });
  session.append({
    type: "message",
    message: assistant(
      [
        { type: "thinking", thinking: "secret <thoughts> & plans" },
        { type: "text", text: 'Here is code:\n```ts\nif (a < b && c > d) { run("</pre>"); }\n```\nDone & dusted.' },
        { type: "toolCall", id: "call-1", name: "bash", arguments: { command: "echo '<script>' && rm -rf /tmp/x" } },
      ],
      { stopReason: "toolUse" },
    ),
  });
  session.append({
    type: "message",
    message: {
      role: "toolResult",
      toolCallId: "call-1",
      toolName: "bash",
      content: [{ type: "text", text: "<script>evil()</script>" }],
      isError: true,
      timestamp: 2,
    },
  });
  session.append({
    type: "message",
    message: assistant([{ type: "text", text: "partial" }], { stopReason: "error", errorMessage: "Provider said <no> & stopped" }),
  });
  session.append({
    type: "message",
    message: {
      role: "user",
      content: [
        { type: "text", text: "an image:" },
        { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
        { type: "image", data: "AAAA", mimeType: 'image/png" onload="alert(1)' },
      ],
      timestamp: 3,
    },
  });
  session.append({ type: "custom_message", customType: "ext<1>", content: "visible extension note", display: true });
  session.append({ type: "custom_message", customType: "ext", content: "hidden extension note", display: false });
}

describe("exportHtml", () => {
  it("writes a page with the conversation in it, escaped, without any script", () => {
    const dir = tempDir();
    const session = createSession({ cwd: dir, sessionDir: path.join(dir, "sessions"), persist: true });
    conversation(session);
    mkdirSync(path.join(dir, "out")); // as pi, the folder must exist
    const out = exportHtml(session, path.join(dir, "out", "page.html"));
    expect(out).toBe(path.join(dir, "out", "page.html"));
    const html = readFileSync(out, "utf8");

    expect(html.startsWith("<!DOCTYPE html>")).toBe(true);
    expect(html).not.toMatch(/<script/i);
    // Escaped text has no "<", so every tag found is a real one: none may carry a handler or a JS URL.
    const tags = html.match(/<[a-z][^>]*>/gi) ?? [];
    expect(tags.length).toBeGreaterThan(20);
    for (const tag of tags) expect(tag).not.toMatch(/\son\w+\s*=|javascript:/i);
    expect(new Set(tags.map((t) => /^<([a-z0-9]+)/i.exec(t)![1]!.toLowerCase()))).not.toContain("script");
    expect(html).toContain("Content-Security-Policy");
    expect(html).toContain("prefers-color-scheme: dark");

    // Texts are present, escaped.
    expect(html).toContain(escapeHtml(`Please run ${NASTY}`));
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(1)&gt;");
    expect(html).toContain("<title>Name with &lt;b&gt;tags&lt;/b&gt; &amp; ampersand</title>");
    expect(html).toContain("Done &amp; dusted.");
    expect(html).toContain("&lt;script&gt;evil()&lt;/script&gt;");
    expect(html).toContain("visible extension note");
    expect(html).not.toContain("hidden extension note");
    expect(html).toContain(session.id);
    expect(html).toContain(escapeHtml(dir));

    // Structure: code in <pre>, collapsed thinking, tool arguments as JSON, errors highlighted.
    expect(html).toContain("<pre><code>if (a &lt; b &amp;&amp; c &gt; d) { run(&quot;&lt;/pre&gt;&quot;); }</code></pre>");
    expect(html).toMatch(
      /<details class="thinking"><summary>Thinking<\/summary><div class="text"><p>secret &lt;thoughts&gt; &amp; plans<\/p><\/div><\/details>/,
    );
    expect(html).toContain(escapeHtml(JSON.stringify({ command: "echo '<script>' && rm -rf /tmp/x" }, null, 2)));
    expect(html).toContain('class="msg tool failed"');
    expect(html).toContain('<div class="error">Error: Provider said &lt;no&gt; &amp; stopped</div>');
    expect(html).toContain('<img alt="image" src="data:image/png;base64,iVBORw0KGgo=">');
    expect(html).toContain("[image: image/png&quot; onload=&quot;alert(1)]");
    expect(html).toContain('class="msg user"');
    expect(html).toContain('class="msg assistant"');
  });

  it("defaults to pi-session-<file basename>.html (pi's name) in the session's cwd", () => {
    const dir = tempDir();
    const session = createSession({ cwd: dir, sessionDir: path.join(dir, "s"), persist: true });
    session.append({ type: "message", message: { role: "user", content: "hello & welcome", timestamp: 1 } });
    const out = exportHtml(session);
    expect(out).toBe(path.join(dir, `pi-session-${path.basename(session.file!, ".jsonl")}.html`));
    expect(readFileSync(out, "utf8")).toContain("hello &amp; welcome");

    const memory = createSession({ cwd: dir, persist: false });
    const memoryOut = exportHtml(memory);
    expect(memoryOut).toBe(path.join(dir, `pi-session-${memory.id}.html`));
    expect(readFileSync(memoryOut, "utf8")).toContain("This session has no entries yet.");

    mkdirSync(path.join(dir, "rel"));
    const relative = exportHtml(memory, "rel/out.html");
    expect(relative).toBe(path.join(dir, "rel", "out.html"));
    expect(existsSync(relative)).toBe(true);
  });

  it("shows the active branch only, and says how much is elsewhere", () => {
    const dir = tempDir();
    const session = createSession({ cwd: dir, persist: false });
    const first = session.append({ type: "message", message: { role: "user", content: "shared start", timestamp: 1 } });
    session.append({ type: "message", message: assistant([{ type: "text", text: "abandoned reply" }]) });
    session.moveLeaf(first.id);
    session.append({ type: "message", message: assistant([{ type: "text", text: "chosen reply" }]) });
    session.setLabel(first.id, "start <here>");
    const html = readFileSync(exportHtml(session), "utf8");
    expect(html).toContain("chosen reply");
    expect(html).not.toContain("abandoned reply");
    expect(html).toContain("1 entry is on other branches");
    expect(html).toContain('<span class="label">start &lt;here&gt;</span>');
  });
});
