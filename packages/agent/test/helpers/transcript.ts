/**
 * Normalisation for differential transcripts (parley vs pi): the parts of a record that legitimately
 * differ between two runs of the same scenario (random dialog ids, session ids, private temp paths)
 * are replaced by stable placeholders. Nothing else is touched.
 */
import { AGENT_CEILING_MS, deadline, type AgentProcess, type Rec } from "./spawn.js";

export const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const WHOLE_UUID = new RegExp(`^${UUID.source}$`, "i");
const PLACEHOLDER = /^<ui-\d+>$/;

/** Applies `fn` to every string inside `value` (object keys are kept). */
export function mapStrings(value: unknown, fn: (s: string, key: string | undefined) => string, key?: string): unknown {
  if (typeof value === "string") return fn(value, key);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, fn));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, fn, k)]));
  }
  return value;
}

/**
 * Names the uuid `id`s of `extension_ui_request` records `<ui-1>`, `<ui-2>`, ... in order of first
 * appearance. Feed it one agent's records in order; the same logical dialog then has the same
 * placeholder in both agents' transcripts, and a scenario can address it by placeholder.
 */
export class UiIds {
  readonly #toPlaceholder = new Map<string, string>();
  readonly #toReal = new Map<string, string>();

  see(record: Rec): void {
    const id = record["id"];
    if (record.type !== "extension_ui_request" || typeof id !== "string" || !WHOLE_UUID.test(id)) return;
    if (this.#toPlaceholder.has(id)) return;
    const placeholder = `<ui-${this.#toPlaceholder.size + 1}>`;
    this.#toPlaceholder.set(id, placeholder);
    this.#toReal.set(placeholder, id);
  }

  /** Every known dialog uuid in `s` (ids also appear inside parley's error texts) → its placeholder. */
  rename(s: string): string {
    return s.replace(UUID, (uuid) => this.#toPlaceholder.get(uuid) ?? "<unseen-uuid>");
  }

  /** The real id behind a placeholder (throws for a placeholder this agent never produced). */
  real(placeholder: string): string {
    const id = this.#toReal.get(placeholder);
    if (id === undefined) throw new Error(`no dialog ${placeholder} in this transcript (known: ${[...this.#toReal.keys()].join(", ")})`);
    return id;
  }

  /** A command the scenario sends, with `<ui-N>` placeholders rewritten to this agent's real ids. */
  resolve<T>(input: T): T {
    return mapStrings(input, (s) => (PLACEHOLDER.test(s) ? this.real(s) : s)) as T;
  }
}

export interface NormaliseOptions {
  ids: UiIds;
  /** Literal path prefixes that differ between the two runs (private HOME, cwd) → placeholder. */
  paths: ReadonlyArray<readonly [prefix: string, placeholder: string]>;
  /**
   * The reference is pi 1.6 (which has them too): responses' `disposition` and an assistant
   * message_start's stopReason are compared as sent, and a `durationMs` (timing) becomes a
   * placeholder after it is checked, so its presence is compared. Otherwise (pi 0.73.1, which has
   * none of them) they are checked and dropped.
   */
  newestPi?: boolean;
}

/** Placeholder ids, `sessionId`, and private paths; every other byte is kept. */
/**
 * The newest pi answers prompt, steer and follow_up with `data: {disposition}`; pi 0.73.1, the
 * reference these transcripts compare with, answers without data. The data is checked (a known
 * disposition for the command, nothing else) and dropped, so the rest still compares.
 */
const DISPOSITIONS: Record<string, readonly string[]> = {
  prompt: ["started", "queued", "handled"],
  steer: ["queued", "handled"],
  follow_up: ["queued", "handled"],
};

function withoutDisposition(record: Rec): Rec {
  const allowed = typeof record["command"] === "string" ? DISPOSITIONS[record["command"]] : undefined;
  if (record.type !== "response" || record["success"] !== true || allowed === undefined || record["data"] === undefined) return record;
  const data = record["data"] as Record<string, unknown>;
  const disposition = data["disposition"];
  if (Object.keys(data).length !== 1 || typeof disposition !== "string" || !allowed.includes(disposition)) {
    throw new Error(`unexpected data in a ${String(record["command"])} response: ${JSON.stringify(data)}`);
  }
  const { data: _dropped, ...rest } = record;
  return rest as Rec;
}

/** tool_execution_end's `durationMs` (newest pi; not in 0.73.1): checked, then dropped. */
function withoutDuration(record: Rec): Rec {
  if (record.type !== "tool_execution_end" || !("durationMs" in record)) return record;
  const { durationMs, ...rest } = record;
  if (typeof durationMs !== "number" || durationMs < 0) throw new Error(`bad durationMs in tool_execution_end: ${JSON.stringify(durationMs)}`);
  return rest as Rec;
}

/**
 * An assistant's message_start: the newest pi says stopReason "pending" (parley too; checked by
 * newest-rpc-client.e2e.test.ts), pi 0.73.1 whatever its provider's first snapshot holds ("stop",
 * or the faux provider's final reason). Not compared: message_end carries the real one.
 */
function withoutStartingStopReason(record: Rec): Rec {
  const message = record["message"] as { role?: unknown; stopReason?: unknown } | undefined;
  if (record.type !== "message_start" || message?.role !== "assistant" || !("stopReason" in message)) return record;
  const { stopReason: _starting, ...rest } = message;
  return { ...record, message: rest };
}

/**
 * A tool result message's `durationMs` (newest pi; not in 0.73.1), wherever messages appear
 * (message_*, turn_end, agent_end, get_messages): checked, then dropped.
 */
function withoutResultDurations(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutResultDurations);
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value).map(([k, v]) => [k, withoutResultDurations(v)] as const);
  const object = Object.fromEntries(entries) as Record<string, unknown>;
  if (object["role"] !== "toolResult" || !("durationMs" in object)) return object;
  const { durationMs, ...rest } = object;
  if (typeof durationMs !== "number" || durationMs < 0) throw new Error(`bad durationMs in a tool result message: ${JSON.stringify(durationMs)}`);
  return rest;
}

/**
 * Every `durationMs` (tool_execution_end, tool results, aborted assistant messages) and bash's
 * structured `wall_time_seconds` checked, then a placeholder: timing, not behaviour.
 */
function durationsAsPlaceholders(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(durationsAsPlaceholders);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => {
      if (k === "durationMs") {
        if (typeof v !== "number" || !Number.isInteger(v) || v < 0) throw new Error(`bad durationMs: ${JSON.stringify(v)}`);
        return [k, "<ms>"];
      }
      if (k === "wall_time_seconds") {
        if (typeof v !== "number" || v < 0) throw new Error(`bad wall_time_seconds: ${JSON.stringify(v)}`);
        return [k, "<seconds>"];
      }
      return [k, durationsAsPlaceholders(v)];
    }),
  );
}

export function normaliseRecord(record: Rec, { ids, paths, newestPi = false }: NormaliseOptions): Rec {
  ids.see(record);
  const kept = newestPi
    ? (durationsAsPlaceholders(record) as Rec)
    : withoutResultDurations(withoutStartingStopReason(withoutDuration(withoutDisposition(record))));
  return mapStrings(kept, (s, key) => {
    if (key === "sessionId") return "<sessionId>";
    let out = ids.rename(s);
    for (const [prefix, placeholder] of paths) out = out.split(prefix).join(placeholder);
    return out;
  }) as Rec;
}

/** True if every field of `shape` is deep-equal to the same field of `record` (a subset match). */
export function matchesShape(record: unknown, shape: unknown): boolean {
  if (shape === null || typeof shape !== "object") return Object.is(record, shape);
  if (record === null || typeof record !== "object") return false;
  if (Array.isArray(shape)) {
    return Array.isArray(record) && record.length === shape.length && shape.every((s, i) => matchesShape(record[i], s));
  }
  return Object.entries(shape).every(([k, v]) => matchesShape((record as Record<string, unknown>)[k], v));
}

/**
 * Starts `run` for every scenario, `slots` at a time (pi takes ~1 s of CPU to start, so running
 * all at once on 2 cores would only make every timing worse); results by scenario name.
 */
export function runInSlots<S extends { name: string }, R>(scenarios: S[], run: (scenario: S) => Promise<R>, slots = 2): Map<string, Promise<R>> {
  const results = new Map<string, Promise<R>>();
  const queue: Promise<unknown>[] = Array.from({ length: slots }, () => Promise.resolve());
  scenarios.forEach((scenario, i) => {
    const slot = i % slots;
    const result = queue[slot]!.then(() => run(scenario));
    queue[slot] = result.catch(() => {});
    results.set(scenario.name, result);
  });
  return results;
}

/**
 * Waits until `agent` answers a get_state (or exits), then takes that response out of its records,
 * so the transcripts are as if it had not been sent. Both sides of a differential scenario are
 * serving before its first step: a dialog timeout on the fast side must not run out while the
 * other side is still starting (pi takes seconds, more on a loaded machine).
 */
export async function waitUntilServing(agent: AgentProcess): Promise<void> {
  const id = "differential-ready-probe";
  agent.send({ type: "get_state", id });
  const isProbe = (r: Rec): boolean => r.type === "response" && r["id"] === id;
  await Promise.race([agent.waitFor(isProbe).catch(() => {}), agent.exited]);
  const index = agent.records.findIndex(isProbe);
  if (index >= 0) agent.records.splice(index, 1);
}

/** When a step is over: the first record matching `match` (then optionally `thenQuiet` ms more), `quiet` ms of waiting, or process exit. */
export type Terminal = { match: object; thenQuiet?: number } | { quiet: number } | { exit: true };

/** The pseudo-record a step that ends with the process's exit gets last: `{type: EXIT, code}`. */
export const EXIT = "(exit)";

const sleep = (ms: number): Promise<void> => new Promise((res) => setTimeout(res, ms));

/**
 * The raw records of one step of a differential scenario: from `from` up to the record that ends
 * it, plus an exit pseudo-record when the step ends with the process. Fails fast, with the records
 * so far and stderr, when the agent exits before the awaited record arrives.
 */
export async function collectStep(
  side: string,
  agent: AgentProcess,
  exit: () => { code: number | null } | undefined,
  from: number,
  until: Terminal,
): Promise<{ records: Rec[]; end: number }> {
  let end: number;
  if ("quiet" in until) {
    // A quiet window asserts that nothing more comes; it grows with PARLEY_TEST_DEADLINE_SCALE.
    await sleep(deadline(until.quiet));
    end = agent.records.length;
  } else if ("exit" in until) {
    await Promise.race([agent.exited, sleep(deadline(AGENT_CEILING_MS)).then(() => Promise.reject(new Error(`${side} did not exit`)))]);
    end = agent.records.length;
  } else {
    const found = agent.waitFor((r) => matchesShape(r, until.match), AGENT_CEILING_MS, from);
    found.catch(() => {});
    const exitedFirst = agent.exited.then(async () => {
      await sleep(100);
      throw new Error(
        `${side} exited (${exit()?.code}) before ${JSON.stringify(until.match)}; records: ${JSON.stringify(agent.records.slice(from))}\nstderr: ${agent.stderr()}`,
      );
    });
    exitedFirst.catch(() => {});
    const record = await Promise.race([found, exitedFirst]);
    end = agent.records.indexOf(record, from) + 1;
    if (until.thenQuiet !== undefined) {
      await sleep(deadline(until.thenQuiet));
      end = agent.records.length;
    }
  }
  const records = agent.records.slice(from, end);
  if ("exit" in until) records.push({ type: EXIT, code: exit()?.code ?? null });
  return { records, end };
}
