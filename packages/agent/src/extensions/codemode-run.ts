/**
 * One `codemode` script, run in pi-codemode's QuickJS sandbox (a worker thread) as pi 1.6 runs it:
 * the script calls the session's callable tools through `ctx.executeTool` (so hooks, validation and
 * the nested `tool_execution_*` records apply), and only its output reaches the model, laid out
 * and headed ("Script completed" / "Script failed") as pi lays it out. Loaded on the first script,
 * so start-up never loads the sandbox.
 */
import type { AgentToolResult, AgentToolUpdateCallback } from "@earendil-works/pi-agent-core";
import type { Usage } from "@earendil-works/pi-ai";
import type { CodemodeOutputItem, CodemodeResult, CodemodeTool } from "@earendil-works/pi-codemode";
import { parseCodemodeSource } from "@earendil-works/pi-codemode/source";
import { toCodemodeIdentifier } from "@earendil-works/pi-codemode/declarations";
import { writeOutputFile } from "../output-files.js";
import { importModule } from "../startup/module-loader.js";
import { formatSize } from "../tools/truncate.js";
import type { ToolNamespace } from "../tools/types.js";
import { CODEMODE_TOOL_NAME, scriptDeclaration, toolSample } from "./codemode-loadout.js";
import { type ModelCallRow, modelGlobals, sumUsage } from "./codemode-models.js";
import type { SessionEntry } from "../session/session.js";
import type { CallableTool, ExtensionToolContext, ToolCallOutcome } from "./types.js";

type Sandbox = typeof import("@earendil-works/pi-codemode");

export const STORE_ENTRY_TYPE = "codemode-store";
const ARGS_PREVIEW = 200;
const ERROR_PREVIEW = 500;
const MEMORY_LIMIT = 256 * 1024 * 1024;
const DEFAULT_WORKERS = 2;
const WORKER_WAIT_MS = 60_000;
const DEFAULT_MAX_OUTPUT_TOKENS = 10_000;
const CHARS_PER_TOKEN = 4;
const SEARCH_LIMIT = 8;

/** One nested call as the tool's `details.calls` shows it while and after the script runs (a model call adds its cost). */
export type ScriptCall = ModelCallRow;

export interface CodemodeDetails {
  calls: ScriptCall[];
  fullOutputPath?: string;
}

export interface RunOptions {
  appendEntry(customType: string, data: unknown): void;
  guidelines(): ReadonlyMap<string, readonly string[]>;
  namespaceOf(name: string): ToolNamespace | undefined;
  /** Whether scripts get the `models` global (pi's `CodemodeOptions.models`, default true). */
  models: boolean;
}

// ---- worker slots, shared by every session of the process (PI_CODEMODE_MAX_WORKERS) ----

let busy = 0;
const waiting: (() => void)[] = [];

function maxWorkers(): number {
  const value = Number(process.env["PI_CODEMODE_MAX_WORKERS"]);
  return Number.isInteger(value) && value > 0 ? value : DEFAULT_WORKERS;
}

function admit(): void {
  while (waiting.length > 0 && busy < maxWorkers()) {
    busy++;
    waiting.shift()?.();
  }
}

function release(): void {
  busy--;
  admit();
}

/** Waits in arrival order for a slot; says why it got none. */
function reserve(signal: AbortSignal | undefined, timeoutMs: number): Promise<"reserved" | "aborted" | "timeout"> {
  if (signal?.aborted) return Promise.resolve("aborted");
  return new Promise((resolve) => {
    const settle = (outcome: "reserved" | "aborted" | "timeout") => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      const at = waiting.indexOf(grant);
      if (at >= 0) waiting.splice(at, 1);
      resolve(outcome);
    };
    const grant = () => settle("reserved");
    const onAbort = () => settle("aborted");
    const timer = setTimeout(() => settle("timeout"), timeoutMs);
    waiting.push(grant);
    signal?.addEventListener("abort", onAbort, { once: true });
    admit();
  });
}

// ---- text helpers ----

const cut = (text: string, max: number) => (text.length > max ? `${headOf(text, max - 3)}...` : text);

/** The first `n` UTF-16 units, not ending inside a surrogate pair. */
function headOf(text: string, n: number): string {
  const end = n > 0 && /[\uD800-\uDBFF]/.test(text.charAt(n - 1)) ? n - 1 : n;
  return text.slice(0, Math.max(0, end));
}

/** The last `n` UTF-16 units, not starting inside a surrogate pair. */
function tailOf(text: string, n: number): string {
  if (n <= 0) return "";
  const start = text.length - n;
  const from = start > 0 && /[\uDC00-\uDFFF]/.test(text.charAt(start)) ? start + 1 : start;
  return text.slice(Math.max(0, from));
}

function preview(args: unknown): string {
  if (args === undefined) return "";
  try {
    return cut(JSON.stringify(args) ?? "", ARGS_PREVIEW);
  } catch {
    return "";
  }
}

const textOf = (result: Pick<AgentToolResult<unknown>, "content">): string =>
  (result.content ?? []).flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n");

const asText = (value: unknown): string => (typeof value === "string" ? value : (JSON.stringify(value) ?? String(value)));

// ---- the store ----

function isStoreData(data: unknown): data is { set: Record<string, unknown>; delete: string[] } {
  if (typeof data !== "object" || data === null) return false;
  const { set, delete: removed } = data as Record<string, unknown>;
  return typeof set === "object" && set !== null && Array.isArray(removed) && removed.every((key) => typeof key === "string");
}

/** `load()`'s values: the branch's `codemode-store` entries applied from the root. */
export function storeOf(branch: readonly SessionEntry[]): Record<string, unknown> {
  const store = new Map<string, unknown>();
  for (const entry of branch) {
    if (entry.type !== "custom" || entry.customType !== STORE_ENTRY_TYPE || !isStoreData(entry.data)) continue;
    for (const key of entry.data.delete) store.delete(key);
    for (const [key, value] of Object.entries(entry.data.set)) store.set(key, value);
  }
  return Object.fromEntries(store);
}

// ---- output layout ----

type Item = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };

/** Numbered text items when there are several, console lines last in one block. */
function layOut(output: readonly CodemodeOutputItem[]): Item[] {
  const texts = output.filter((item) => item.type === "text" && !item.console).length;
  const items: Item[] = [];
  const consoleLines: string[] = [];
  let n = 0;
  for (const item of output) {
    if (item.type === "image") items.push({ type: "image", data: item.data, mimeType: item.mimeType });
    else if (item.console) consoleLines.push(item.text);
    else {
      n++;
      items.push({ type: "text", text: texts > 1 ? `==> text ${n}/${texts} <==\n${item.text}` : item.text });
    }
  }
  if (consoleLines.length > 0) items.push({ type: "text", text: `<console_output>\n${consoleLines.join("\n")}\n</console_output>` });
  return items;
}

/** Adjacent texts as one, each part on its own line (the parts joined once, not re-read). */
function joinTexts(items: readonly Item[]): Item[] {
  const out: Item[] = [];
  let parts: string[] = [];
  let last = "";
  const flush = () => {
    if (parts.length > 0) out.push({ type: "text", text: parts.join("") });
    parts = [];
    last = "";
  };
  for (const item of items) {
    if (item.type !== "text") {
      flush();
      out.push(item);
      continue;
    }
    if (last !== "" && !last.endsWith("\n")) {
      parts.push("\n");
      last = "\n";
    }
    parts.push(item.text);
    if (item.text !== "") last = item.text;
  }
  flush();
  return out;
}

interface CallRecord {
  name: string;
  status: ScriptCall["status"];
}

function failureText(result: Extract<CodemodeResult, { ok: false }>, calls: readonly CallRecord[]): string {
  const { error } = result;
  const head =
    error.kind === "script"
      ? (error.stack ?? `${error.name ?? "Error"}: ${error.message}`)
      : error.kind === "timeout"
        ? `Script timed out: ${error.message}`
        : error.kind === "aborted"
          ? `Script aborted: ${error.message}`
          : `Script sandbox failed: ${error.message}`;
  const summary =
    calls.length === 0
      ? "No tool calls were made."
      : `Tool calls made before the failure (they are not undone): ${calls.map((c) => `${c.name} (${c.status})`).join(", ")}`;
  return `${head}\n\n${summary}`;
}

const IMAGE_EXTENSIONS: Record<string, string> = { "image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp" };

/** Each image saved to an output file, its path in a line before it (saved once when shown twice). */
async function withImagePaths(items: readonly Item[]): Promise<Item[]> {
  const labels = new Map<string, Promise<string>>();
  const label = async (data: string, mimeType: string): Promise<string> => {
    const bytes = Buffer.from(data, "base64");
    const kind = `${mimeType}, ${formatSize(bytes.length)}`;
    try {
      const path = await writeOutputFile("pi-codemode", IMAGE_EXTENSIONS[mimeType] ?? ".bin", bytes);
      return `[Image saved to ${path} (${kind})]`;
    } catch (error) {
      return `[Image (${kind}) could not be saved: ${error instanceof Error ? error.message : String(error)}]`;
    }
  };
  const groups = await Promise.all(
    items.map(async (item): Promise<Item[]> => {
      if (item.type !== "image") return [item];
      let pending = labels.get(item.data);
      if (!pending) {
        pending = label(item.data, item.mimeType);
        labels.set(item.data, pending);
      }
      return [{ type: "text", text: await pending }, item];
    }),
  );
  return groups.flat();
}

/** Over the token budget, the text keeps its start and end, and the whole of it goes to an output file. */
async function fitOutput(items: readonly Item[], maxTokens: number): Promise<{ items: Item[]; fullOutputPath?: string }> {
  const texts = items.flatMap((item) => (item.type === "text" ? [item.text] : []));
  const whole = texts.join("\n");
  const budget = maxTokens * CHARS_PER_TOKEN;
  if (texts.length === 0 || whole.length <= budget) return { items: [...items] };
  const headChars = Math.floor(budget / 2);
  const tailChars = budget - headChars;
  const removed = whole.length - headChars - tailChars;
  let text = `Warning: truncated output (original token count: ${Math.ceil(whole.length / CHARS_PER_TOKEN)})\nTotal output lines: ${whole.split("\n").length}\n\n${headOf(whole, headChars)}…${Math.ceil(removed / CHARS_PER_TOKEN)} tokens truncated…${tailOf(whole, tailChars)}`;
  let path: string | undefined;
  try {
    path = await writeOutputFile("pi-codemode", ".txt", whole);
    text += `\n\n[Full output: ${path} (read with offset/limit)]`;
  } catch (error) {
    text += `\n\n[Could not save the full output: ${error instanceof Error ? error.message : String(error)}]`;
  }
  const images = items.filter((item) => item.type === "image");
  return { items: [{ type: "text", text }, ...images], ...(path ? { fullOutputPath: path } : {}) };
}

/** What a script gets back from a nested call: structured content for a tool with an output schema, else its text; an error rejects. */
function scriptValue(tool: CallableTool, outcome: ToolCallOutcome): unknown {
  const { result } = outcome;
  const structured = result.structuredContent;
  if (tool.outputSchema && structured !== undefined) return structured;
  const text = textOf(result);
  if (outcome.isError) throw new Error(text || `Tool "${tool.name}" failed`);
  return text;
}

function namespaceMatches(namespace: ToolNamespace, query: string): boolean {
  const id = toCodemodeIdentifier(query);
  return [namespace.name, ...(namespace.aliases ?? [])].some((name) => name === query || toCodemodeIdentifier(name) === id);
}

/** searchTools(), describeTool(), describeNamespace() over the script's callable tools. */
function discovery(tools: readonly CallableTool[], samples: ReadonlyMap<string, string>, options: RunOptions): CodemodeTool[] {
  const entry = (name: string) => ({ name: toCodemodeIdentifier(name), description: samples.get(name) ?? "" });
  return [
    {
      name: "searchTools",
      spread: true,
      execute: async (args) => {
        const [query, searchOptions] = args as [unknown, { limit?: unknown; namespace?: unknown } | null | undefined];
        if (typeof query !== "string") throw new Error("searchTools() expects a query string");
        const limit = searchOptions?.limit ?? SEARCH_LIMIT;
        if (typeof limit !== "number" || !Number.isInteger(limit) || limit <= 0) throw new Error("searchTools() limit must be a positive integer");
        const namespace = searchOptions?.namespace;
        if (namespace !== undefined && namespace !== null && typeof namespace !== "string") throw new Error("searchTools() namespace must be a string");
        const candidates = tools.flatMap((tool) => {
          const own = options.namespaceOf(tool.name);
          if (namespace && (!own || !namespaceMatches(own, namespace))) return [];
          return [{ name: tool.name, description: tool.description, parameters: tool.parameters, ...(own ? { namespace: own } : {}) }];
        });
        const { rankTools } = await import("../mcp/tool-ranker.js");
        return rankTools(query, candidates, limit).map((match) => entry(match.name));
      },
    },
    {
      name: "describeTool",
      spread: true,
      execute: (args) => {
        const [name] = args as [unknown];
        if (typeof name !== "string") throw new Error("describeTool() expects a tool name");
        const tool = tools.find((t) => t.name === name || toCodemodeIdentifier(t.name) === name);
        return tool ? samples.get(tool.name) : undefined;
      },
    },
    {
      name: "describeNamespace",
      spread: true,
      execute: (args) => {
        const [name] = args as [unknown];
        if (typeof name !== "string") throw new Error("describeNamespace() expects a namespace name");
        let found: ToolNamespace | undefined;
        const names: string[] = [];
        for (const tool of tools) {
          const own = options.namespaceOf(tool.name);
          if (!own || !namespaceMatches(own, name)) continue;
          found ??= own;
          names.push(toCodemodeIdentifier(tool.name));
        }
        if (!found) return undefined;
        return {
          name: found.name,
          ...(found.description ? { description: found.description } : {}),
          ...(found.instructions ? { instructions: found.instructions } : {}),
          tools: names,
        };
      },
    },
  ];
}

const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(1);

/** Runs one script; a bad options line throws (an error result, as in pi) before anything runs. */
export async function runCodemode(
  toolCallId: string,
  input: { code: string },
  signal: AbortSignal | undefined,
  onUpdate: AgentToolUpdateCallback<CodemodeDetails> | undefined,
  ctx: ExtensionToolContext | undefined,
  options: RunOptions,
): Promise<AgentToolResult<CodemodeDetails> & { isError?: boolean }> {
  const startedAt = performance.now();
  const { code, options: sourceOptions } = parseCodemodeSource(input.code);
  const calls: ScriptCall[] = [];
  // The usage of the script's model calls (nested tool calls report theirs through the session).
  let modelUsage: Usage | undefined;
  // Images a model call returned, to notice a script that never shows them.
  let generatedImages = 0;
  const snapshot = (): CodemodeDetails => ({ calls: calls.map((call) => ({ ...call })) });
  const publish = () => onUpdate?.({ content: [], details: snapshot() });
  publish();
  const callable = ctx ? ctx.tools.filter((tool) => tool.name !== CODEMODE_TOOL_NAME) : [];
  const guidelines = options.guidelines();
  const samples = new Map(callable.map((tool) => [tool.name, toolSample(scriptDeclaration(tool, guidelines.get(tool.name)))]));
  const tools: CodemodeTool[] = callable.map((tool) => ({
    name: tool.name,
    ...(samples.has(tool.name) ? { description: samples.get(tool.name) as string } : {}),
    execute: async (args, { signal: callSignal }) => {
      const record: ScriptCall = { id: `${toolCallId}/?`, name: tool.name, args: preview(args), status: "running" };
      calls.push(record);
      publish();
      const began = performance.now();
      if (!ctx) throw new Error("Tool calls need a session");
      const outcome = await ctx.executeTool(tool.name, args, { signal: callSignal });
      record.id = outcome.toolCall.id;
      record.durationMs = performance.now() - began;
      if (outcome.isError) {
        record.status = callSignal.aborted ? "cancelled" : "error";
        record.error = cut(textOf(outcome.result) || `Tool "${tool.name}" failed`, ERROR_PREVIEW);
      } else record.status = "ok";
      publish();
      return scriptValue(tool, outcome);
    },
  }));

  // Waiting for a worker counts toward the script's deadline.
  const deadline = sourceOptions.timeoutMs ?? Number.POSITIVE_INFINITY;
  const waitFrom = performance.now();
  const admission = await reserve(signal, Math.min(deadline, WORKER_WAIT_MS));
  const waited = performance.now() - waitFrom;
  if (admission !== "reserved") {
    const reason: unknown = signal?.reason;
    const error =
      admission === "aborted"
        ? `Script aborted: ${reason instanceof Error ? reason.message : "Execution aborted"}`
        : deadline <= WORKER_WAIT_MS
          ? `Script timed out: Execution timed out after ${deadline} ms while waiting for a free codemode worker`
          : `No codemode worker became free within ${WORKER_WAIT_MS / 1000} seconds. All ${maxWorkers()} workers, shared by every session in this process, are held by other scripts. Retry after they finish.`;
    return {
      content: [
        { type: "text", text: `Script failed\nWall time ${seconds(startedAt)} seconds\nOutput:\n` },
        { type: "text", text: `Script error:\n${error}\n\nThe script did not start.` },
      ],
      details: snapshot(),
      isError: true,
    };
  }
  // The slot is this script's until the sandbox starts its worker; from then the worker's exit frees it.
  let holding = true;
  let sandbox: InstanceType<Sandbox["CodemodeSandbox"]> | undefined;
  let result: CodemodeResult;
  try {
    const { CodemodeSandbox } = await importModule<Sandbox>("@earendil-works/pi-codemode");
    sandbox = new CodemodeSandbox({
      tools,
      globals: [
        ...discovery(callable, samples, options),
        ...(options.models && ctx
          ? modelGlobals({
              registry: ctx.modelRegistry,
              toolCallId,
              addRow: (row) => {
                calls.push(row);
                return row;
              },
              publish,
              addUsage: (usage) => {
                modelUsage = modelUsage ? sumUsage(modelUsage, usage) : usage;
              },
              addGeneratedImages: (count) => {
                generatedImages += count;
              },
            })
          : []),
      ],
      timeoutMs: Math.max(1, Math.round(deadline - waited)),
      memoryLimitBytes: MEMORY_LIMIT,
      acquireWorker: () => {
        if (!holding) throw new Error("The script already settled");
        holding = false;
        return release;
      },
    });
    const store = ctx ? storeOf(ctx.sessionManager.getBranch()) : {};
    result = await sandbox.execute(code, { ...(signal ? { signal } : {}), store });
  } finally {
    await sandbox?.close();
    if (holding) {
      holding = false;
      release();
    }
  }
  for (const call of calls) if (call.status === "running") call.status = "cancelled";
  const output = [...result.output];
  if (result.ok) {
    const { set, delete: removed } = result.storeWrites;
    if (Object.keys(set).length > 0 || removed.length > 0) options.appendEntry(STORE_ENTRY_TYPE, { set, delete: removed });
    if (result.value !== undefined) output.push({ type: "text", text: asText(result.value) });
  }
  const items = layOut(output);
  if (!result.ok) items.push({ type: "text", text: `Script error:\n${failureText(result, calls)}` });
  if (generatedImages > 0 && !items.some((item) => item.type === "image")) {
    const s = generatedImages === 1 ? "" : "s";
    items.push({
      type: "text",
      text: `Note: models.generateImages() returned ${generatedImages} image${s} that the script did not show. Show each image block of result.output with image(block).`,
    });
  }
  const fitted = await fitOutput(joinTexts(items), sourceOptions.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS);
  const shown = joinTexts(await withImagePaths(fitted.items));
  const header = `${result.ok ? "Script completed" : "Script failed"}\nWall time ${seconds(startedAt)} seconds\nOutput:\n`;
  const details = snapshot();
  if (fitted.fullOutputPath) details.fullOutputPath = fitted.fullOutputPath;
  return {
    content: [{ type: "text", text: header }, ...shown],
    details,
    ...(modelUsage ? { usage: modelUsage } : {}),
    ...(result.ok ? {} : { isError: true }),
  };
}
