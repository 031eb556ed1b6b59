/**
 * 1,000 dialogs pending at once from three extensions, answered over the wire in random order
 * while some time out and some are withdrawn by their extension's AbortSignal. Every dialog must
 * end exactly once — on the wire (one accepted answer or one dismissal, every other answer
 * refused) and in the extension (one result, the right one) — and nothing may be left behind:
 * no pending dialog in get_ui_state, no timer in the process.
 *
 * The plan of each dialog (kind, timeout, abort time) comes from a seed; set DIALOG_STORM_SEED
 * to replay one.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { plan, type Kind } from "./fixtures/faults/storm-lib.js";
import { spawnParley, type AgentProcess, type Rec } from "./helpers/spawn.js";

const FIX = join(import.meta.dirname, "fixtures/faults");
const SEED = Number(process.env["DIALOG_STORM_SEED"] ?? Math.floor(Math.random() * 2 ** 31));
const STORMS = [
  { name: "a", n: 334, seed: SEED },
  { name: "b", n: 333, seed: SEED + 1 },
  { name: "c", n: 333, seed: SEED + 2 },
] as const;
const TOTAL = STORMS.reduce((sum, s) => sum + s.n, 0);
const DIALOG_METHODS = new Set(["select", "confirm", "input", "editor"]);

/** A small seeded PRNG for the test's own choices (answer order, values). */
function prng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

const agents: AgentProcess[] = [];
afterEach(() => {
  for (const a of agents.splice(0)) a.kill();
});

interface StormResult {
  i: number;
  kind: Kind;
  value: string | boolean | null;
  aborted: boolean;
  settled: number;
}

async function timeouts(agent: AgentProcess): Promise<number> {
  const from = agent.records.length;
  const res = await agent.request({ type: "prompt", message: "/storm-a-timers" });
  expect(res["success"]).toBe(true);
  const note = await agent.waitFor((r) => r["method"] === "notify" && String(r["message"]).includes('"timeouts"'), 5000, from);
  return (JSON.parse(String(note["message"])) as { timeouts: number }).timeouts;
}

describe(`1,000 dialogs pending at once (seed ${SEED})`, () => {
  it("each resolves exactly once, answers in random order racing timeouts and aborts; nothing leaks", async () => {
    const agent = spawnParley(["-e", join(FIX, "storm-a.ts"), "-e", join(FIX, "storm-b.ts"), "-e", join(FIX, "storm-c.ts")]);
    agents.push(agent);
    const rand = prng(SEED ^ 0x5eed);
    const context = `seed ${SEED} (DIALOG_STORM_SEED=${SEED} to replay)`;

    const timersBefore = await timeouts(agent);

    // ---- open 1,000 dialogs from three extensions at once ----
    const from = agent.records.length;
    for (const s of STORMS) agent.send({ type: "prompt", message: `/storm-${s.name} ${s.n} ${s.seed}`, id: `storm-${s.name}` });
    const isDialog = (r: Rec): boolean => r.type === "extension_ui_request" && DIALOG_METHODS.has(String(r["method"]));
    await agent.until(() => agent.records.slice(from).filter(isDialog).length >= TOTAL, 15_000);
    const requests = agent.records.slice(from).filter(isDialog);
    expect(requests.length, context).toBe(TOTAL);
    expect(new Set(requests.map((r) => r["id"])).size, context).toBe(TOTAL);

    // Map each request to its storm and index (title "name:i"), and check it carries its plan.
    const byId = new Map<string, { storm: (typeof STORMS)[number]; i: number; kind: Kind; timeout?: number; abortAfter?: number; req: Rec }>();
    for (const req of requests) {
      const [name, index] = String(req["title"]).split(":");
      const storm = STORMS.find((s) => s.name === name)!;
      const i = Number(index);
      const p = plan(storm.seed, i);
      expect(req["method"], context).toBe(p.kind);
      expect(req["timeout"], context).toBe(p.timeout);
      byId.set(String(req["id"]), { storm, i, ...p, req });
    }
    expect(byId.size).toBe(TOTAL);

    // A late-attaching client sees every dialog still pending (none answered yet).
    const stateRes = await agent.request({ type: "get_ui_state" });
    const stateAt = agent.records.indexOf(stateRes);
    const dismissedBefore = agent.records.slice(from, stateAt).filter((r) => r.type === "extension_ui_dismissed").length;
    const pending = (stateRes["data"] as { pendingDialogs: { request: Rec }[] }).pendingDialogs;
    expect(pending.length, context).toBe(TOTAL - dismissedBefore);
    for (const p of pending) expect(byId.has(String(p.request["id"])), context).toBe(true);

    // ---- answer all 1,000 in random order, in 20 bursts over ~1.5 s ----
    const order = [...byId.keys()];
    for (let k = order.length - 1; k > 0; k--) {
      const j = Math.floor(rand() * (k + 1));
      [order[k], order[j]] = [order[j]!, order[k]!];
    }
    const sent = new Map<string, { first: string | boolean | null; valid: number; invalid: number }>();
    const answerFor = (kind: Kind): { record: Record<string, unknown>; value: string | boolean | null } => {
      if (rand() < 0.1) return { record: { cancelled: true }, value: kind === "confirm" ? false : null };
      switch (kind) {
        case "select": {
          const v = ["alpha", "beta", "gamma"][Math.floor(rand() * 3)]!;
          return { record: { value: v }, value: v };
        }
        case "confirm": {
          const v = rand() < 0.5;
          return { record: { confirmed: v }, value: v };
        }
        default: {
          const v = `answer ${Math.floor(rand() * 1e6)} \u2028 😀 "q"\n`;
          return { record: { value: v }, value: v };
        }
      }
    };
    const invalidFor = (kind: Kind): Record<string, unknown> =>
      kind === "confirm" ? { confirmed: "yes" } : kind === "select" ? { value: "delta" } : { value: 42 };

    const bursts = 20;
    for (let b = 0; b < bursts; b++) {
      for (const id of order.slice((b * order.length) / bursts, ((b + 1) * order.length) / bursts)) {
        const d = byId.get(id)!;
        const entry = { first: null as string | boolean | null, valid: 0, invalid: 0 };
        if (rand() < 0.05) {
          agent.send({ type: "extension_ui_response", id, ...invalidFor(d.kind) });
          entry.invalid++;
        }
        const a = answerFor(d.kind);
        agent.send({ type: "extension_ui_response", id, ...a.record });
        entry.first = a.value;
        entry.valid++;
        if (rand() < 0.05) {
          agent.send({ type: "extension_ui_response", id, ...answerFor(d.kind).record });
          entry.valid++;
        }
        sent.set(id, entry);
      }
      // Pacing, not a wait: the bursts spread out so answers meet dialogs at every stage; the
      // checks below hold for any spacing.
      await new Promise((r) => setTimeout(r, 75));
    }

    // ---- every storm command ends and reports ----
    for (const s of STORMS) {
      const res = await agent.response(`storm-${s.name}`, 15_000);
      expect(res["success"], context).toBe(true);
    }
    const reports = new Map<string, StormResult[]>();
    for (const r of agent.records.slice(from)) {
      if (r["method"] !== "notify") continue;
      const body = JSON.parse(String(r["message"])) as { storm: string; results?: StormResult[] };
      if (body.results) {
        expect(reports.has(body.storm), `${context}: storm ${body.storm} reported twice`).toBe(false);
        reports.set(body.storm, body.results);
      }
    }
    expect([...reports.keys()].sort()).toEqual(["a", "b", "c"]);

    // ---- per dialog: exactly one ending on the wire, and the extension got the right value ----
    const after = agent.records.slice(from);
    const dismissed = new Map<string, Rec[]>();
    const errors = new Map<string, Rec[]>();
    for (const r of after) {
      if (r.type === "extension_ui_dismissed") dismissed.set(String(r["id"]), [...(dismissed.get(String(r["id"])) ?? []), r]);
      if (r.type === "extension_ui_error") errors.set(String(r["id"]), [...(errors.get(String(r["id"])) ?? []), r]);
    }
    const problems: string[] = [];
    let timedOut = 0;
    let aborted = 0;
    let answered = 0;
    for (const [id, d] of byId) {
      const result = reports.get(d.storm.name)![d.i]!;
      const s = sent.get(id)!;
      const dis = dismissed.get(id) ?? [];
      const errs = errors.get(id) ?? [];
      const where = `${d.storm.name}:${d.i} (${d.kind}${d.timeout !== undefined ? `, timeout ${d.timeout}` : ""}${d.abortAfter !== undefined ? `, abort after ${d.abortAfter}` : ""}) id ${id}`;
      const deflt = d.kind === "confirm" ? false : null;
      if (result.i !== d.i || result.kind !== d.kind) problems.push(`${where}: report out of place ${JSON.stringify(result)}`);
      if (result.settled !== 1) problems.push(`${where}: settled ${result.settled} times in the extension`);
      if (dis.length > 1) problems.push(`${where}: dismissed ${dis.length} times`);
      // Every answer line is either accepted (no record) or refused (one extension_ui_error), so
      // accepted answers = lines sent - refusals; with the dismissals they must make exactly one.
      const endings = dis.length + (s.valid + s.invalid - errs.length);
      if (endings !== 1)
        problems.push(
          `${where}: ${endings} endings on the wire (dismissed ${dis.length}, sent ${s.valid} valid + ${s.invalid} invalid, refused ${errs.length}: ${errs.map((e) => e["code"]).join(",")})`,
        );
      for (const e of errs) {
        const ok = (e["code"] === "invalid_response" && e["pending"] === true) || (e["code"] === "already_resolved" && e["pending"] === false);
        if (!ok) problems.push(`${where}: unexpected refusal ${JSON.stringify(e)}`);
      }
      if (errs.filter((e) => e["code"] === "invalid_response").length > s.invalid) problems.push(`${where}: a valid answer was refused as invalid`);
      if (dis.length === 1) {
        const reason = dis[0]!["reason"];
        if (reason === "timeout") timedOut++;
        if (reason === "aborted") aborted++;
        const expectedReason = d.timeout !== undefined ? "timeout" : d.abortAfter !== undefined ? "aborted" : "(none: only the client can end it)";
        if (reason !== expectedReason) problems.push(`${where}: dismissed with reason ${String(reason)}, expected ${expectedReason}`);
        if (result.value !== deflt)
          problems.push(`${where}: dismissed, but the extension got ${JSON.stringify(result.value)} instead of ${JSON.stringify(deflt)}`);
        if (dis[0]!["method"] !== d.kind) problems.push(`${where}: dismissal names method ${String(dis[0]!["method"])}`);
        if (reason === "aborted" && !result.aborted) problems.push(`${where}: dismissed as aborted, but the extension's signal did not fire`);
      } else {
        answered++;
        if (JSON.stringify(result.value) !== JSON.stringify(s.first)) {
          problems.push(`${where}: the extension got ${JSON.stringify(result.value)}, the client answered ${JSON.stringify(s.first)}`);
        }
        if (result.aborted) problems.push(`${where}: aborted in the extension, but no dismissal was announced`);
      }
    }
    expect(problems, `${context}: ${problems.length} problems`).toEqual([]);
    // The run really mixed the three endings.
    expect(answered, context).toBeGreaterThan(500);
    expect(timedOut, context).toBeGreaterThan(0);
    expect(aborted, context).toBeGreaterThan(0);
    console.log(`dialog storm ${context}: ${answered} answered, ${timedOut} timed out, ${aborted} aborted`);

    // ---- nothing left behind ----
    const finalState = await agent.request({ type: "get_ui_state" });
    expect((finalState["data"] as { pendingDialogs: unknown[] }).pendingDialogs, context).toEqual([]);
    expect(await timeouts(agent), `${context}: Timeout handles before the storm vs after`).toBe(timersBefore);
    expect(
      agent.records.filter((r) => r.type === "extension_error"),
      context,
    ).toEqual([]);
    expect(agent.garbage).toEqual([]);
  });
});
