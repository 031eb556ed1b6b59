/**
 * `parley --mode acp` driven by the ACP SDK's own client over the spawned CLI: the prompt turn
 * with a scripted model calling tools, cancel, every extension dialog kind answered, declined,
 * cancelled and timed out with and without client elicitation, session list and load.
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { agentText, untilWithdrawn, type AcpHarness, acpStarter, openSession, promptText, scriptWorkspace } from "./helpers/acp-client.js";
import { DEMO, PI_BIN, ROOT, spawnAgent } from "./helpers/spawn.js";
import { quietFor } from "./helpers/waits.js";

const GATE = join(ROOT, "packages/agent/test/fixtures/acp-gate.ts");
const OFFLINE_PROVIDER = join(ROOT, "packages/agent/test/fixtures/offline-provider.ts");
const STARTUP_DIALOG = join(ROOT, "packages/agent/test/fixtures/startup-dialog.ts");
const TEST_MS = 120_000;

const start = acpStarter();

const workspace = (script: unknown[]) => scriptWorkspace("parley-acp-", script);

const newSession = openSession;

const prompt = promptText;

/** Every stdout line is one JSON-RPC 2.0 message. */
function expectOnlyJsonRpc(h: AcpHarness): void {
  expect(h.lines.length).toBeGreaterThan(0);
  for (const line of h.lines) {
    const value = JSON.parse(line) as { jsonrpc?: unknown };
    expect(value.jsonrpc).toBe("2.0");
  }
}

const TOOLS_SCRIPT = [
  { text: "Writing a file.", toolCalls: [{ name: "write", arguments: { path: "notes.txt", content: "one\ntwo\n" } }] },
  { toolCalls: [{ name: "edit", arguments: { path: "notes.txt", edits: [{ oldText: "two", newText: "three" }] } }] },
  { toolCalls: [{ name: "bash", arguments: { command: "echo from-bash; cat notes.txt" } }] },
  { toolCalls: [{ name: "read", arguments: { path: "notes.txt" } }] },
  "All done.",
];

describe("parley --mode acp", () => {
  it(
    "initialize, new session, a prompt whose scripted model calls read/write/edit/bash: updates in order; stdout is JSON-RPC only",
    async () => {
      const ws = workspace(TOOLS_SCRIPT);
      const h = await start(["--model-script", ws.script, "--session-dir", ws.sessions, "-e", DEMO], { cwd: ws.dir });
      const session = await newSession(h, ws.dir);
      expect(session.modes?.currentModeId).toBe("off");
      expect(session.configOptions?.find((o) => o.id === "model")).toMatchObject({ type: "select", currentValue: "parley/script" });
      const commands = h.updates.find((n) => n.update.sessionUpdate === "available_commands_update")?.update;
      expect(commands?.sessionUpdate === "available_commands_update" && commands.availableCommands.map((c) => c.name)).toContain("demo-select");
      // The demo's session_start title and status arrived for this session.
      expect(h.updates.some((n) => n.update.sessionUpdate === "session_info_update" && n.update.title === "parley demo (startup)")).toBe(true);

      const response = await prompt(h, session.sessionId, "make notes");
      expect(response.stopReason).toBe("end_turn");
      const updates = h.updates.map((n) => n.update);
      const calls = updates.filter((u): u is Extract<acp.SessionUpdate, { sessionUpdate: "tool_call" }> => u.sessionUpdate === "tool_call");
      expect(calls.map((c) => [c.title, c.kind, c.status])).toEqual([
        ["Write notes.txt", "edit", "in_progress"],
        ["Edit notes.txt", "edit", "in_progress"],
        ["`echo from-bash; cat notes.txt`", "execute", "in_progress"],
        ["Read notes.txt", "read", "in_progress"],
      ]);
      const file = join(ws.dir, "notes.txt");
      expect(calls[0]?.locations).toEqual([{ path: file }]);
      const ends = updates.filter(
        (u): u is Extract<acp.SessionUpdate, { sessionUpdate: "tool_call_update" }> => u.sessionUpdate === "tool_call_update" && u.status === "completed",
      );
      expect(ends.map((u) => u.toolCallId)).toEqual(calls.map((c) => c.toolCallId));
      // Structured diffs: write from nothing, edit from the written text.
      expect(ends[0]?.content).toEqual([{ type: "diff", path: file, oldText: null, newText: "one\ntwo\n" }]);
      expect(ends[1]?.content).toEqual([{ type: "diff", path: file, oldText: "one\ntwo\n", newText: "one\nthree\n" }]);
      // Live bash output came as in-progress updates before the call completed.
      const bashId = calls[2]?.toolCallId;
      const live = updates.findIndex(
        (u) =>
          u.sessionUpdate === "tool_call_update" && u.toolCallId === bashId && u.status === "in_progress" && JSON.stringify(u.content).includes("from-bash"),
      );
      const bashEnd = updates.findIndex((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === bashId && u.status === "completed");
      expect(live).toBeGreaterThan(-1);
      expect(live).toBeLessThan(bashEnd);
      // Each call starts before it ends, the text comes first and last.
      for (const call of calls) {
        const s = updates.findIndex((u) => u.sessionUpdate === "tool_call" && u.toolCallId === call.toolCallId);
        const e = updates.findIndex((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === call.toolCallId && u.status === "completed");
        expect(s).toBeLessThan(e);
      }
      const text = agentText(h, session.sessionId);
      expect(text.indexOf("Writing a file.")).toBeGreaterThan(-1);
      expect(text.endsWith("All done.")).toBe(true);
      expect(readFileSync(file, "utf8")).toBe("one\nthree\n");

      // Thinking level as a mode (only "off" for the scripted model) and an unknown one refused.
      await expect(h.agent.request("session/set_mode", { sessionId: session.sessionId, modeId: "high" })).rejects.toThrow(/not a thinking level/);
      expect(await h.close()).toEqual({ code: 0 });
      expectOnlyJsonRpc(h);
    },
    TEST_MS,
  );

  it(
    "--provider/--model choose an extension provider's model at start-up, as in RPC mode",
    async () => {
      const ws = workspace([]);
      const h = await start(["--no-session", "-e", OFFLINE_PROVIDER, "--provider", "offline", "--model", "echo"], { cwd: ws.dir });
      const session = await h.agent.request("session/new", { cwd: ws.dir, mcpServers: [] });
      expect(session.configOptions?.find((o) => o.id === "model")).toMatchObject({ currentValue: "offline/echo" });
      expect((await prompt(h, session.sessionId, "hello")).stopReason).toBe("end_turn");
      expect(await h.close()).toEqual({ code: 0 });
    },
    TEST_MS,
  );

  it(
    "session/cancel stops a running turn: stop reason cancelled",
    async () => {
      const ws = workspace([{ toolCalls: [{ name: "bash", arguments: { command: "echo started; sleep 60" } }] }, "never reached"]);
      const h = await start(["--model-script", ws.script, "--no-session"], { cwd: ws.dir });
      const session = await h.agent.request("session/new", { cwd: ws.dir, mcpServers: [] });
      const turn = prompt(h, session.sessionId, "run it");
      await h.until(
        () => h.updates.some((n) => n.update.sessionUpdate === "tool_call_update" && JSON.stringify(n.update.content ?? []).includes("started")),
        "bash output",
      );
      await h.agent.notify("session/cancel", { sessionId: session.sessionId });
      expect((await turn).stopReason).toBe("cancelled");
      expect(await h.close()).toEqual({ code: 0 });
    },
    TEST_MS,
  );

  it(
    "with elicitation: each dialog kind answered, declined, cancelled; timeout and AbortSignal withdraw the request once",
    async () => {
      const ws = workspace([]);
      const h = await start(["--no-session", "-e", DEMO], { cwd: ws.dir, capabilities: { elicitation: { form: {} }, session: { notices: {} } } });
      const session = await newSession(h, ws.dir);
      const notices = (): string[] => h.updates.flatMap((n) => (n.update.sessionUpdate === "notice" ? [n.update.title] : []));
      const run = async (command: string): Promise<string> => {
        const before = notices().length;
        expect((await prompt(h, session.sessionId, command)).stopReason).toBe("end_turn");
        const added = notices().slice(before);
        expect(added).toHaveLength(1);
        return added[0] ?? "";
      };
      const forms: acp.CreateElicitationRequest[] = [];
      const answer = (content: Record<string, string | boolean>): void => {
        h.onElicit = (params) => {
          forms.push(params);
          return { action: "accept", content };
        };
      };

      answer({ choice: "green" });
      expect(await run("/demo-select")).toBe("select: green");
      expect(forms.at(-1)).toMatchObject({
        mode: "form",
        sessionId: session.sessionId,
        requestedSchema: { type: "object", properties: { choice: { type: "string", enum: ["red", "green", "blue"] } }, required: ["choice"] },
      });
      answer({ confirmed: true });
      expect(await run("/demo-confirm")).toBe("confirm: true");
      expect(forms.at(-1)?.mode === "form" && forms.at(-1)).toMatchObject({ requestedSchema: { properties: { confirmed: { type: "boolean" } } } });
      answer({ value: "Ada" });
      expect(await run("/demo-input")).toBe("input: Ada");
      answer({ text: "a\nb\nc" });
      expect(await run("/demo-editor")).toBe("editor: 3 lines");
      expect(forms.at(-1)).toMatchObject({ requestedSchema: { properties: { text: { type: "string", default: "line one\nline two" } } } });
      // A choice outside the options is not taken as an answer: the extension gets its cancel value.
      answer({ choice: "purple" });
      expect(await run("/demo-select")).toBe("select: cancelled");

      for (const action of ["decline", "cancel"] as const) {
        h.onElicit = () => ({ action });
        expect(await run("/demo-select")).toBe("select: cancelled");
        expect(await run("/demo-confirm")).toBe("confirm: false");
        expect(await run("/demo-input")).toBe("input: cancelled");
        expect(await run("/demo-editor")).toBe("editor: cancelled");
      }

      // Nobody answers: the dialog's timeout and the extension's AbortSignal withdraw the request.
      h.onElicit = (_params, signal) => untilWithdrawn(signal, { action: "accept", content: { confirmed: true, text: "late" } });
      const before = h.requests.length;
      expect(await run("/demo-timed 300")).toBe("timed confirm: false");
      expect(await run("/demo-timed-editor 300")).toBe("timed editor: no text");
      expect(await run("/demo-abort 300")).toBe("abort: withdrawn by the extension");
      await h.until(() => h.requests.slice(before).every((r) => r.withdrawn), "every request withdrawn");
      expect(h.requests.slice(before).map((r) => [r.method, r.withdrawn])).toEqual([
        ["elicitation/create", true],
        ["elicitation/create", true],
        ["elicitation/create", true],
      ]);
      // Exactly one withdrawal per ended dialog, and none for the ones the client answered.
      const cancels = h.lines.map((l) => JSON.parse(l) as { method?: string; params?: { requestId?: unknown } }).filter((m) => m.method === "$/cancel_request");
      expect(cancels).toHaveLength(3);
      expect(new Set(cancels.map((m) => JSON.stringify(m.params?.requestId))).size).toBe(3);
      expect(await h.close()).toEqual({ code: 0 });
      expectOnlyJsonRpc(h);
    },
    TEST_MS,
  );

  for (const elicitation of [true, false]) {
    it(
      `session/cancel while a dialog waits (${elicitation ? "with" : "without"} elicitation): every open request is withdrawn once, the extension gets its cancel value once, the prompt answers cancelled`,
      async () => {
        // The last kind is a confirm gating the model's bash call (a permission request on that tool call).
        const ws = workspace([{ toolCalls: [{ name: "bash", arguments: { command: "echo never" } }] }, "not reached"]);
        const h = await start(["--no-session", "-e", DEMO, "-e", GATE, "--model-script", ws.script], {
          cwd: ws.dir,
          capabilities: elicitation ? { elicitation: { form: {} } } : {},
        });
        const session = await newSession(h, ws.dir);
        // Nobody answers: only the agent can end these requests.
        h.onElicit = (_params, signal) =>
          untilWithdrawn(signal, { action: "accept", content: { choice: "red", confirmed: true, value: "late", text: "late" } });
        h.onPermission = (params, signal) => untilWithdrawn(signal, { outcome: { outcome: "selected", optionId: params.options[0]?.optionId ?? "" } });
        const cases: [string, string | undefined][] = [
          ["/demo-select", "select: cancelled"],
          ["/demo-confirm", "confirm: false"],
          ["/demo-input", "input: cancelled"],
          ["/demo-editor", "editor: cancelled"],
          ["run the command", undefined],
        ];
        for (const [text, report] of cases) {
          // Without elicitation a text dialog is cancelled at once: there is nothing to cancel.
          const asks = elicitation || !/input|editor/.test(text);
          const before = h.requests.length;
          const turn = prompt(h, session.sessionId, text);
          if (!asks) {
            expect((await turn).stopReason).toBe("end_turn");
            continue;
          }
          await h.until(() => h.requests.length > before, `the request for ${text}`);
          await h.agent.notify("session/cancel", { sessionId: session.sessionId });
          expect((await turn).stopReason, text).toBe("cancelled");
          await h.until(() => h.requests.slice(before).every((r) => r.withdrawn), `the request for ${text} withdrawn`);
          expect(h.requests.slice(before)).toHaveLength(1);
          if (report) expect(agentText(h, session.sessionId).split(`[${report}]`).length - 1, report).toBe(1);
        }
        // The gated bash call never ran; the dialog's own tool call card (no elicitation) is closed.
        const calls = h.updates.flatMap((n) => (n.update.sessionUpdate === "tool_call_update" ? [n.update] : []));
        expect(calls.some((u) => JSON.stringify(u.content ?? []).includes("never\n"))).toBe(false);
        const cards = h.updates.flatMap((n) =>
          n.update.sessionUpdate === "tool_call" && n.update.toolCallId.startsWith("dialog-") ? [n.update.toolCallId] : [],
        );
        expect(cards).toHaveLength(elicitation ? 0 : 2);
        for (const id of cards) expect(calls.some((u) => u.toolCallId === id && u.status === "failed")).toBe(true);
        const cancels = h.lines
          .map((l) => JSON.parse(l) as { method?: string; params?: { requestId?: unknown } })
          .filter((m) => m.method === "$/cancel_request");
        expect(new Set(cancels.map((m) => JSON.stringify(m.params?.requestId))).size).toBe(cancels.length);
        expect(cancels).toHaveLength(h.requests.length);
        // The session goes on after the cancels.
        h.onElicit = () => ({ action: "accept", content: { choice: "blue" } });
        h.onPermission = (params) => ({ outcome: { outcome: "selected", optionId: params.options[2]?.optionId ?? "" } });
        expect((await prompt(h, session.sessionId, "/demo-select")).stopReason).toBe("end_turn");
        expect(agentText(h, session.sessionId)).toContain("[select: blue]");
        expect(await h.close()).toEqual({ code: 0 });
        expectOnlyJsonRpc(h);
      },
      TEST_MS,
    );
  }

  it(
    "a client that goes away mid-turn, a dialog open: parley exits 0, and the session file loads in a new parley with the turn in it",
    async () => {
      // The model's bash call waits on a gating confirm (a permission request nobody answers).
      const ws = workspace([{ text: "Let me run it.", toolCalls: [{ name: "bash", arguments: { command: "echo gated" } }] }, "after"]);
      const h = await start(["--model-script", ws.script, "--session-dir", ws.sessions, "-e", GATE], { cwd: ws.dir });
      const session = await newSession(h, ws.dir);
      h.onPermission = (_params, signal) => untilWithdrawn(signal, { outcome: { outcome: "cancelled" } });
      void prompt(h, session.sessionId, "the turn left behind").catch(() => undefined);
      await h.until(() => h.requests.length > 0, "the gating permission request");
      const exited = new Promise<number | null>((resolve) => h.child.once("exit", (code) => resolve(code)));
      h.child.stdin.end();
      h.child.stdout.destroy();
      expect(await exited, h.stderr()).toBe(0);

      const again = await start(["--model-script", ws.script, "--session-dir", ws.sessions], { cwd: ws.dir });
      const listed = await again.agent.request("session/list", {});
      expect(listed.sessions.map((s) => s.sessionId)).toEqual([session.sessionId]);
      await again.agent.request("session/load", { sessionId: session.sessionId, cwd: ws.dir, mcpServers: [] });
      const replayed = again.updates.filter((n) => n.sessionId === session.sessionId).map((n) => n.update);
      expect(replayed.some((u) => u.sessionUpdate === "user_message_chunk" && u.content.type === "text" && u.content.text === "the turn left behind")).toBe(
        true,
      );
      expect(replayed.some((u) => u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" && u.content.text.includes("Let me run it."))).toBe(
        true,
      );
      // The gated command never ran.
      expect(JSON.stringify(replayed)).not.toContain("gated\\n");
      expect(await again.close()).toEqual({ code: 0 });
    },
    TEST_MS,
  );

  it(
    "a prompt's blocks become one message: each reference (resource_link, blob resource) its own word, embedded text as context",
    async () => {
      const ws = workspace(["ok", "ok"]);
      const h = await start(["--model-script", ws.script, "--session-dir", ws.sessions], { cwd: ws.dir });
      const session = await newSession(h, ws.dir);
      const file = join(ws.dir, "my notes.txt");
      const blocks: acp.ContentBlock[] = [
        { type: "text", text: "compare" },
        { type: "resource_link", uri: `file://${encodeURI(file)}`, name: "my notes.txt" },
        { type: "text", text: "with" },
        { type: "resource", resource: { uri: "https://example.com/a.png", blob: "AAAA", mimeType: "image/png" } },
        { type: "text", text: "and " },
        { type: "resource_link", uri: "https://example.com/spec", name: "spec" },
        { type: "text", text: ", using" },
        { type: "resource", resource: { uri: "file:///ctx.md", text: "CONTEXT" } },
        { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      ];
      /** The user's text chunks the session's replay (session/load) sends, and where the replay began. */
      const replayedUserText = async (): Promise<{ from: number; texts: string[] }> => {
        const from = h.updates.length;
        await h.agent.request("session/load", { sessionId: session.sessionId, cwd: ws.dir, mcpServers: [] });
        const texts = h.updates
          .slice(from)
          .flatMap((n) => (n.update.sessionUpdate === "user_message_chunk" && n.update.content.type === "text" ? [n.update.content.text] : []));
        return { from, texts };
      };
      expect((await h.agent.request("session/prompt", { sessionId: session.sessionId, prompt: blocks })).stopReason).toBe("end_turn");
      const { from, texts } = await replayedUserText();
      const user = texts.join("");
      expect(user).toBe(
        `compare @${file} with @https://example.com/a.png and @https://example.com/spec , using\n<context ref="file:///ctx.md">\nCONTEXT\n</context>`,
      );
      // The image is part of the same user message, kept as an image.
      expect(
        h.updates
          .slice(from)
          .some((n) => n.update.sessionUpdate === "user_message_chunk" && n.update.content.type === "image" && n.update.content.data === "iVBORw0KGgo="),
      ).toBe(true);
      // File URIs that name no local path (a bad %-escape, another host) stay URIs: no internal error.
      const odd: acp.ContentBlock[] = [
        { type: "resource_link", uri: "file:///tmp/100%zz.txt", name: "odd" },
        { type: "resource_link", uri: "file://fileserver/share/x.txt", name: "remote" },
        { type: "resource_link", uri: "file://localhost/tmp/local.txt", name: "local" },
      ];
      expect((await h.agent.request("session/prompt", { sessionId: session.sessionId, prompt: odd })).stopReason).toBe("end_turn");
      const second = (await replayedUserText()).texts;
      expect(second.at(-1)).toBe("@file:///tmp/100%zz.txt @file://fileserver/share/x.txt @/tmp/local.txt");
      expect(await h.close()).toEqual({ code: 0 });
    },
    TEST_MS,
  );

  it(
    "without elicitation: select and confirm become permission requests, input and editor cancel at once with one notice",
    async () => {
      const ws = workspace([]);
      const h = await start(["--no-session", "-e", DEMO], { cwd: ws.dir });
      const session = await newSession(h, ws.dir);
      const run = async (command: string, expected: string): Promise<void> => {
        expect((await prompt(h, session.sessionId, command)).stopReason).toBe("end_turn");
        expect(agentText(h)).toContain(`[${expected}]`);
      };
      const asked: acp.RequestPermissionRequest[] = [];
      const choose = (pick: (p: acp.RequestPermissionRequest) => acp.RequestPermissionOutcome): void => {
        h.onPermission = (params) => {
          asked.push(params);
          return { outcome: pick(params) };
        };
      };

      choose((p) => ({ outcome: "selected", optionId: p.options.find((o) => o.name === "green")?.optionId ?? "" }));
      await run("/demo-select", "select: green");
      expect(asked.at(-1)?.options.map((o) => o.name)).toEqual(["red", "green", "blue"]);
      // The dialog gets a card of its own, which closes when answered.
      const card = asked.at(-1)?.toolCall.toolCallId ?? "";
      expect(h.updates.some((n) => n.update.sessionUpdate === "tool_call" && n.update.toolCallId === card && n.update.title === "Pick a colour")).toBe(true);
      expect(h.updates.some((n) => n.update.sessionUpdate === "tool_call_update" && n.update.toolCallId === card && n.update.status === "completed")).toBe(
        true,
      );

      choose(() => ({ outcome: "selected", optionId: "yes" }));
      await run("/demo-confirm", "confirm: true");
      expect(asked.at(-1)?.options.map((o) => o.kind)).toEqual(["allow_once", "reject_once"]);
      choose(() => ({ outcome: "selected", optionId: "no" }));
      await run("/demo-confirm", "confirm: false");
      choose(() => ({ outcome: "cancelled" }));
      await run("/demo-select", "select: cancelled");

      const permissionsBefore = asked.length;
      await run("/demo-input", "input: cancelled");
      await run("/demo-editor", "editor: cancelled");
      expect(asked.length).toBe(permissionsBefore);
      const explained = agentText(h).match(/cannot show/g) ?? [];
      expect(explained).toHaveLength(1);

      // Nobody answers a timed confirm: the permission request is withdrawn at the timeout.
      h.onPermission = (_params, signal) => untilWithdrawn(signal, { outcome: { outcome: "selected", optionId: "yes" } });
      const before = h.requests.length;
      await run("/demo-timed 300", "timed confirm: false");
      await h.until(() => h.requests[before]?.withdrawn === true, "the timed request withdrawn");
      expect(h.requests.slice(before).map((r) => r.method)).toEqual(["session/request_permission"]);
      // The client goes away while a dialog waits: parley withdraws it and exits 0.
      const waiting = prompt(h, session.sessionId, "/demo-confirm").catch(() => undefined);
      await h.until(() => h.requests.length === before + 2, "the last dialog");
      expect(await h.close()).toEqual({ code: 0 });
      await waiting;
    },
    TEST_MS,
  );

  it(
    "a confirm from a tool_call handler is a permission request on that tool call, with or without elicitation",
    async () => {
      for (const capabilities of [{ elicitation: { form: {} } }, {}]) {
        const ws = workspace([
          { toolCalls: [{ name: "bash", arguments: { command: "echo allowed" } }] },
          { toolCalls: [{ name: "bash", arguments: { command: "echo denied" } }] },
          "ok",
        ]);
        const h = await start(["--no-session", "--model-script", ws.script, "-e", GATE], { cwd: ws.dir, capabilities });
        const session = await h.agent.request("session/new", { cwd: ws.dir, mcpServers: [] });
        const asked: acp.RequestPermissionRequest[] = [];
        h.onPermission = (params) => {
          asked.push(params);
          return { outcome: { outcome: "selected", optionId: asked.length === 1 ? "yes" : "no" } };
        };
        h.onElicit = () => {
          throw new Error("a gating confirm must not be an elicitation");
        };
        expect((await prompt(h, session.sessionId, "go")).stopReason).toBe("end_turn");
        const calls = h.updates.flatMap((n) => (n.update.sessionUpdate === "tool_call" ? [n.update.toolCallId] : []));
        expect(asked.map((p) => p.toolCall.toolCallId)).toEqual(calls);
        const ends = h.updates.flatMap((n) =>
          n.update.sessionUpdate === "tool_call_update" && n.update.status !== "in_progress" ? [[n.update.status, JSON.stringify(n.update.content)]] : [],
        );
        expect(ends[0]?.[0]).toBe("completed");
        expect(ends[0]?.[1]).toContain("allowed");
        expect(ends[1]?.[0]).toBe("failed");
        expect(ends[1]?.[1]).toContain("the user said no");
        expect(await h.close()).toEqual({ code: 0 });
      }
    },
    TEST_MS,
  );

  it(
    "session/list names stored sessions; session/load replays the conversation before answering, and prompting goes on",
    async () => {
      const ws = workspace([...TOOLS_SCRIPT, "Second answer."]);
      const home = mkdtempSync(join(tmpdir(), "parley-acp-home-"));
      const first = await start(["--model-script", ws.script, "--session-dir", ws.sessions], { cwd: ws.dir, home });
      const made = await first.agent.request("session/new", { cwd: ws.dir, mcpServers: [] });
      await prompt(first, made.sessionId, "make notes");
      // A session never prompted is on disk too (a client may load it by id), untitled.
      const empty = await first.agent.request("session/new", { cwd: ws.dir, mcpServers: [] });
      expect(await first.close()).toEqual({ code: 0 });

      const h = await start(["--model-script", ws.script, "--session-dir", ws.sessions], { cwd: ws.dir, home });
      const listed = await h.agent.request("session/list", { cwd: ws.dir });
      expect(listed.sessions).toHaveLength(2);
      expect(listed.sessions).toContainEqual({ sessionId: made.sessionId, cwd: ws.dir, title: "make notes", updatedAt: expect.any(String) });
      expect(listed.sessions).toContainEqual({ sessionId: empty.sessionId, cwd: ws.dir, updatedAt: expect.any(String) });

      let replayedBeforeResponse = 0;
      const loading = h.agent.request("session/load", { sessionId: made.sessionId, cwd: ws.dir, mcpServers: [] }).then((r) => {
        replayedBeforeResponse = h.updates.length;
        return r;
      });
      const loaded = await loading;
      expect(loaded.modes?.currentModeId).toBe("off");
      const replay = h.updates.slice(0, replayedBeforeResponse).map((n) => n.update);
      expect(replay[0]).toEqual({ sessionUpdate: "user_message_chunk", content: { type: "text", text: "make notes" } });
      expect(replay.filter((u) => u.sessionUpdate === "tool_call").map((u) => u.sessionUpdate === "tool_call" && u.title)).toEqual([
        "Write notes.txt",
        "Edit notes.txt",
        "`echo from-bash; cat notes.txt`",
        "Read notes.txt",
      ]);
      expect(replay.filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed")).toHaveLength(4);
      expect(replay.flatMap((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? [u.content.text] : [])).join("")).toContain(
        "All done.",
      );

      const from = h.updates.length;
      expect((await prompt(h, made.sessionId, "and again")).stopReason).toBe("end_turn");
      expect(h.updates.slice(from).some((n) => n.sessionId === made.sessionId && n.update.sessionUpdate === "agent_message_chunk")).toBe(true);
      await expect(h.agent.request("session/load", { sessionId: "no-such-session", cwd: ws.dir, mcpServers: [] })).rejects.toThrow();
      expect(await h.close()).toEqual({ code: 0 });
      expectOnlyJsonRpc(h);
    },
    TEST_MS,
  );

  it(
    "session/list and session/load open a session file pi 0.73.1 wrote (its conversation replayed); a prompt appends to it",
    async () => {
      const ws = workspace([]);
      const home = mkdtempSync(join(tmpdir(), "parley-acp-home-"));
      const env = { HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent") };
      const model = ["-e", OFFLINE_PROVIDER, "--provider", "offline", "--model", "echo"];
      // pi writes the session, in its own place for this folder.
      const pi = spawnAgent(PI_BIN, ["--mode", "rpc", ...model], { cwd: ws.dir, env });
      pi.send({ type: "prompt", message: "please use the bash tool", id: "p1" });
      await pi.waitFor((r) => r.type === "agent_end");
      pi.closeInput();
      expect((await pi.exited).code).toBe(0);
      const folder = join(home, ".pi", "agent", "sessions", `--${ws.dir.replace(/^\//, "").replace(/\//g, "-")}--`);
      const [name] = readdirSync(folder);
      const file = join(folder, name ?? "");
      const written = readFileSync(file, "utf8");
      const header = JSON.parse(written.split("\n")[0] ?? "{}") as { type?: string; id?: string };
      expect(header.type).toBe("session");
      const piSessionId = String(header.id);

      const h = await start(model, { cwd: ws.dir, home });
      const listed = await h.agent.request("session/list", { cwd: ws.dir });
      expect(listed.sessions).toEqual([{ sessionId: piSessionId, cwd: ws.dir, title: "please use the bash tool", updatedAt: expect.any(String) }]);
      await h.agent.request("session/load", { sessionId: piSessionId, cwd: ws.dir, mcpServers: [] });
      const replay = h.updates.map((n) => n.update);
      expect(replay[0]).toEqual({ sessionUpdate: "user_message_chunk", content: { type: "text", text: "please use the bash tool" } });
      expect(replay.find((u) => u.sessionUpdate === "tool_call")).toMatchObject({ title: "`echo tool-ok`", kind: "execute" });
      expect(replay.some((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed")).toBe(true);
      expect(agentText(h, piSessionId)).toContain("tool said: tool-ok");

      expect((await prompt(h, piSessionId, "Reply with just: again")).stopReason).toBe("end_turn");
      expect(agentText(h, piSessionId)).toContain("again");
      expect(await h.close()).toEqual({ code: 0 });
      // Appended to pi's file, which keeps every line pi wrote.
      const after = readFileSync(file, "utf8");
      expect(after.startsWith(written)).toBe(true);
      expect(after.slice(written.length)).toContain("Reply with just: again");
      expectOnlyJsonRpc(h);
    },
    TEST_MS,
  );

  it(
    "a dialog opened while the session starts belongs to that session and waits for the user; fire-and-forget UI maps to updates",
    async () => {
      const ws = workspace([]);
      const h = await start(["--no-session", "--name", "my session", "-e", STARTUP_DIALOG, "-e", DEMO], {
        cwd: ws.dir,
        capabilities: { elicitation: { form: {} } },
      });
      let answer!: (response: acp.CreateElicitationResponse) => void;
      h.onElicit = () => new Promise((resolve) => (answer = resolve));
      const session = await h.agent.request("session/new", { cwd: ws.dir, mcpServers: [] });
      // Asked only after the response named the session, and scoped to it.
      await h.until(() => h.requests.length === 1, "the startup dialog");
      expect(h.requests[0]?.params).toMatchObject({ sessionId: session.sessionId, message: "Trust this folder?\n\nstartup question" });
      const meta = (): unknown[] => h.updates.flatMap((n) => (n.update.sessionUpdate === "session_info_update" && n.update._meta ? [n.update._meta] : []));
      // A prompt waits for session_start, as RPC commands wait for start-up; nothing answers for the user.
      let prompted = false;
      const renamed = prompt(h, session.sessionId, "/demo-title renamed").then((r) => {
        prompted = true;
        return r;
      });
      const titles = (): string[] =>
        h.updates.flatMap((n) => (n.update.sessionUpdate === "session_info_update" && typeof n.update.title === "string" ? [n.update.title] : []));
      // Nothing may happen while the question waits: watch a while, then check nothing did.
      await quietFor(1000);
      expect(prompted).toBe(false);
      expect(h.requests[0]?.withdrawn).toBe(false);
      expect(titles()).toEqual(["my session"]);
      answer({ action: "accept", content: { confirmed: true } });
      expect((await renamed).stopReason).toBe("end_turn");
      expect(JSON.stringify(meta().at(-1))).toContain('"trust":"trusted"');
      // session_start handlers run in turn (the demo's after the answered question), then the prompt.
      expect(titles()).toEqual(["my session", "parley demo (startup)", "renamed"]);
      await prompt(h, session.sessionId, "/demo-widgets");
      await prompt(h, session.sessionId, "/demo-prefill hello there");
      expect(meta().at(-1)).toEqual({
        parley: {
          ui: {
            statuses: { "rpc-demo": "ready", trust: "trusted" },
            widgets: {
              "rpc-demo": { lines: ["parley RPC demo", "try /demo-select, /demo-confirm, /demo-input, /demo-editor"], placement: "aboveEditor" },
              "demo-above": { lines: ["above the editor"], placement: "aboveEditor" },
              "demo-below": { lines: ["below the editor", "(second line)"], placement: "belowEditor" },
            },
            editorText: "hello there",
          },
        },
      });
      // notify without the notices capability: an agent message per note.
      await prompt(h, session.sessionId, "/demo-notify");
      expect(agentText(h)).toContain("[an info note]");
      expect(agentText(h)).toContain("[warning: a warning]");
      expect(agentText(h)).toContain("[error: an error]");

      // The model as a config option.
      const set = await h.agent.request("session/set_config_option", { sessionId: session.sessionId, configId: "model", value: "parley/offline" });
      expect(set.configOptions.find((o) => o.id === "model")?.currentValue).toBe("parley/offline");
      await expect(h.agent.request("session/set_config_option", { sessionId: session.sessionId, configId: "model", value: "nope/nothing" })).rejects.toThrow(
        /no model/,
      );
      expect(await h.close()).toEqual({ code: 0 });
      expectOnlyJsonRpc(h);
    },
    TEST_MS,
  );

  it(
    "bad input gets a JSON-RPC error, never a crash",
    async () => {
      const ws = workspace([]);
      const h = await start(["--no-session"], { cwd: ws.dir });
      h.child.stdin.write("not json\n[1,2]\n");
      await h.until(() => h.lines.filter((l) => l.includes('"error"')).length >= 2, "two errors");
      const errors = h.lines.map((l) => JSON.parse(l) as { error?: { code: number } }).flatMap((r) => (r.error ? [r.error.code] : []));
      expect(errors).toEqual([-32700, -32600]);
      const session = await h.agent.request("session/new", { cwd: ws.dir, mcpServers: [] });
      expect(session.sessionId).toMatch(/./);
      // A content type initialize did not advertise (audio) is refused, not dropped from the prompt.
      const audio = h.agent.request("session/prompt", { sessionId: session.sessionId, prompt: [{ type: "audio", data: "AAAA", mimeType: "audio/wav" }] });
      await expect(audio).rejects.toMatchObject({ code: -32602 });
      // A prompt for a session that does not exist: resource not found.
      await expect(h.agent.request("session/prompt", { sessionId: "no-such-session", prompt: [{ type: "text", text: "hi" }] })).rejects.toMatchObject({
        code: -32002,
      });
      expect(await h.close()).toEqual({ code: 0 });
    },
    TEST_MS,
  );
});
