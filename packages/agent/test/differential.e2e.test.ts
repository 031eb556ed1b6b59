/**
 * Differential test: the same scenarios, with the same extension files (pi 1.6.0's examples), against
 * parley and the reference pi 1.6.0 (the `pi-newest` devDependency, `pi --mode rpc` on the Node
 * running the tests). Each scenario is a list of steps; a step sends one input and
 * waits for its terminal record; the records produced in each step are compared, in order, after
 * normalisation.
 *
 * Always normalised (helpers/transcript.ts): the uuid `id` of extension_ui_request records
 * (→ <ui-1>, <ui-2>… by order of first appearance, also inside parley's error texts), `sessionId`,
 * and the private HOME/cwd of each run. Everything else must be equal, except the places listed in
 * DIFFERENCES below, each applied only to the steps that name it, by its own small normaliser that
 * first asserts that pi and parley each do exactly what the table says. A parley-only record
 * (extension_ui_dismissed, extension_ui_error, the get_ui_state command) is accounted for by one of
 * those normalisers or it fails the comparison.
 *
 * DIFF_DUMP=1 prints both normalised transcripts of every step.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, spawnParley, spawnPiNewest, type AgentProcess, type Rec } from "./helpers/spawn.js";
import { EXIT, UiIds, collectStep, matchesShape, normaliseRecord, runInSlots, waitUntilServing, type Terminal } from "./helpers/transcript.js";

// ------------------------------------------------------------------------------------------------
// The documented differences: where parley deliberately differs from pi 1.6.0 (README "What parley
// adds", docs/compatibility.md). Each key has exactly one normaliser in NORMALISERS and is used by at least one step.
// ------------------------------------------------------------------------------------------------

interface Difference {
  key: string;
  where: string;
  pi: string;
  parley: string;
  why: string;
}

const DIFFERENCES = [
  {
    key: "get-state-model",
    where: "get_state → data.model",
    pi: "a placeholder model object {id:'unknown', name:'unknown', api:'unknown', …, contextWindow:0}",
    parley: "the built-in offline demo model {provider:'parley', id:'offline', …} and `offlineModel: true`",
    why: "with no provider and no key, parley answers with a real (offline) model instead of a placeholder that cannot answer",
  },
  {
    key: "get-ui-state",
    where: "get_ui_state command",
    pi: "`Unknown command: get_ui_state` (without the id)",
    parley: "success with {statuses, widgets, …, pendingDialogs}",
    why: "parley addition (README 'What parley adds'): state fetch for late-attaching clients",
  },
  {
    key: "blank-line",
    where: "empty or whitespace-only input line",
    pi: "parse error `Failed to parse command: Unexpected end of JSON input`",
    parley: "skips the line silently",
    why: "a blank line is framing noise, not a command; nothing to answer",
  },
  {
    key: "non-object-line",
    where: "input line that is JSON but not an object (`[1,2]`, `42`)",
    pi: "`{type:'response', success:false, error:'Unknown command: undefined'}` (no `command` field)",
    parley: "`command:'parse'` error saying a JSON object with a type was expected, naming what it got",
    why: "clear errors for bad input; every response carries `command`",
  },
  {
    key: "command-without-type",
    where: 'object line without `type` (`{"id":"nt"}`)',
    pi: "`Unknown command: undefined`, no `command` (the id echoed)",
    parley: "`command:'parse'` error naming \"type\", id echoed",
    why: "clear errors for bad input; every response carries `command`",
  },
  {
    key: "null-line",
    where: "input line `null`",
    pi: "crashes (TypeError reading 'id' of null), exit 1",
    parley: "`parse` error response naming null, keeps running",
    why: "one bad line must not kill the session",
  },
  {
    key: "set-thinking-level-invalid",
    where: "set_thinking_level with level: 42",
    pi: "success (the value is clamped silently)",
    parley: 'error naming "level" and the allowed values',
    why: "runtime validation of every command (clear errors for bad input)",
  },
  {
    key: "prompt-without-message",
    where: "prompt without `message`",
    pi: "error with an internal JS text (`Cannot read properties of undefined (reading 'startsWith')`)",
    parley: 'error naming "message"',
    why: "clear errors for bad input",
  },
  {
    key: "confirm-answered-with-value",
    where: "confirm dialog answered with {value:'x'}",
    pi: "resolves the confirm as false at once (extension: 'Cancelled or timed out')",
    parley: "extension_ui_error invalid_response, pending:true; the dialog stays open",
    why: "a wrong-shaped answer gets an error, not a silent misreading (README 'What parley adds')",
  },
  {
    key: "confirm-non-boolean",
    where: "confirm dialog answered with {confirmed:'yes'}",
    pi: "passes 'yes' through; the extension treats it as truthy ('Confirmed by user!')",
    parley: "extension_ui_error invalid_response (not a boolean), pending:true",
    why: "the extension is promised a boolean",
  },
  {
    key: "settled-after-refusal",
    where: "the valid follow-up answer to a confirm parley refused ({cancelled:true} / {confirmed:true})",
    pi: "already settled it, so drops the follow-up silently",
    parley: "settles it now, with the same extension outcome pi produced one step earlier",
    why: "consequence of the two rows above; compared: pi's early outcome == parley's outcome here",
  },
  {
    key: "select-non-string",
    where: "select dialog answered with {value:42}",
    pi: "hands 42 to the extension ('Selected: 42')",
    parley: "extension_ui_error invalid_response (not a string), pending:true",
    why: "the extension is promised one of its option strings",
  },
  {
    key: "select-outside-options",
    where: "select dialog answered with {value:'Option Z'} (not an option)",
    pi: "hands 'Option Z' to the extension ('Selected: Option Z')",
    parley: "extension_ui_error invalid_response (not one of its options), pending:true",
    why: "the extension is promised one of its option strings",
  },
  {
    key: "select-settled-after-refusal",
    where: "{cancelled:true} after parley refused a select answer",
    pi: "already settled it with the bad value, drops the cancel silently",
    parley: "settles it as cancelled ('Selection cancelled or timed out')",
    why: "consequence of the two rows above (pi's outcome has no valid-answer equivalent)",
  },
  {
    key: "late-answer",
    where: "a second answer to an already answered dialog",
    pi: "drops it silently",
    parley: "extension_ui_error already_resolved, pending:false",
    why: "no silent drops (README 'What parley adds')",
  },
  {
    key: "unknown-dialog-id",
    where: "extension_ui_response whose id matches no dialog",
    pi: "drops it silently",
    parley: "extension_ui_error unknown_id, pending:false",
    why: "no silent drops",
  },
  {
    key: "response-without-id",
    where: "extension_ui_response without an id",
    pi: "drops it silently",
    parley: "extension_ui_error invalid_response, pending:false",
    why: "no silent drops",
  },
  {
    key: "dismissed-on-timeout",
    where: "dialog whose `timeout` expires",
    pi: "resolves it (undefined/false) silently",
    parley: "the same, plus extension_ui_dismissed {id, method, reason:'timeout'} before the extension continues",
    why: "a dialog that ends on the agent side is announced so a client can close it",
  },
  {
    key: "dismissed-on-abort",
    where: "dialog whose AbortSignal fires",
    pi: "resolves it silently",
    parley: "the same, plus extension_ui_dismissed {reason:'aborted'}",
    why: "as above",
  },
  {
    key: "editor-timeout-signal",
    where: "ctx.ui.editor(title, prefill, {timeout} | {signal})",
    pi: "ignores both: the request has no `timeout`, the dialog stays open",
    parley: "honours both: request carries `timeout`; on expiry/abort extension_ui_dismissed and the extension gets undefined",
    why: "the seed's dialog options apply to every dialog method; editor is a dialog",
  },
  {
    key: "editor-late-answer",
    where: "an answer to the editor above after its timeout/abort",
    pi: "delivers it to the extension (the editor was still open)",
    parley: "extension_ui_error already_resolved (it was dismissed)",
    why: "consequence of the row above",
  },
  {
    key: "eof-pending-dialog",
    where: "stdin EOF while an input dialog is pending",
    pi: "runs session_shutdown and exits 0 without settling the dialog",
    parley: "dismisses it (reason 'shutdown'), the extension sees cancel ('Input cancelled'), the prompt is answered, then session_shutdown, exit 0",
    why: "README: on EOF pending dialogs resolve as cancelled, extensions get their shutdown event",
  },
] as const satisfies readonly Difference[];

type DiffKey = (typeof DIFFERENCES)[number]["key"];
type Side = "pi" | "parley";

interface NormaliserContext {
  side: Side;
  /** The command this step sent (placeholders not yet resolved), if it was JSON. */
  sent: Record<string, unknown> | undefined;
  /** Records one side produced a step earlier than the other (see settled-after-refusal). */
  carry: Rec[];
  stderr: () => string;
  running: () => boolean;
}
type StepNormaliser = (records: Rec[], ctx: NormaliserContext) => Rec[];
interface Normaliser {
  pi: StepNormaliser;
  parley: StepNormaliser;
}

// --- building blocks for the normalisers ---

const notify = (message: unknown): object => ({ type: "extension_ui_request", method: "notify", message });
const uiRequest = (method: string, fields: object = {}): object => ({ type: "extension_ui_request", method, ...fields });
const response = (command: string, fields: object = {}): object => ({ type: "response", command, ...fields });
const uiError = (code: string, pending: boolean): object => ({ type: "extension_ui_error", code, pending });
const marker = (key: DiffKey): Rec => ({ type: "(documented difference)", key });
const same: StepNormaliser = (records) => records;

/** Asserts the step produced exactly these records (each matched as a subset) and returns them. */
function expectSeq(records: Rec[], shapes: object[], what: string): Rec[] {
  expect(records, `${what}: ${JSON.stringify(records)}`).toHaveLength(shapes.length);
  shapes.forEach((shape, i) => expect(records[i], what).toMatchObject(shape));
  return records;
}

/** Removes the one parley-added record matching `shape` (it must be there) and returns the rest. */
function consume(records: Rec[], shape: object, what: string): Rec[] {
  const i = records.findIndex((r) => matchesShape(r, shape));
  expect(i, `${what}: expected ${JSON.stringify(shape)} in ${JSON.stringify(records)}`).toBeGreaterThanOrEqual(0);
  return records.filter((_, j) => j !== i);
}

/** Both sides did what the table says: the step compares as one marker. */
const bothMarked =
  (key: DiffKey, shapes: object[]): StepNormaliser =>
  (records, { side }) => {
    expectSeq(records, shapes, `${key} (${side})`);
    return [marker(key)];
  };

/** parley answers with an extension_ui_error where pi is silent. */
const parleyErrorPiSilent = (key: DiffKey, code: string, pending: boolean, id?: string): Normaliser => ({
  pi: (records) => expectSeq(records, [], `${key} (pi)`),
  parley: (records) => expectSeq(consume(records, { ...uiError(code, pending), ...(id ? { id } : {}) }, key), [], `${key} (parley)`),
});

/** pi settles the dialog at once with `piOutcome`; parley refuses (dialog stays pending). */
const refusedAnswer = (key: DiffKey, piOutcome: object[], comparable: boolean): Normaliser => ({
  pi: (records, ctx) => {
    expectSeq(records, piOutcome, `${key} (pi)`);
    if (!comparable) return [marker(key)];
    ctx.carry.push(...records);
    return [];
  },
  parley: (records) => {
    const rest = expectSeq(consume(records, uiError("invalid_response", true), key), [], `${key} (parley)`);
    return comparable ? rest : [marker(key)];
  },
});

const PI_PLACEHOLDER_MODEL = {
  id: "unknown",
  name: "unknown",
  api: "unknown",
  provider: "unknown",
  baseUrl: "",
  reasoning: false,
  input: [],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 0,
  maxTokens: 0,
};

const withModel =
  (expected: unknown, extra: Record<string, unknown> = {}): StepNormaliser =>
  (records) =>
    records.map((r) => {
      if (r.type !== "response" || r["command"] !== "get_state") return r;
      const { offlineModel, ...data } = r["data"] as Record<string, unknown>;
      expect(data["model"], "get_state data.model").toEqual(expected);
      expect(offlineModel, "get_state data.offlineModel").toEqual(extra["offlineModel"]);
      return { ...r, data: { ...data, model: "<model>" } };
    });

const NORMALISERS: Record<DiffKey, Normaliser> = {
  "get-state-model": {
    pi: withModel(PI_PLACEHOLDER_MODEL),
    parley: withModel(expect.objectContaining({ provider: "parley", id: "offline", api: "parley-offline" }), { offlineModel: true }),
  },
  "get-ui-state": {
    pi: bothMarked("get-ui-state", [response("get_ui_state", { success: false, error: "Unknown command: get_ui_state" })]),
    parley: (records, ctx) => {
      const [r] = expectSeq(records, [response("get_ui_state", { id: ctx.sent?.["id"], success: true })], "get_ui_state (parley)");
      expect(r!["data"]).toMatchObject({ statuses: expect.any(Object), widgets: expect.any(Object), pendingDialogs: [] });
      return [marker("get-ui-state")];
    },
  },
  "blank-line": {
    pi: (records) => {
      expectSeq(records, [response("parse", { success: false, error: "Failed to parse command: Unexpected end of JSON input" })], "blank line (pi)");
      return [];
    },
    parley: (records) => expectSeq(records, [], "blank line (parley)"),
  },
  "non-object-line": {
    pi: (records) => {
      const [r] = expectSeq(records, [{ type: "response", success: false, error: "Unknown command: undefined" }], "non-object (pi)");
      expect(r).not.toHaveProperty("command");
      return [marker("non-object-line")];
    },
    parley: bothMarked("non-object-line", [
      response("parse", { success: false, error: expect.stringMatching(/^Expected a JSON object with a "type" field, got (an array|a number)$/) }),
    ]),
  },
  "command-without-type": {
    pi: (records) => {
      const [r] = expectSeq(records, [{ type: "response", id: "nt", success: false, error: "Unknown command: undefined" }], "no type (pi)");
      expect(r).not.toHaveProperty("command");
      return [marker("command-without-type")];
    },
    parley: bothMarked("command-without-type", [response("parse", { id: "nt", success: false, error: expect.stringContaining('"type" is required') })]),
  },
  "null-line": {
    pi: (records, ctx) => {
      expectSeq(records, [{ type: EXIT, code: 1 }], "null line (pi)");
      expect(ctx.stderr()).toContain("TypeError: Cannot read properties of null (reading 'id')");
      return [marker("null-line")];
    },
    parley: (records, ctx) => {
      expectSeq(records, [response("parse", { success: false, error: expect.stringContaining("got null") })], "null line (parley)");
      expect(ctx.running(), "parley keeps running after a null line").toBe(true);
      return [marker("null-line")];
    },
  },
  "set-thinking-level-invalid": {
    pi: bothMarked("set-thinking-level-invalid", [response("set_thinking_level", { id: "t42", success: true })]),
    parley: bothMarked("set-thinking-level-invalid", [
      response("set_thinking_level", { id: "t42", success: false, error: expect.stringContaining('"level"') }),
    ]),
  },
  "prompt-without-message": {
    pi: bothMarked("prompt-without-message", [
      response("prompt", { id: "nomsg", success: false, error: "Cannot read properties of undefined (reading 'startsWith')" }),
    ]),
    parley: bothMarked("prompt-without-message", [response("prompt", { id: "nomsg", success: false, error: expect.stringContaining('"message"') })]),
  },
  "confirm-answered-with-value": refusedAnswer("confirm-answered-with-value", [notify("Cancelled or timed out"), response("prompt", { success: true })], true),
  "confirm-non-boolean": refusedAnswer("confirm-non-boolean", [notify("Confirmed by user!"), response("prompt", { success: true })], true),
  "settled-after-refusal": {
    pi: (records, ctx) => {
      expectSeq(records, [], "follow-up answer (pi drops it)");
      expect(ctx.carry.length, "pi settled the dialog one step earlier").toBeGreaterThan(0);
      return ctx.carry.splice(0);
    },
    parley: same,
  },
  "select-non-string": refusedAnswer("select-non-string", [notify("Selected: 42"), response("prompt", { success: true })], false),
  "select-outside-options": refusedAnswer("select-outside-options", [notify("Selected: Option Z"), response("prompt", { success: true })], false),
  "select-settled-after-refusal": {
    pi: bothMarked("select-settled-after-refusal", []),
    parley: bothMarked("select-settled-after-refusal", [notify("Selection cancelled or timed out"), response("prompt", { success: true })]),
  },
  "late-answer": parleyErrorPiSilent("late-answer", "already_resolved", false),
  "unknown-dialog-id": parleyErrorPiSilent("unknown-dialog-id", "unknown_id", false, "nope"),
  "response-without-id": parleyErrorPiSilent("response-without-id", "invalid_response", false),
  "dismissed-on-timeout": {
    pi: same,
    parley: (records) => consume(records, { type: "extension_ui_dismissed", reason: "timeout" }, "dismissed on timeout"),
  },
  "dismissed-on-abort": {
    pi: same,
    parley: (records) => consume(records, { type: "extension_ui_dismissed", reason: "aborted" }, "dismissed on abort"),
  },
  "editor-timeout-signal": {
    pi: (records) => {
      const [editor] = expectSeq(records, [uiRequest("editor", { prefill: "pre" })], "editor (pi)");
      expect(editor, "pi drops the editor timeout").not.toHaveProperty("timeout");
      return [editor!, marker("editor-timeout-signal")];
    },
    parley: (records) => {
      const [first] = records;
      const timed = first !== undefined && "timeout" in first;
      const rest = consume(records, { type: "extension_ui_dismissed", method: "editor", reason: timed ? "timeout" : "aborted" }, "editor dismissed");
      const [editor] = expectSeq(
        rest,
        [uiRequest("editor", { prefill: "pre" }), notify("editor: null"), response("prompt", { success: true })],
        "editor (parley)",
      );
      const { timeout: _timeout, ...withoutTimeout } = editor!;
      return [withoutTimeout as Rec, marker("editor-timeout-signal")];
    },
  },
  "editor-late-answer": {
    pi: bothMarked("editor-late-answer", [notify(expect.stringMatching(/^editor: "late/)), response("prompt", { success: true })]),
    parley: (records) => {
      expectSeq(consume(records, uiError("already_resolved", false), "editor late answer"), [], "editor late answer (parley)");
      return [marker("editor-late-answer")];
    },
  },
  "eof-pending-dialog": {
    pi: (records) => expectSeq(records, [notify("shutdown"), { type: EXIT, code: 0 }], "EOF (pi)"),
    parley: (records) => {
      const rest = consume(records, { type: "extension_ui_dismissed", method: "input", reason: "shutdown" }, "EOF dismissal");
      expectSeq(rest.slice(0, 2), [notify("Input cancelled"), response("prompt", { success: true })], "EOF settles the dialog (parley)");
      return rest.slice(2);
    },
  },
};

// ------------------------------------------------------------------------------------------------
// Scenarios
// ------------------------------------------------------------------------------------------------

type Input = { json: Record<string, unknown> } | { raw: string } | { eof: true };
interface Step {
  name: string;
  input?: Input;
  until: Terminal | { pi: Terminal; parley: Terminal };
  diffs?: DiffKey[];
}
interface Scenario {
  name: string;
  extensions: string[];
  steps: Step[];
}

const QUIET = 300;
const json = (record: Record<string, unknown>): Input => ({ json: record });
/** The most recent dialog (select/confirm/input/editor) this agent opened. */
const DIALOG = "<dialog>";
const answer = (fields: object): Input => json({ type: "extension_ui_response", id: DIALOG, ...fields });
const prompt = (message: string, id: string): Input => json({ type: "prompt", message, id });
const untilResponse = (command: string): Terminal => ({ match: { type: "response", command } });
const untilRequest = (method: string): Terminal => ({ match: { type: "extension_ui_request", method } });
const EOF_STEP: Step = { name: "stdin EOF: exits 0", input: { eof: true }, until: { exit: true } };
const getState = (id: string): Step => ({
  name: `get_state (${id})`,
  input: json({ type: "get_state", id }),
  until: untilResponse("get_state"),
  diffs: ["get-state-model"],
});
const getCommands: Step = {
  name: "get_commands",
  input: json({ type: "get_commands", id: "cmds" }),
  until: untilResponse("get_commands"),
};

/** pi 1.6.0's example extensions (both sides load the same files). */
const PI_NEWEST_EXAMPLES = join(ROOT, "node_modules/pi-newest/examples/extensions");
const ext = (file: string): string => join(PI_NEWEST_EXAMPLES, file);

// One extra extension of our own (written to a temp dir, loaded by both agents by the same path) for
// what pi's examples do not exercise: timeouts/signals on select and editor, and session_shutdown.
const EXTRA_DIR = mkdtempSync(join(tmpdir(), "parley-diff-ext-"));
const EXTRA = join(EXTRA_DIR, "dialog-endings.ts");
mkdirSync(EXTRA_DIR, { recursive: true });
writeFileSync(
  EXTRA,
  `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  const show = (ctx: any, what: string, v: unknown) => ctx.ui.notify(what + ": " + JSON.stringify(v ?? null), "info");
  const abortSoon = () => { const c = new AbortController(); setTimeout(() => c.abort(), 300); return c.signal; };
  pi.registerCommand("sel-timeout", { description: "select with timeout", handler: async (_a, ctx) => show(ctx, "select", await ctx.ui.select("Timed select", ["a", "b"], { timeout: 300 })) });
  pi.registerCommand("sel-signal", { description: "select with signal", handler: async (_a, ctx) => show(ctx, "select", await ctx.ui.select("Signal select", ["a", "b"], { signal: abortSoon() })) });
  pi.registerCommand("ed-timeout", { description: "editor with timeout", handler: async (_a, ctx) => show(ctx, "editor", await ctx.ui.editor("Timed editor", "pre", { timeout: 300 } as any)) });
  pi.registerCommand("ed-signal", { description: "editor with signal", handler: async (_a, ctx) => show(ctx, "editor", await ctx.ui.editor("Signal editor", "pre", { signal: abortSoon() } as any)) });
  pi.on("session_shutdown", async (_e, ctx) => { ctx.ui.notify("shutdown", "info"); });
}
`,
);

const SCENARIOS: Scenario[] = [
  {
    name: "rpc-demo.ts",
    extensions: [ext("rpc-demo.ts")],
    steps: [
      { name: "startup: setTitle, setWidget, setStatus", until: { match: uiRequest("setStatus") } },
      getCommands,
      getState("s1"),
      { name: "/rpc-input opens an input", input: prompt("/rpc-input", "p1"), until: untilRequest("input") },
      { name: "/rpc-input answered with a value", input: answer({ value: "hello" }), until: untilResponse("prompt") },
      { name: "/rpc-input again", input: prompt("/rpc-input", "p2"), until: untilRequest("input") },
      { name: "/rpc-input cancelled", input: answer({ cancelled: true }), until: untilResponse("prompt") },
      { name: "/rpc-editor opens an editor", input: prompt("/rpc-editor", "p3"), until: untilRequest("editor") },
      { name: "/rpc-editor answered", input: answer({ value: "one\ntwo" }), until: untilResponse("prompt") },
      { name: "/rpc-prefill", input: prompt("/rpc-prefill", "p4"), until: untilResponse("prompt") },
      { name: "new_session asks session_before_switch confirm", input: json({ type: "new_session", id: "n1" }), until: untilRequest("confirm") },
      { name: "confirm true: new session starts", input: answer({ confirmed: true }), until: untilResponse("new_session") },
      { name: "new_session again", input: json({ type: "new_session", id: "n2" }), until: untilRequest("confirm") },
      { name: "confirm false: cancelled", input: answer({ confirmed: false }), until: untilResponse("new_session") },
      { ...getState("s2"), diffs: ["get-state-model"] },
      { name: "get_ui_state", input: json({ type: "get_ui_state", id: "ui" }), until: untilResponse("get_ui_state"), diffs: ["get-ui-state"] },
      EOF_STEP,
    ],
  },
  {
    name: "timed-confirm.ts",
    extensions: [ext("timed-confirm.ts")],
    steps: [
      { name: "/timed opens a confirm with timeout", input: prompt("/timed", "t1"), until: untilRequest("confirm") },
      { name: "/timed answered", input: answer({ confirmed: true }), until: untilResponse("prompt") },
      {
        name: "/timed answered twice",
        input: answer({ confirmed: false }),
        until: { pi: { quiet: QUIET }, parley: { match: { type: "extension_ui_error" } } },
        diffs: ["late-answer"],
      },
      { name: "/timed-select opens a select", input: prompt("/timed-select", "t2"), until: untilRequest("select") },
      { name: "/timed-select answered", input: answer({ value: "Option B" }), until: untilResponse("prompt") },
      { name: "/timed-signal: notify, confirm", input: prompt("/timed-signal", "t3"), until: untilRequest("confirm") },
      { name: "/timed-signal answered", input: answer({ confirmed: false }), until: untilResponse("prompt") },
      // wrong-shaped answers: pi settles at once, parley refuses and keeps the dialog open
      { name: "/timed again", input: prompt("/timed", "t4"), until: untilRequest("confirm") },
      {
        name: "confirm answered {value:'x'}",
        input: answer({ value: "x" }),
        until: { pi: untilResponse("prompt"), parley: { match: { type: "extension_ui_error" } } },
        diffs: ["confirm-answered-with-value"],
      },
      {
        name: "… then {cancelled:true}",
        input: answer({ cancelled: true }),
        until: { pi: { quiet: QUIET }, parley: untilResponse("prompt") },
        diffs: ["settled-after-refusal"],
      },
      { name: "/timed again (2)", input: prompt("/timed", "t5"), until: untilRequest("confirm") },
      {
        name: "confirm answered {confirmed:'yes'}",
        input: answer({ confirmed: "yes" }),
        until: { pi: untilResponse("prompt"), parley: { match: { type: "extension_ui_error" } } },
        diffs: ["confirm-non-boolean"],
      },
      {
        name: "… then {confirmed:true}",
        input: answer({ confirmed: true }),
        until: { pi: { quiet: QUIET }, parley: untilResponse("prompt") },
        diffs: ["settled-after-refusal"],
      },
      { name: "/timed-select again", input: prompt("/timed-select", "t6"), until: untilRequest("select") },
      {
        name: "select answered {value:42}",
        input: answer({ value: 42 }),
        until: { pi: untilResponse("prompt"), parley: { match: { type: "extension_ui_error" } } },
        diffs: ["select-non-string"],
      },
      {
        name: "… then {cancelled:true}",
        input: answer({ cancelled: true }),
        until: { pi: { quiet: QUIET }, parley: untilResponse("prompt") },
        diffs: ["select-settled-after-refusal"],
      },
      { name: "/timed-select again (2)", input: prompt("/timed-select", "t7"), until: untilRequest("select") },
      {
        name: "select answered outside its options",
        input: answer({ value: "Option Z" }),
        until: { pi: untilResponse("prompt"), parley: { match: { type: "extension_ui_error" } } },
        diffs: ["select-outside-options"],
      },
      {
        name: "… then {cancelled:true} (2)",
        input: answer({ cancelled: true }),
        until: { pi: { quiet: QUIET }, parley: untilResponse("prompt") },
        diffs: ["select-settled-after-refusal"],
      },
      EOF_STEP,
    ],
  },
  {
    name: "widget-placement.ts",
    extensions: [ext("widget-placement.ts")],
    steps: [{ name: "startup: two widgets, one below the editor", until: { match: uiRequest("setWidget", { widgetKey: "widget-below" }) } }, EOF_STEP],
  },
  {
    name: "session-name.ts",
    extensions: [ext("session-name.ts")],
    steps: [
      { name: "/session-name foo", input: prompt("/session-name foo", "n1"), until: untilResponse("prompt") },
      { name: "/session-name shows it", input: prompt("/session-name", "n2"), until: untilResponse("prompt") },
      getState("s1"),
      { name: "set_session_name bar", input: json({ type: "set_session_name", name: "bar", id: "n3" }), until: untilResponse("set_session_name") },
      { name: "/session-name shows bar", input: prompt("/session-name", "n4"), until: untilResponse("prompt") },
      EOF_STEP,
    ],
  },
  {
    name: "commands.ts",
    extensions: [ext("commands.ts")],
    steps: [
      getCommands,
      { name: "/commands opens a select", input: prompt("/commands", "c1"), until: untilRequest("select") },
      {
        name: "a command picked: confirm with its path",
        input: answer({ value: "/commands - List available slash commands" }),
        until: untilRequest("confirm"),
      },
      { name: "confirm true: notify the path", input: answer({ confirmed: true }), until: untilResponse("prompt") },
      EOF_STEP,
    ],
  },
  {
    name: "dialog endings (timeouts, signals, EOF)",
    extensions: [EXTRA, ext("rpc-demo.ts")],
    steps: [
      { name: "startup", until: { match: uiRequest("setStatus") } },
      { name: "select timeout", input: prompt("/sel-timeout", "e1"), until: untilResponse("prompt"), diffs: ["dismissed-on-timeout"] },
      { name: "select abort signal", input: prompt("/sel-signal", "e2"), until: untilResponse("prompt"), diffs: ["dismissed-on-abort"] },
      {
        name: "editor timeout",
        input: prompt("/ed-timeout", "e3"),
        until: { pi: { match: uiRequest("editor"), thenQuiet: 600 }, parley: untilResponse("prompt") },
        diffs: ["editor-timeout-signal"],
      },
      {
        name: "editor answered late",
        input: answer({ value: "late" }),
        until: { pi: untilResponse("prompt"), parley: { match: { type: "extension_ui_error" } } },
        diffs: ["editor-late-answer"],
      },
      {
        name: "editor abort signal",
        input: prompt("/ed-signal", "e4"),
        until: { pi: { match: uiRequest("editor"), thenQuiet: 600 }, parley: untilResponse("prompt") },
        diffs: ["editor-timeout-signal"],
      },
      {
        name: "editor answered late (2)",
        input: answer({ value: "late2" }),
        until: { pi: untilResponse("prompt"), parley: { match: { type: "extension_ui_error" } } },
        diffs: ["editor-late-answer"],
      },
      { name: "/rpc-input left pending", input: prompt("/rpc-input", "e5"), until: untilRequest("input") },
      { name: "stdin EOF with the dialog pending", input: { eof: true }, until: { exit: true }, diffs: ["eof-pending-dialog"] },
    ],
  },
  {
    name: "bad input (no extensions)",
    extensions: [],
    steps: [
      { name: "unknown command", input: json({ type: "bogus", id: "u1" }), until: untilResponse("bogus") },
      { name: "get_ui_state", input: json({ type: "get_ui_state", id: "ui" }), until: untilResponse("get_ui_state"), diffs: ["get-ui-state"] },
      { name: "empty line", input: { raw: "" }, until: { pi: untilResponse("parse"), parley: { quiet: QUIET } }, diffs: ["blank-line"] },
      { name: "whitespace line", input: { raw: "   " }, until: { pi: untilResponse("parse"), parley: { quiet: QUIET } }, diffs: ["blank-line"] },
      { name: "not JSON", input: { raw: "not json" }, until: untilResponse("parse") },
      { name: "JSON array", input: { raw: "[1,2]" }, until: { match: { type: "response" } }, diffs: ["non-object-line"] },
      { name: "JSON number", input: { raw: "42" }, until: { match: { type: "response" } }, diffs: ["non-object-line"] },
      { name: "object without type", input: { raw: '{"id":"nt"}' }, until: { match: { type: "response" } }, diffs: ["command-without-type"] },
      {
        name: "set_thinking_level level:42",
        input: json({ type: "set_thinking_level", level: 42, id: "t42" }),
        until: untilResponse("set_thinking_level"),
        diffs: ["set-thinking-level-invalid"],
      },
      { name: "prompt without message", input: json({ type: "prompt", id: "nomsg" }), until: untilResponse("prompt"), diffs: ["prompt-without-message"] },
      {
        name: "extension_ui_response to an unknown id",
        input: json({ type: "extension_ui_response", id: "nope", value: "x" }),
        until: { pi: { quiet: QUIET }, parley: { match: { type: "extension_ui_error" } } },
        diffs: ["unknown-dialog-id"],
      },
      {
        name: "extension_ui_response without id",
        input: json({ type: "extension_ui_response", value: "x" }),
        until: { pi: { quiet: QUIET }, parley: { match: { type: "extension_ui_error" } } },
        diffs: ["response-without-id"],
      },
      getState("s1"),
      { name: "set_thinking_level high", input: json({ type: "set_thinking_level", level: "high", id: "th" }), until: untilResponse("set_thinking_level") },
      { ...getState("s2"), name: "get_state after set_thinking_level high" },
      {
        name: "null line",
        input: { raw: "null" },
        until: { pi: { exit: true }, parley: { match: { type: "response", command: "parse" }, thenQuiet: 200 } },
        diffs: ["null-line"],
      },
    ],
  },
];

// ------------------------------------------------------------------------------------------------
// Runner
// ------------------------------------------------------------------------------------------------

interface StepResult {
  pi?: Rec[];
  parley?: Rec[];
  error?: unknown;
}
interface ScenarioResult {
  steps: StepResult[];
  agents: Record<Side, AgentProcess>;
}

const alive = new Set<AgentProcess>();
const used = new Set<DiffKey>();

class SideRun {
  readonly ids = new UiIds();
  readonly carry: Rec[] = [];
  readonly records: Rec[] = [];
  cursor = 0;
  lastDialog: string | undefined;
  exit: { code: number | null } | undefined;
  constructor(
    readonly side: Side,
    readonly agent: AgentProcess,
    readonly home: string,
  ) {
    void agent.exited.then(({ code }) => (this.exit = { code }));
  }

  send(input: Input): void {
    if ("eof" in input) return this.agent.closeInput();
    if ("raw" in input) return this.agent.sendRaw(`${input.raw}\n`);
    const record = this.ids.resolve(input.json);
    if (record["id"] === DIALOG) {
      if (this.lastDialog === undefined) throw new Error(`${this.side}: no dialog is open to answer`);
      record["id"] = this.lastDialog;
    }
    this.agent.send(record);
  }

  /** The raw records of one step (from the cursor up to the terminal), plus an exit pseudo-record. */
  async collect(until: Terminal): Promise<Rec[]> {
    const { records, end } = await collectStep(this.side, this.agent, () => this.exit, this.cursor, until);
    this.cursor = end;
    for (const r of records) {
      if (r.type === "extension_ui_request" && ["select", "confirm", "input", "editor"].includes(String(r["method"]))) this.lastDialog = String(r["id"]);
    }
    return records;
  }

  normalise(step: Step, raw: Rec[]): Rec[] {
    const ctx: NormaliserContext = {
      side: this.side,
      sent: step.input && "json" in step.input ? step.input.json : undefined,
      carry: this.carry,
      stderr: () => this.agent.stderr(),
      running: () => this.agent.child.exitCode === null && this.agent.child.signalCode === null,
    };
    let records = raw;
    try {
      for (const key of step.diffs ?? []) records = NORMALISERS[key][this.side](records, ctx);
    } catch (error) {
      for (const r of raw) this.ids.see(r); // keep the numbering in step with the other side
      throw error;
    }
    return records.map((r) => normaliseRecord(r, { ids: this.ids, paths: [[this.home, "<home>"]], newestPi: true }));
  }
}

function spawnSide(side: Side, extensions: string[]): SideRun {
  const home = mkdtempSync(join(tmpdir(), `parley-diff-${side}-`));
  const args = extensions.flatMap((e) => ["-e", e]);
  const options = { cwd: home, env: { HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent") } };
  const agent = side === "pi" ? spawnPiNewest(args, options) : spawnParley(args, options);
  alive.add(agent);
  void agent.exited.then(() => alive.delete(agent));
  return new SideRun(side, agent, home);
}

async function runScenario(scenario: Scenario): Promise<ScenarioResult> {
  const pi = spawnSide("pi", scenario.extensions);
  const parley = spawnSide("parley", scenario.extensions);
  await Promise.all([waitUntilServing(pi.agent), waitUntilServing(parley.agent)]);
  const steps: StepResult[] = [];
  let broken: unknown;
  for (const step of scenario.steps) {
    if (broken !== undefined) {
      steps.push({ error: new Error(`not run: an earlier step could not be driven (${String(broken)})`) });
      continue;
    }
    const result: StepResult = {};
    try {
      const raw = await Promise.all(
        [pi, parley].map(async (run) => {
          if (step.input) run.send(step.input);
          const until = "pi" in step.until ? step.until[run.side] : step.until;
          return run.collect(until);
        }),
      );
      try {
        result.pi = pi.normalise(step, raw[0]!);
        result.parley = parley.normalise(step, raw[1]!);
        for (const key of step.diffs ?? []) used.add(key);
      } catch (error) {
        result.error = error;
      }
    } catch (error) {
      broken = error;
      result.error = error;
    }
    steps.push(result);
  }
  return { steps, agents: { pi: pi.agent, parley: parley.agent } };
}

// ------------------------------------------------------------------------------------------------
// Tests
// ------------------------------------------------------------------------------------------------

let results: Map<string, Promise<ScenarioResult>>;

beforeAll(() => {
  results = runInSlots(SCENARIOS, runScenario);
});

afterAll(() => {
  for (const agent of alive) agent.kill();
});

describe("differential: parley vs pi 1.6.0", () => {
  for (const scenario of SCENARIOS) {
    describe(scenario.name, () => {
      scenario.steps.forEach((step, i) => {
        it(`${i + 1}. ${step.name}`, async () => {
          const { steps } = await results.get(scenario.name)!;
          const result = steps[i]!;
          if (process.env["DIFF_DUMP"])
            console.log(`## ${scenario.name} / ${step.name}\npi:     ${JSON.stringify(result.pi)}\nparley: ${JSON.stringify(result.parley)}`);
          if (result.error !== undefined) throw result.error;
          expect(result.parley, "parley's normalised records (expected: pi's)").toEqual(result.pi);
        });
      });
      it("stdout carried only JSON object lines", async () => {
        const { agents } = await results.get(scenario.name)!;
        expect(agents.pi.garbage).toEqual([]);
        expect(agents.parley.garbage).toEqual([]);
      });
    });
  }

  it("every documented difference is exercised by a step that passed its normaliser", async () => {
    await Promise.all(results.values());
    expect(DIFFERENCES.map((d) => d.key).filter((k) => !used.has(k))).toEqual([]);
  });
});
