/**
 * `--model-script FILE`: an offline model that plays back a JSON array of assistant turns, one per
 * model call. A turn is a string (a text reply) or `{"text"?: string, "toolCalls"?: [{"name":
 * string, "arguments": object}]}`; after the last turn every call answers `(script exhausted)`.
 *
 * Identity: provider "parley", model id "script", api "parley-script". The model's `baseUrl` is the
 * script's `file://` URL (or `parley-script:inline/<n>` for a script built in memory); it is the key
 * under which the script's cursor lives, so a copy of the Model object (e.g. after a JSON round trip)
 * still plays the same script.
 *
 * The file is validated when loaded; `ModelScriptError` names the turn index and field, e.g.
 * `turns.json: turns[2].toolCalls[0].arguments must be a JSON object, got array`.
 * This module needs no pi-ai runtime except for `streamScriptModel`, which receives it.
 */
import { readFileSync } from "node:fs";
import { basename, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Api, AssistantMessageEventStream, Context, Model, SimpleStreamOptions } from "@earendil-works/pi-ai";
import type { PiAiCore } from "./pi-ai.js";
import { localModel, type PlannedReply, type ReplyStreamSettings, streamPlannedReply } from "./reply-stream.js";
import { errorMessage } from "../error-text.js";

export const PARLEY_PROVIDER = "parley";
export const SCRIPT_MODEL_ID = "script";
export const SCRIPT_API = "parley-script";
export const SCRIPT_EXHAUSTED_TEXT = "(script exhausted)";

export interface ScriptToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** A validated turn, normalised: a string turn becomes `{ text }`. */
export interface ScriptTurn {
  text?: string;
  toolCalls?: ScriptToolCall[];
}

/** A model script that failed validation. `index`/`field` locate the problem when it is in a turn. */
export class ModelScriptError extends Error {
  override readonly name = "ModelScriptError";
  constructor(
    message: string,
    readonly source: string,
    readonly index?: number,
    readonly field?: string,
  ) {
    super(message);
  }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const TURN_FIELDS = ["text", "toolCalls"];
const CALL_FIELDS = ["name", "arguments"];

/**
 * Validate an already-parsed script. `source` names it in messages (usually the file name).
 * Missing `arguments` in a tool call means `{}`; unknown fields are rejected (they are typos).
 */
export function validateModelScript(data: unknown, source = "model script"): ScriptTurn[] {
  if (!Array.isArray(data)) {
    throw new ModelScriptError(`${source}: expected a JSON array of assistant turns, got ${describe(data)}`, source);
  }
  const turns: ScriptTurn[] = [];
  data.forEach((raw: unknown, index) => {
    const at = `turns[${index}]`;
    const fail = (field: string | undefined, problem: string): never => {
      throw new ModelScriptError(`${source}: ${field ? `${at}.${field}` : at} ${problem}`, source, index, field);
    };
    if (typeof raw === "string") {
      turns.push({ text: raw });
      return;
    }
    if (!isPlainObject(raw)) {
      return fail(undefined, `must be a string or an object with "text" and/or "toolCalls", got ${describe(raw)}`);
    }
    for (const key of Object.keys(raw)) {
      if (!TURN_FIELDS.includes(key)) fail(key, `is not a known field (a turn has "text" and/or "toolCalls")`);
    }
    const turn: ScriptTurn = {};
    if (raw.text !== undefined) {
      if (typeof raw.text !== "string") fail("text", `must be a string, got ${describe(raw.text)}`);
      turn.text = raw.text as string;
    }
    if (raw.toolCalls !== undefined) {
      if (!Array.isArray(raw.toolCalls)) fail("toolCalls", `must be an array, got ${describe(raw.toolCalls)}`);
      turn.toolCalls = (raw.toolCalls as unknown[]).map((call, i) => {
        const field = `toolCalls[${i}]`;
        if (!isPlainObject(call)) return fail(field, `must be an object with "name" and "arguments", got ${describe(call)}`);
        for (const key of Object.keys(call)) {
          if (!CALL_FIELDS.includes(key)) fail(`${field}.${key}`, `is not a known field (a tool call has "name" and "arguments")`);
        }
        if (typeof call.name !== "string" || call.name.trim() === "") {
          fail(`${field}.name`, `must be a non-empty string, got ${call.name === "" ? "an empty string" : describe(call.name)}`);
        }
        const args = call.arguments ?? {};
        if (!isPlainObject(args)) fail(`${field}.arguments`, `must be a JSON object, got ${describe(args)}`);
        return { name: call.name as string, arguments: args as Record<string, unknown> };
      });
    }
    if (turn.text === undefined && turn.toolCalls === undefined) {
      fail(undefined, `must have "text" and/or "toolCalls"`);
    }
    turns.push(turn);
  });
  return turns;
}

/** Parse and validate script text (JSON). */
export function parseModelScript(json: string, source = "model script"): ScriptTurn[] {
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (error) {
    const detail = errorMessage(error);
    throw new ModelScriptError(`${source}: not valid JSON (${detail})`, source);
  }
  return validateModelScript(data, source);
}

/** The turns of a script plus the cursor that hands them out, one per model call. */
export class ModelScript {
  private cursor = 0;
  constructor(
    readonly turns: readonly ScriptTurn[],
    /** Absolute path of the file it came from, if any. */
    readonly file?: string,
  ) {}

  /** The next turn, or the exhausted reply once all are used. */
  next(): ScriptTurn {
    const turn = this.turns[this.cursor];
    if (turn === undefined) return { text: SCRIPT_EXHAUSTED_TEXT };
    this.cursor++;
    return turn;
  }

  get consumed(): number {
    return this.cursor;
  }

  get remaining(): number {
    return this.turns.length - this.cursor;
  }
}

/** Read and validate a script file (path relative to `cwd`). Throws ModelScriptError. */
export function loadModelScript(file: string, cwd = process.cwd()): ModelScript {
  const path = resolve(cwd, file);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const detail = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : String((error as Error).message);
    throw new ModelScriptError(`cannot read model script ${file}: ${detail}`, file);
  }
  return new ModelScript(parseModelScript(text, file), path);
}

interface ScriptInstance {
  script: ModelScript;
  settings: ReplyStreamSettings;
}

const instances = new Map<string, ScriptInstance>();
let inlineCount = 0;

/**
 * The Model object for a script. Streams through pi-ai once `registerParleyProviders()` ran.
 * Registering a second script from the same file replaces the first (its cursor restarts).
 */
export function createScriptModel(script: ModelScript, settings: ReplyStreamSettings = {}): Model<Api> {
  const baseUrl = script.file ? pathToFileURL(script.file).href : `parley-script:inline/${++inlineCount}`;
  instances.set(baseUrl, { script, settings });
  return localModel({
    id: SCRIPT_MODEL_ID,
    name: script.file ? `Scripted model (${basename(script.file)})` : "Scripted model",
    api: SCRIPT_API,
    provider: PARLEY_PROVIDER,
    baseUrl,
  });
}

/** pi-ai stream function for api "parley-script". Consumes one turn per call. */
export function streamScriptModel(pi: PiAiCore, model: Model<Api>, context: Context, options?: SimpleStreamOptions): AssistantMessageEventStream {
  const instance = instances.get(model.baseUrl);
  return streamPlannedReply(
    pi,
    model,
    context,
    options,
    (): PlannedReply => {
      if (!instance) {
        throw new Error(`No model script is loaded for ${model.baseUrl}; start parley with --model-script FILE`);
      }
      return instance.script.next();
    },
    instance?.settings,
  );
}
