#!/usr/bin/env node
/**
 * Wire fuzzer for `parley --mode rpc`: a seeded generator of hostile input lines, an oracle that
 * says which reply each line must get, and a runner that spawns parley, streams the lines through
 * a real pipe and checks every byte that comes back.
 *
 *   node scripts/fuzz.mjs                          # 10^6 lines for each of 4 random seeds
 *   node scripts/fuzz.mjs --lines 200000 --seed 42 --seed 7
 *   node scripts/fuzz.mjs --unicode-blank          # also lines made only of U+2028, NBSP, BOM, VT, FF
 *   node scripts/fuzz.mjs --hung-hooks [--runs K]   # a handler that never settles in each hook in turn
 *                                                  # (packages/agent/test/hung-hooks.test.ts, K runs, default 120)
 *   node scripts/fuzz.mjs --stuck-main [--runs K]   # a main thread stuck in an extension's loop, ended by each
 *                                                  # signal and stdin EOF, K rounds (default 3) of
 *                                                  # packages/agent/test/stuck-main-thread.e2e.test.ts
 *   node scripts/fuzz.mjs --interleave [--runs K] [--seed S]  # the interleaving model (scripts/interleave.mjs):
 *                                                  # K (default 40) random command sequences of up to 40
 *                                                  # commands, cut at random, instead of the line fuzzer
 *
 * Exit status 0 when every run passes, 1 otherwise (the seed and the first offending lines are
 * printed; rerun with `--seed S` to reproduce). `packages/agent/test/fuzz.e2e.test.ts` runs the same
 * generator with 10^5 lines.
 *
 * What a run checks:
 * - parley stays up (no exit, no signal) until stdin closes, then exits 0;
 * - stdout is strict JSONL: LF-separated, no CR byte, valid UTF-8, every line a JSON object with a
 *   string `type`;
 * - every line that must be answered gets exactly one reply, in input order: a `response` for a
 *   command line (a JSON object whose `type` is not `extension_ui_response`) and for every line
 *   that is not JSON or not an object (or is longer than --max-line-bytes), echoing the `id` when
 *   it is a string or a finite number, with `command` = the line's `type` (or "parse"), and the
 *   `success` the generator expects; an `extension_ui_error` for each `extension_ui_response`
 *   (there is never a pending dialog, so `unknown_id`, or `invalid_response` without a string id).
 *   Replies are matched positionally, which is exact: a missing, extra, duplicated or reordered
 *   reply is reported as such, with the line that caused it;
 * - no `extension_error` (that is where parley reports exceptions nobody caught);
 * - a final `get_state` succeeds.
 * Only blank lines (nothing but space, tab or CR) get no reply, as docs/protocol.md documents.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const PARLEY_BIN = join(ROOT, "node_modules/.bin/parley");
export const DEMO = join(ROOT, "examples/extensions/rpc-demo.ts");

// ---- seeded PRNG (sfc32) ------------------------------------------------------------------

export function createPrng(seed) {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed >>> 0;
  const next = () => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 15; i++) next();
  const rng = {
    next,
    /** integer in [0, n) */
    int: (n) => Math.floor(next() * n),
    /** integer in [lo, hi] */
    range: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    chance: (p) => next() < p,
    pick: (list) => list[Math.floor(next() * list.length)],
    /** log-uniform integer in [lo, hi] */
    logRange: (lo, hi) => Math.floor(Math.exp(Math.log(lo) + next() * (Math.log(hi) - Math.log(lo)))),
    weighted: (table) => {
      let total = 0;
      for (const [w] of table) total += w;
      let x = next() * total;
      for (const [w, v] of table) {
        x -= w;
        if (x < 0) return v;
      }
      return table[table.length - 1][1];
    },
  };
  return rng;
}

// ---- the command model, read from the protocol's JSON Schema --------------------------------

/** [{type, fields: [{name, required, kind, values?}]}] for every command, from command.json. */
export function loadCommandModel(root = ROOT) {
  const schema = JSON.parse(readFileSync(join(root, "packages/protocol/json-schema/command.json"), "utf8"));
  const defs = schema.$defs ?? {};
  const deref = (s) => (s && s.$ref ? deref(defs[s.$ref.split("/").pop()]) : s);
  const kindOf = (raw) => {
    const s = deref(raw);
    if (s.anyOf && s.anyOf.every((b) => deref(b).const !== undefined)) return { kind: "enum", values: s.anyOf.map((b) => deref(b).const) };
    if (s.anyOf) return { kind: "string|number" };
    if (s.type === "array") return { kind: "array" };
    return { kind: s.type };
  };
  return schema.anyOf.map((ref) => {
    const s = deref(ref);
    const required = new Set(s.required ?? []);
    const fields = Object.entries(s.properties)
      .filter(([name]) => name !== "type")
      .map(([name, prop]) => ({ name, required: required.has(name), ...kindOf(prop) }));
    return { type: s.properties.type.const, fields };
  });
}

/** Commands that start long work when valid: the fuzzer only ever sends invalid ones. */
export const LONG_RUNNING = new Set([
  "prompt",
  "steer",
  "follow_up",
  "abort",
  "new_session",
  "compact",
  "bash",
  "export_html",
  "switch_session",
  "fork",
  "clone",
]);

// ---- line generator -----------------------------------------------------------------------

const J = (v) => JSON.stringify(v);
/** An object as JSON text from [key, jsonText] pairs: allows __proto__ keys, duplicates, raw numbers. */
const obj = (pairs) => `{${pairs.map(([k, v]) => `${J(k)}:${v}`).join(",")}}`;

const PROTO_KEYS = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf", "__defineGetter__", "isPrototypeOf"];
const HUGE_NUMBERS = [
  "1e400",
  "-1e400",
  "1e308",
  "-1e308",
  "5e-324",
  "1e-400",
  "123456789012345678901234567890",
  "-0",
  "0.1",
  "9007199254740993",
  "1E+2",
  "-9.999999999999999e307",
];

/**
 * A deterministic stream of input lines (each a Buffer without its LF).
 * options.ffIds: ids of fire-and-forget requests parley sent (answering them must be refused).
 */
export function createLineGenerator(seed, options = {}) {
  const rng = createPrng(seed);
  const model = options.model ?? loadCommandModel();
  const byType = new Map(model.map((c) => [c.type, c]));
  const ffIds = options.ffIds ?? [];
  const maxDepth = options.maxDepth ?? 10_000;
  const longMax = options.longMax ?? 1_000_000;
  const unicodeBlank = options.unicodeBlank ?? false;
  const tag = `s${seed >>> 0}`;
  let counter = 0;
  const usedSpecial = new Set();

  const SAFE = [
    "get_state",
    "get_commands",
    "get_ui_state",
    "get_messages",
    "get_available_thinking_levels",
    "cycle_thinking_level",
    "get_session_stats",
    "get_fork_messages",
    "get_last_assistant_text",
    "clear_queue",
    "abort_retry",
    "abort_bash",
    "get_available_models",
    "set_session_name",
    "set_steering_mode",
    "set_follow_up_mode",
    "set_thinking_level",
    "set_auto_compaction",
    "set_auto_retry",
    "set_model",
  ];

  const unicodeChar = () =>
    rng.weighted([
      [10, () => String.fromCharCode(rng.range(0x20, 0x7e))],
      [2, () => "\u2028"],
      [1, () => "\u2029"],
      [1, () => "\u0000"],
      [1, () => "\r"],
      [1, () => "\n"],
      [1, () => '"\\'],
      [1, () => "😀"],
      [1, () => "\ud800"], // lone surrogate: JSON.stringify escapes it
      [1, () => "\udfff"],
      [1, () => "é"],
      [1, () => "\u00a0"],
      [1, () => "\ufeff"],
      [1, () => "\u007f"],
    ])();
  const shortString = (max = 24) => {
    let s = "";
    const n = rng.int(max + 1);
    for (let i = 0; i < n; i++) s += unicodeChar();
    return s;
  };
  const longString = () => {
    const n = rng.logRange(1024, longMax);
    const unit = rng.pick(["a", "\u2028", "é", 'x\\"', "😀", " "]);
    return unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
  };
  const deep = () => {
    const depth = rng.range(Math.min(100, maxDepth), maxDepth);
    return rng.chance(0.5) ? "[".repeat(depth) + "]".repeat(depth) : '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
  };

  /** A fresh id as JSON text, unique within this run (string or finite number). */
  const uniqueId = () => {
    const n = ++counter;
    const special = rng.chance(0.01) ? rng.pick([...PROTO_KEYS, "", " ", "\u2028", "\r", "null", "0"]) : undefined;
    if (special !== undefined && !usedSpecial.has(special)) {
      usedSpecial.add(special);
      return J(special);
    }
    return rng.weighted([
      [70, () => J(`${tag}-${n}`)],
      [5, () => J(`${tag}\u2028${n}😀${rng.pick(PROTO_KEYS)}`)],
      [10, () => String(1_000_000_000 + n)],
      [3, () => `-${n}.25`],
      [3, () => `${n}e250`],
      [3, () => `${n}${"0".repeat(30)}`],
      [2, () => `${n}e-310`],
      [4, () => (n < 1_000_000 ? `1${String(n).padStart(6, "0")}E2` : J(`${tag}-${n}`))],
    ])();
  };
  /** An id that is present but not echoable (wrong type or not finite). */
  const badId = () => rng.pick(["null", "true", "false", "[]", "{}", '["x"]', '{"id":"x"}', "1e400", "-1e400", deep]);
  /** Set when the last idPair() produced an id of the wrong type (which makes the command invalid). */
  let lastIdBad = false;
  const idPair = () => {
    lastIdBad = false;
    return rng.weighted([
      [92, () => [["id", uniqueId()]]],
      [4, () => []],
      [
        4,
        () => {
          lastIdBad = true;
          const b = badId();
          return [["id", typeof b === "function" ? b() : b]];
        },
      ],
    ])();
  };
  /** The success a command built with idPair() must get, were its id fine. */
  const unlessBadId = (success) => (lastIdBad ? false : success);

  const validValue = (field) => {
    switch (field.kind) {
      case "string":
        return J(shortString(12) || "x");
      case "boolean":
        return rng.chance(0.5) ? "true" : "false";
      case "enum":
        return J(rng.pick(field.values));
      case "string|number":
        return uniqueId();
      case "array":
        return "[]";
      default:
        return "null";
    }
  };
  /** A value that field.kind rejects, whatever the rest of the command. */
  const wrongValue = (field) => {
    const anyType = [
      "null",
      "1",
      "-1",
      "0",
      "true",
      "false",
      "[]",
      "{}",
      '["a"]',
      '{"type":"text","text":"x"}',
      ...HUGE_NUMBERS.filter((n) => !n.includes("e-4")),
    ];
    switch (field.kind) {
      case "string":
        return rng.chance(0.02) ? deep() : rng.pick(anyType.filter((v) => !v.startsWith('"')));
      case "boolean":
        return rng.chance(0.02) ? deep() : rng.pick([...anyType.filter((v) => v !== "true" && v !== "false"), '"true"', '"false"', '""']);
      case "enum":
        return rng.pick([
          ...anyType,
          '""',
          J(`${rng.pick(field.values).toUpperCase()}`),
          J(` ${rng.pick(field.values)}`),
          J(`${rng.pick(field.values)}\u0000`),
          J(rng.pick(PROTO_KEYS)),
          J(shortString(8) + "§"),
        ]);
      case "string|number":
        return rng.pick(["null", "true", "false", "[]", "{}", '["x"]', "1e400", "-1e400"]);
      case "array":
        // Not an array, or an array whose items are not ImageContent.
        return rng.pick([
          "null",
          "1",
          '"image"',
          "{}",
          "true",
          "[1]",
          "[null]",
          '["x"]',
          "[{}]",
          '[{"type":"image"}]',
          '[{"type":"image","data":1,"mimeType":"image/png"}]',
          "[[]]",
          deep(),
        ]);
      default:
        return '"?"';
    }
  };

  // ---- line kinds (each returns {text|bytes, kind, success?}) ----

  const validCommand = (extras = true) => {
    const type = rng.pick(SAFE);
    const c = byType.get(type);
    const pairs = [["type", J(type)], ...idPair()];
    let success = true;
    for (const f of c.fields) {
      if (f.name === "id") continue;
      if (f.required || rng.chance(0.3)) {
        let v = validValue(f);
        if (type === "set_session_name") {
          v = J(rng.chance(0.1) ? rng.pick(["", " ", "\t", "\u2028", "\u00a0 "]) : shortString(30));
          if (JSON.parse(v).trim() === "") success = false;
        }
        pairs.push([f.name, v]);
      }
    }
    if (type === "set_model") success = undefined; // a random provider/model is (almost surely) not found
    if (extras && rng.chance(0.15)) {
      const k = rng.chance(0.5) ? rng.pick(PROTO_KEYS) : `x-${shortString(6)}`;
      const v = rng.pick([
        () => "1",
        () => J(shortString()),
        () =>
          obj([
            ["type", '"prompt"'],
            ["message", '"x"'],
          ]),
        () =>
          obj([
            ["id", '"other"'],
            ["polluted", "true"],
          ]),
        () => "[1,2,3]",
      ])();
      pairs.splice(rng.int(pairs.length + 1), 0, [k, v]);
    }
    shuffleMaybe(pairs);
    return { text: pad(obj(pairs)), kind: "valid", success: success === undefined ? (lastIdBad ? false : undefined) : unlessBadId(success) };
  };

  const mutatedField = () => {
    const c = rng.pick(model);
    const pairs = [["type", J(c.type)]];
    const fields = c.fields.filter((f) => f.name !== "id");
    // The field to break: any field, the id included; with no other field, the id.
    const targets = [...fields, { name: "id", kind: "string|number", required: false }];
    const target = rng.pick(targets);
    const missing = target.required && rng.chance(0.3);
    if (target.name !== "id") pairs.push(...idPair());
    for (const f of fields) {
      if (f === target) {
        if (!missing) pairs.push([f.name, wrongValue(f)]);
      } else if (f.required || rng.chance(0.3)) {
        pairs.push([f.name, validValue(f)]);
      }
    }
    if (target.name === "id") pairs.push(["id", wrongValue(target)]);
    // A long-running command must be invalid for sure: if the id we broke were accepted
    // (it is not: 1e400 is Infinity), the command would still run, so break a field too.
    if (LONG_RUNNING.has(c.type) && target.name === "id" && fields.length > 0) {
      const f = rng.pick(fields);
      const at = pairs.findIndex(([k]) => k === f.name);
      if (at >= 0) pairs[at] = [f.name, wrongValue(f)];
      else pairs.push([f.name, wrongValue(f)]);
    }
    shuffleMaybe(pairs);
    return { text: pad(obj(pairs)), kind: "mutated", success: false };
  };

  const badType = () => {
    const type = rng.weighted([
      [
        4,
        () =>
          J(
            rng.pick([
              ...PROTO_KEYS,
              "",
              " ",
              "GET_STATE",
              " get_state",
              "get_state ",
              "get_state\u0000",
              "get-state",
              "extension_ui_request",
              "response",
              "Extension_UI_Response",
              "extension_ui_response ",
            ]),
          ),
      ],
      [3, () => J(shortString(16) + "?")],
      [2, () => rng.pick(["null", "1", "true", "[]", '["get_state"]', '{"type":"get_state"}', "1e400"])],
      [1, () => undefined],
    ])();
    const pairs = [...idPair(), ...(type !== undefined ? [["type", type]] : [])];
    if (rng.chance(0.3)) pairs.push(["message", '"hello"']);
    shuffleMaybe(pairs);
    return { text: pad(obj(pairs)), kind: "bad-type", success: false };
  };

  const randomBytes = () => {
    const n = rng.logRange(1, 400);
    const parts = [];
    for (let i = 0; i < n; i++) {
      parts.push(
        rng.weighted([
          [8, () => [rng.range(0x20, 0x7e)]],
          [3, () => [...Buffer.from(rng.pick(["{", "}", "[", "]", '"', ":", ",", "\\", '"type"', '"id"', '"get_state"', "null", "1e999"]))]],
          [1, () => [0x00]],
          [1, () => [0x0d]],
          [1, () => [0x09]],
          [2, () => [rng.range(0x80, 0xff)]],
          [1, () => [0xe2, 0x80, 0xa8]],
          [1, () => [0xe2, 0x80, 0xa9]],
          [1, () => [0xef, 0xbb, 0xbf]],
          [1, () => [0xf0, 0x9f, 0x98, 0x80]],
          [
            1,
            () =>
              rng.pick([
                [0xe2, 0x80],
                [0xf0, 0x9f],
                [0xc0, 0xaf],
                [0xed, 0xa0, 0x80],
                [0xf8, 0x88, 0x80, 0x80, 0x80],
                [0xff, 0xfe],
              ]),
          ],
          [1, () => [rng.range(0x01, 0x1f)].filter((b) => b !== 0x0a)],
        ])(),
      );
    }
    return { bytes: Buffer.from(parts.flat()), kind: "random-bytes" };
  };

  const truncated = () => {
    const base = rng.weighted([
      [3, validCommand],
      [2, mutatedField],
      [1, uiResponse],
    ])();
    const bytes = Buffer.from(base.text, "utf8");
    const cut = rng.int(bytes.length); // strictly shorter; may split a UTF-8 sequence
    return { bytes: bytes.subarray(0, cut), kind: "truncated" };
  };

  const nonObject = () => ({
    text: pad(
      rng.pick([
        "null",
        "0",
        "-0",
        "42",
        "1e400",
        '"get_state"',
        '"\u2028"',
        "true",
        "false",
        "[]",
        "{}",
        '[{"type":"get_state","id":"arr"}]',
        "[" + '{"type":"get_state"},'.repeat(50) + "1]",
        '""',
        '{"id":null}',
      ]),
    ),
    kind: "non-object",
  });

  const uiResponse = () => {
    const id = rng.weighted([
      [4, () => (ffIds.length ? J(rng.pick(ffIds)) : J("no-ff"))],
      [3, () => J(`${tag}-ui-${++counter}`)],
      [1, () => J(rng.pick([...PROTO_KEYS, "", "\u2028"]))],
      [1, () => rng.pick(["1", "null", "true", "[]", '{"id":"x"}', "1e400"])],
      [1, () => undefined],
    ])();
    const answer = rng.pick([
      () => [["value", '"red"']],
      () => [["value", "42"]],
      () => [["confirmed", "true"]],
      () => [["confirmed", '"yes"']],
      () => [["cancelled", "true"]],
      () => [["cancelled", "false"]],
      () => [["value", '{"__proto__":{"x":1}}']],
      () => [["value", J(shortString())]],
      () => [],
      () => [
        ["value", '"a"'],
        ["confirmed", "false"],
        ["cancelled", "true"],
      ],
    ])();
    const pairs = [["type", '"extension_ui_response"'], ...(id !== undefined ? [["id", id]] : []), ...answer];
    if (rng.chance(0.1)) pairs.push(["__proto__", obj([["type", '"get_state"']])]);
    shuffleMaybe(pairs);
    return { text: pad(obj(pairs)), kind: "ui-response" };
  };

  const protoHeavy = () => {
    const id = idPair();
    const v = rng.pick([
      () => ({ pairs: [["__proto__", obj([["type", '"get_state"']])], ...id], success: false }),
      () => ({
        pairs: [
          ["type", '"get_state"'],
          [
            "__proto__",
            obj([
              ["id", '"zzz"'],
              ["polluted", "true"],
            ]),
          ],
          ...id,
        ],
        success: true,
      }),
      () => ({
        pairs: [["type", '"set_steering_mode"'], ["mode", '"all"'], ["constructor", obj([["prototype", obj([["polluted", "true"]])]])], ...id],
        success: true,
      }),
      () => ({ pairs: [["type", '"set_follow_up_mode"'], ["mode", '"__proto__"'], ...id], success: false }),
      () => ({ pairs: [["type", '"set_thinking_level"'], ["level", '"constructor"'], ...id], success: false }),
      () => ({ pairs: [["type", '"__proto__"'], ["__proto__", '"get_state"'], ...id], success: false }),
      () => ({ pairs: [["type", '"get_ui_state"'], ["prototype", "null"], ["__proto__", "null"], ...id], success: true }),
      () => ({ pairs: [["type", '"get_state"'], ["type", '"constructor"'], ...id], success: false }), // duplicate key: last wins
      () => ({ pairs: [["type", '"nope"'], ["type", '"get_commands"'], ...id], success: true }),
    ])();
    return { text: pad(obj(v.pairs)), kind: "proto", success: unlessBadId(v.success) };
  };

  const hugeNumbers = () => {
    const idText = uniqueId();
    return rng.pick([
      () => ({
        text: obj([
          ["type", '"get_state"'],
          ["id", rng.chance(0.5) ? `${++counter}e300` : `${++counter}${"9".repeat(40)}`],
        ]),
        kind: "huge",
        success: true,
      }),
      () => ({
        text: obj([
          ["type", '"set_auto_retry"'],
          ["enabled", rng.pick(HUGE_NUMBERS)],
          ["id", idText],
        ]),
        kind: "huge",
        success: false,
      }),
      () => ({
        text: obj([
          ["type", '"set_thinking_level"'],
          ["level", rng.pick(HUGE_NUMBERS)],
          ["id", idText],
        ]),
        kind: "huge",
        success: false,
      }),
      () => ({
        text: obj([
          ["type", '"get_messages"'],
          ["n", rng.pick(HUGE_NUMBERS)],
          ["id", idText],
        ]),
        kind: "huge",
        success: true,
      }),
      () => ({
        text: obj([
          ["type", '"get_state"'],
          ["id", rng.pick(["1e400", "-1e400"])],
        ]),
        kind: "huge",
        success: false,
      }),
      () => ({ text: rng.pick(HUGE_NUMBERS), kind: "huge" }),
    ])();
  };

  const deepNesting = () =>
    rng.pick([
      () => ({ text: deep(), kind: "deep" }),
      () => ({ text: obj([["type", '"get_state"'], ["x", deep()], ...idPair()]), kind: "deep", success: unlessBadId(true) }),
      () => ({ text: obj([["type", '"set_steering_mode"'], ["mode", deep()], ...idPair()]), kind: "deep", success: false }),
      () => ({
        text: obj([
          ["type", '"get_state"'],
          ["id", deep()],
        ]),
        kind: "deep",
        success: false,
      }),
      () => ({ text: obj([["type", deep()], ...idPair()]), kind: "deep", success: false }),
      () => ({ text: "[".repeat(maxDepth), kind: "deep" }), // unbalanced
      () => ({
        text: obj([
          ["type", '"extension_ui_response"'],
          ["id", J(`${tag}-deep-${++counter}`)],
          ["value", deep()],
        ]),
        kind: "deep",
      }),
    ])();

  const longStrings = () =>
    rng.pick([
      () => ({ text: obj([["type", '"get_state"'], ["padding", J(longString())], ...idPair()]), kind: "long", success: unlessBadId(true) }),
      () => ({
        text: obj([["type", '"set_session_name"'], ["name", rng.chance(0.5) ? "1" : "[]"], ["padding", J(longString())], ...idPair()]),
        kind: "long",
        success: false,
      }),
      () => ({ text: obj([["type", J(longString())], ...idPair()]), kind: "long", success: false }),
      () => ({
        text: obj([
          ["type", '"get_commands"'],
          ["id", J(`${tag}-${++counter}-${longString()}`)],
        ]),
        kind: "long",
        success: true,
      }),
      () => ({ text: obj([["type", '"set_steering_mode"'], ["mode", J(longString())], ...idPair()]), kind: "long", success: false }),
      () => ({
        text: obj([
          ["type", '"extension_ui_response"'],
          ["id", J(`${tag}-ui-${++counter}`)],
          ["value", J(longString())],
        ]),
        kind: "long",
      }),
      () => ({ text: `x${longString()}`, kind: "long" }),
    ])();

  const blank = () => ({
    text: rng.pick(unicodeBlank ? ["", " ", "\t", "\r", " \t ", "\u2028", "\u00a0", "\ufeff", "\u000b", "\u000c", " \u2029 "] : ["", " ", "\t", "\r", " \t "]),
    kind: "blank",
  });

  const byteMutated = () => {
    const base = validCommand(false);
    const bytes = Buffer.from(base.text, "utf8");
    const edits = rng.range(1, 3);
    let out = [...bytes];
    for (let i = 0; i < edits; i++) {
      const at = rng.int(out.length + 1);
      const b = rng.pick([0x00, 0x0d, 0x22, 0x5c, 0x7b, 0x7d, 0x2c, 0x3a, 0xff, 0xe2, rng.range(0x20, 0x7e)]);
      const op = rng.int(3);
      if (op === 0) out.splice(at, 0, b);
      else if (op === 1) out.splice(at, 1);
      else out[at] = b;
    }
    out = out.filter((b) => b !== 0x0a && b !== undefined);
    return { bytes: Buffer.from(out), kind: "byte-mutated" };
  };

  function pad(text) {
    if (!rng.chance(0.03)) return text;
    const ws = () => rng.pick([" ", "\t", "\r", "  "]);
    return ws() + text + (rng.chance(0.5) ? ws() : "");
  }
  function shuffleMaybe(pairs, allow = true) {
    if (!allow || !rng.chance(0.3)) return;
    for (let i = pairs.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [pairs[i], pairs[j]] = [pairs[j], pairs[i]];
    }
  }

  const weights = options.weights ?? {};
  const w = (name, dflt) => weights[name] ?? dflt;
  const KINDS = [
    [w("valid", 24), validCommand],
    [w("mutated", 20), mutatedField],
    [w("bad-type", 8), badType],
    [w("random-bytes", 10), randomBytes],
    [w("truncated", 8), truncated],
    [w("non-object", 3), nonObject],
    [w("ui-response", 10), uiResponse],
    [w("proto", 5), protoHeavy],
    [w("huge", 4), hugeNumbers],
    [w("deep", 0.3), deepNesting],
    [w("long", 0.15), longStrings],
    [w("blank", 1), blank],
    [w("byte-mutated", 5), byteMutated],
  ];

  return {
    /** The next line: {bytes (no LF), kind, success?} */
    next() {
      for (;;) {
        const g = rng.weighted(KINDS)();
        let bytes = g.bytes ?? Buffer.from(g.text, "utf8");
        if (rng.chance(0.04)) bytes = Buffer.concat([bytes, Buffer.from([0x0d])]);
        // Safety: never send a command that could start long work. By construction only
        // "mutated" lines (invalid for sure) carry a long-running type.
        const parsed = tryParse(bytes);
        if (isObject(parsed) && LONG_RUNNING.has(parsed.type) && g.kind !== "mutated") continue;
        // Lines of nothing but non-JSON whitespace (U+2028, NBSP, BOM, VT, FF…) are dropped by
        // parley (it skips lines whose JS trim() is empty); pinned separately, so only sent on request.
        if (!unicodeBlank && g.kind !== "blank" && isUnicodeBlank(bytes)) continue;
        return { bytes, kind: g.kind, success: g.success };
      }
    },
  };
}

// ---- oracle -------------------------------------------------------------------------------

function tryParse(bytes) {
  let end = bytes.length;
  if (end > 0 && bytes[end - 1] === 0x0d) end--;
  try {
    return JSON.parse(bytes.toString("utf8", 0, end));
  } catch {
    return undefined;
  }
}
/** Blank for String#trim() but not for JSON (which only knows space, tab, CR, LF). */
export function isUnicodeBlank(bytes) {
  let end = bytes.length;
  if (end > 0 && bytes[end - 1] === 0x0d) end--;
  const text = bytes.toString("utf8", 0, end);
  return text.trim() === "" && !/^[ \t\r]*$/.test(text);
}
const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
const idKey = (id) => (typeof id === "string" ? `s:${id}` : `n:${id}`);
const echoable = (v) => typeof v === "string" || (typeof v === "number" && Number.isFinite(v));

/**
 * What parley must write for one input line (bytes without the LF):
 * null (blank line: nothing), or {reply: "response", idKey, command, success?} or
 * {reply: "ui_error", idKey, code}.
 */
export function expectationFor(bytes, maxLineBytes, success) {
  let end = bytes.length;
  if (end > 0 && bytes[end - 1] === 0x0d) end--;
  if (end > maxLineBytes) return { reply: "response", idKey: "-", command: "parse", success: false };
  const text = bytes.toString("utf8", 0, end);
  if (/^[ \t\r]*$/.test(text)) return null;
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return { reply: "response", idKey: "-", command: "parse", success: false };
  }
  if (!isObject(value)) return { reply: "response", idKey: "-", command: "parse", success: false };
  const id = Object.hasOwn(value, "id") ? value.id : undefined;
  if (value.type === "extension_ui_response") {
    return typeof id === "string" ? { reply: "ui_error", idKey: idKey(id), code: "unknown_id" } : { reply: "ui_error", idKey: "-", code: "invalid_response" };
  }
  return {
    reply: "response",
    idKey: echoable(id) ? idKey(id) : "-",
    command: typeof value.type === "string" ? value.type : "parse",
    ...(success !== undefined ? { success } : {}),
  };
}

const preview = (bytes) => {
  const head = bytes.subarray(0, 160).toString("utf8");
  return JSON.stringify(head) + (bytes.length > 160 ? ` …(${bytes.length} bytes)` : "");
};

// ---- runner -------------------------------------------------------------------------------

function readRssKb(pid) {
  try {
    const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/**
 * Spawns parley, sends `lines` generated lines, checks the output. Resolves with a summary;
 * `failures` lists everything that went wrong (empty on success). Never rejects for a parley fault.
 */
export async function runFuzz(options) {
  const seed = options.seed >>> 0;
  const lines = options.lines;
  const maxLineBytes = options.maxLineBytes ?? 256 * 1024;
  const stallMs = options.stallMs ?? 20_000;
  const log = options.log ?? (() => {});
  const bin = options.bin ?? PARLEY_BIN;
  const extension = options.extension ?? DEMO;
  const failures = [];
  const fail = (msg) => {
    if (failures.length < 40) failures.push(msg);
    else if (failures.length === 40) failures.push("… (more failures omitted)");
  };
  const t0 = Date.now();

  const home = mkdtempSync(join(tmpdir(), "parley-fuzz-"));
  const child = spawn(bin, ["--mode", "rpc", "--no-session", "-e", extension, "--max-line-bytes", String(maxLineBytes)], {
    cwd: home,
    env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent") },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d) => {
    if (stderr.length < 1_000_000) stderr += d;
  });
  child.stdin.on("error", (e) => fail(`stdin write error: ${e.message}`));
  let exit;
  const exited = new Promise((res) => child.on("exit", (code, signal) => res((exit = { code, signal }))));

  // ---- output side: strict JSONL, matched positionally against the expectations ----
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  const queue = []; // expected replies in order: {reply, idKey, command?, success?, code?, index, line}
  let head = 0;
  const stats = {
    bytesIn: 0,
    bytesOut: 0,
    records: 0,
    responses: 0,
    uiErrors: 0,
    blank: 0,
    events: {},
    kinds: {},
    expectedResponses: 0,
    expectedUiErrors: 0,
    withId: 0,
    withoutId: 0,
    peakRssKb: 0,
  };
  let pendingOut = [];
  let lastProgress = Date.now();
  let garbage = 0;
  const ffIds = [];
  let started = false;
  let startResolve;
  const startedP = new Promise((r) => (startResolve = r));
  let finalResponse;
  const wakers = new Set();
  const wake = () => {
    for (const w of [...wakers]) w();
  };

  const describeActual = (r) => JSON.stringify(r).slice(0, 300);
  const matches = (e, r) =>
    e.reply === "response"
      ? r.type === "response" &&
        (Object.hasOwn(r, "id") ? idKey(r.id) : "-") === e.idKey &&
        r.command === e.command &&
        (e.success === undefined || r.success === e.success)
      : r.type === "extension_ui_error" && (Object.hasOwn(r, "id") ? idKey(r.id) : "-") === e.idKey && r.code === e.code;
  const show = (e) =>
    `line #${e.index} (${e.kind}) ${e.line} → expected ${e.reply} ${e.idKey} ${e.command ?? e.code}${e.success !== undefined ? ` success=${e.success}` : ""}`;

  const sameReply = (e, r) =>
    e.reply === "response"
      ? r.type === "response" && (Object.hasOwn(r, "id") ? idKey(r.id) : "-") === e.idKey && r.command === e.command
      : r.type === "extension_ui_error" && (Object.hasOwn(r, "id") ? idKey(r.id) : "-") === e.idKey;
  const onReply = (r) => {
    if (head < queue.length && matches(queue[head], r)) {
      head++;
    } else if (head < queue.length && sameReply(queue[head], r)) {
      fail(`wrong reply for ${show(queue[head])}: got ${describeActual(r)}`);
      head++;
    } else {
      // Resynchronise to tell a missing reply from an extra or reordered one.
      let found = -1;
      for (let k = head + 1; k < Math.min(queue.length, head + 2000); k++) {
        if (matches(queue[k], r)) {
          found = k;
          break;
        }
      }
      if (found >= 0) {
        for (let k = head; k < found; k++) fail(`no reply (or out of order) for ${show(queue[k])}; next reply was ${describeActual(r)}`);
        head = found + 1;
      } else {
        fail(`unexpected reply ${describeActual(r)}; ${head < queue.length ? `waiting for ${show(queue[head])}` : "no reply was pending"}`);
      }
    }
    if (head > 50_000) {
      queue.splice(0, head);
      head = 0;
    }
  };

  const onRecordLine = (buf) => {
    stats.records++;
    if (buf.includes(0x0d)) fail(`stdout line contains a CR byte: ${preview(buf)}`);
    let text;
    try {
      text = utf8.decode(buf);
    } catch {
      fail(`stdout line is not valid UTF-8: ${preview(buf)}`);
      text = buf.toString("utf8");
    }
    let r;
    try {
      r = JSON.parse(text);
    } catch {
      garbage++;
      fail(`stdout line is not JSON: ${preview(buf)}`);
      return;
    }
    if (!isObject(r) || typeof r.type !== "string") {
      garbage++;
      fail(`stdout line is not a record (object with a string type): ${preview(buf)}`);
      return;
    }
    if (!started) {
      if (r.type === "extension_ui_request" && typeof r.id === "string") ffIds.push(r.id);
      if (r.type === "response" && r.id === "fuzz-start") {
        started = true;
        startResolve();
      }
      return;
    }
    if (r.type === "response") {
      stats.responses++;
      if (typeof r.command !== "string" || typeof r.success !== "boolean" || (r.success === false && typeof r.error !== "string")) {
        fail(`malformed response: ${describeActual(r)}`);
      }
      if (r.id === "fuzz-final") finalResponse = r;
      onReply(r);
    } else if (r.type === "extension_ui_error") {
      stats.uiErrors++;
      if (typeof r.error !== "string" || r.pending !== false) fail(`malformed extension_ui_error: ${describeActual(r)}`);
      onReply(r);
    } else {
      stats.events[r.type] = (stats.events[r.type] ?? 0) + 1;
      if (r.type !== "session_info_changed" && r.type !== "queue_update") fail(`unexpected record: ${describeActual(r)}`);
    }
  };

  child.stdout.on("data", (chunk) => {
    stats.bytesOut += chunk.length;
    lastProgress = Date.now();
    let start = 0;
    for (;;) {
      const lf = chunk.indexOf(0x0a, start);
      if (lf === -1) {
        if (start < chunk.length) pendingOut.push(chunk.subarray(start));
        break;
      }
      const piece = chunk.subarray(start, lf);
      const line = pendingOut.length ? Buffer.concat([...pendingOut, piece]) : piece;
      pendingOut = [];
      onRecordLine(line);
      start = lf + 1;
    }
    wake();
  });
  child.on("exit", wake);

  const rssTimer = setInterval(() => {
    stats.peakRssKb = Math.max(stats.peakRssKb, readRssKb(child.pid));
  }, 250);

  const waitUntil = (cond, what) =>
    new Promise((res) => {
      const check = () => {
        if (cond()) return done(true);
        if (exit) return done(false, `parley exited (${JSON.stringify(exit)}) while waiting for ${what}`);
        if (Date.now() - lastProgress > stallMs) return done(false, `no output for ${stallMs} ms while waiting for ${what}`);
      };
      const timer = setInterval(check, 200);
      let settled = false;
      const done = (ok, why) => {
        if (settled) return;
        settled = true;
        clearInterval(timer);
        wakers.delete(check);
        if (!ok) fail(why);
        res(ok);
      };
      wakers.add(check);
      check();
    });

  const write = (buf) =>
    new Promise((res) => {
      stats.bytesIn += buf.length;
      if (child.stdin.write(buf)) return res(true);
      let settled = false;
      const finish = (ok) => {
        if (settled) return;
        settled = true;
        clearInterval(timer);
        child.stdin.off("drain", onDrain);
        res(ok);
      };
      const onDrain = () => finish(true);
      child.stdin.on("drain", onDrain);
      const timer = setInterval(() => {
        if (exit) {
          fail(`parley exited (${JSON.stringify(exit)}) while reading input`);
          finish(false);
        } else if (Date.now() - lastProgress > stallMs) {
          fail(
            `parley stopped reading input and writing output for ${stallMs} ms (hang)${head < queue.length ? `; oldest unanswered: ${show(queue[head])}` : ""}`,
          );
          finish(false);
        }
      }, 200);
    });

  try {
    // Start-up: the response to this comes after session_start, whose fire-and-forget
    // requests give us ids that answers must be refused for.
    child.stdin.write('{"type":"get_state","id":"fuzz-start"}\n');
    const startTimer = setTimeout(() => startResolve(), 30_000);
    await Promise.race([startedP, exited]);
    clearTimeout(startTimer);
    if (!started) {
      fail(`parley did not answer the first get_state (exit ${JSON.stringify(exit)}); stderr:\n${stderr.slice(-2000)}`);
      return finish();
    }
    log(`seed ${seed}: started in ${Date.now() - t0} ms; fire-and-forget ids: ${ffIds.length}`);

    const gen = createLineGenerator(seed, { ...options.generator, ffIds });
    const rng = createPrng(seed ^ 0x5bd1e995);
    let pieces = [];
    let pending = 0;
    let target = rng.logRange(1, 65536);
    const flush = async () => {
      if (pending === 0) return true;
      const all = Buffer.concat(pieces, pending);
      pieces = [];
      pending = 0;
      target = rng.logRange(1, 65536);
      // Cut the chunk at random points (inside UTF-8 sequences, between CR and LF, …).
      const cuts = [0];
      for (let k = rng.int(3); k > 0; k--) cuts.push(rng.int(all.length));
      cuts.push(all.length);
      cuts.sort((x, y) => x - y);
      for (let k = 0; k + 1 < cuts.length; k++) {
        if (cuts[k + 1] > cuts[k] && !(await write(all.subarray(cuts[k], cuts[k + 1])))) return false;
      }
      return true;
    };
    let lastLog = Date.now();
    for (let i = 0; i < lines; i++) {
      const g = gen.next();
      stats.kinds[g.kind] = (stats.kinds[g.kind] ?? 0) + 1;
      const e = expectationFor(g.bytes, maxLineBytes, g.success);
      if (e === null) stats.blank++;
      else {
        if (e.reply === "response") stats.expectedResponses++;
        else stats.expectedUiErrors++;
        if (e.idKey === "-") stats.withoutId++;
        else stats.withId++;
        queue.push({ ...e, index: i, kind: g.kind, line: preview(g.bytes) });
      }
      pieces.push(g.bytes, Buffer.from([0x0a]));
      pending += g.bytes.length + 1;
      if (pending >= target && !(await flush())) return finish();
      if (Date.now() - lastLog > 5000) {
        lastLog = Date.now();
        log(`seed ${seed}: ${i + 1}/${lines} lines sent, ${stats.responses} responses, rss ${stats.peakRssKb} kB peak`);
      }
    }
    if (!(await flush())) return finish();
    queue.push({ reply: "response", idKey: "s:fuzz-final", command: "get_state", success: true, index: lines, kind: "final", line: "final get_state" });
    stats.expectedResponses++;
    if (!(await write(Buffer.from('{"type":"get_state","id":"fuzz-final"}\n')))) return finish();
    await waitUntil(() => head >= queue.length || finalResponse !== undefined, "the final get_state");
    // Replies are in order, so the final one comes last; give stragglers a moment anyway.
    await new Promise((r) => setTimeout(r, 100));
    if (!finalResponse) fail("the final get_state got no response");
    else if (finalResponse.success !== true || !isObject(finalResponse.data)) fail(`the final get_state failed: ${describeActual(finalResponse)}`);
    for (let k = head; k < queue.length && k < head + 20; k++) fail(`no reply for ${show(queue[k])}`);
    if (exit) fail(`parley exited during the run: ${JSON.stringify(exit)}`);
    return finish();
  } finally {
    clearInterval(rssTimer);
  }

  async function finish() {
    // A clean end: stdin EOF → exit 0 promptly.
    const alive = !exit;
    child.stdin.end();
    const t = Date.now();
    const timeout = new Promise((r) => setTimeout(() => r("timeout"), 10_000));
    const how = await Promise.race([exited, timeout]);
    if (how === "timeout") {
      fail("parley did not exit within 10 s of stdin EOF");
      child.kill("SIGKILL");
      await exited;
    } else if (alive && (exit.code !== 0 || exit.signal)) {
      fail(`parley exited with ${JSON.stringify(exit)} after stdin EOF`);
    }
    if (pendingOut.length) fail(`stdout ended without a final LF: ${preview(Buffer.concat(pendingOut))}`);
    if (/\n\s+at .+:\d+:\d+\)?\n/.test(stderr)) fail(`stack trace on stderr:\n${stderr.slice(0, 3000)}`);
    rmSync(home, { recursive: true, force: true });
    return {
      seed,
      lines,
      ms: Date.now() - t0,
      exitMs: Date.now() - t,
      exit,
      stats: { ...stats, garbage },
      stderr: stderr.slice(0, 4000),
      failures,
    };
  }
}

// ---- CLI ----------------------------------------------------------------------------------

async function cli(argv) {
  const seeds = [];
  let lines = 1_000_000;
  let runs = 4;
  const generator = {};
  let maxLineBytes;
  let interleave = false;
  let hungHooks = false;
  let stuckMain = false;
  let runsGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === "--seed") seeds.push(Number(val()));
    else if (a === "--lines") lines = Number(val());
    else if (a === "--runs") {
      runs = Number(val());
      runsGiven = true;
    } else if (a === "--interleave") interleave = true;
    else if (a === "--hung-hooks") hungHooks = true;
    else if (a === "--stuck-main") stuckMain = true;
    else if (a === "--max-depth") generator.maxDepth = Number(val());
    else if (a === "--max-line-bytes") maxLineBytes = Number(val());
    else if (a === "--unicode-blank") generator.unicodeBlank = true;
    else if (a === "-h" || a === "--help") {
      console.log("node scripts/fuzz.mjs [--lines N] [--seed S]... [--runs K] [--max-depth D] [--max-line-bytes B] [--unicode-blank]");
      console.log("node scripts/fuzz.mjs --interleave [--runs K] [--seed S]");
      console.log("node scripts/fuzz.mjs --hung-hooks [--runs K]");
      console.log("node scripts/fuzz.mjs --stuck-main [--runs K]");
      return 0;
    } else throw new Error(`unknown argument ${a}`);
  }
  if (hungHooks) return hungHooksStage(runsGiven ? runs : 120);
  if (stuckMain) return stuckMainStage(runsGiven ? runs : 3);
  if (interleave) return interleaveStage({ runs: runsGiven ? runs : 40, seed: seeds[0] });
  const seedsGiven = seeds.length;
  if (seeds.length === 0) for (let k = 0; k < runs; k++) seeds.push(Math.floor(Math.random() * 2 ** 32));
  let ok = true;
  for (const seed of seeds) {
    console.error(`fuzz: seed ${seed}, ${lines} lines`);
    const r = await runFuzz({ seed, lines, generator, ...(maxLineBytes ? { maxLineBytes } : {}), log: (m) => console.error(`  ${m}`) });
    const s = r.stats;
    console.error(
      `  ${r.failures.length ? "FAIL" : "ok"}: ${r.ms} ms, ${(s.bytesIn / 1e6).toFixed(1)} MB in, ${(s.bytesOut / 1e6).toFixed(1)} MB out, ` +
        `${s.responses} responses (${s.withId} with id), ${s.uiErrors} ui errors, ${s.blank} blank, peak RSS ${(s.peakRssKb / 1024).toFixed(0)} MB, exit ${JSON.stringify(r.exit)} after ${r.exitMs} ms`,
    );
    if (r.failures.length) {
      ok = false;
      console.error(`  reproduce: node scripts/fuzz.mjs --seed ${seed} --lines ${lines}`);
      for (const f of r.failures) console.error(`  - ${f}`);
    }
  }
  // The whole run also hangs a handler in each hook in turn (its own stage: --hung-hooks).
  if (seedsGiven === 0 && (await hungHooksStage(120)) !== 0) ok = false;
  // And a main thread stuck in a loop, ended by each signal and stdin EOF (--stuck-main).
  if (seedsGiven === 0 && (await stuckMainStage(3)) !== 0) ok = false;
  return ok ? 0 : 1;
}

/** The hung-handler property (each hook in turn never settles), longer than its `npm test` variant. */
function hungHooksStage(runs) {
  console.error(`fuzz --hung-hooks: ${runs} runs`);
  const vitest = join(ROOT, "node_modules/vitest/vitest.mjs");
  return new Promise((done) => {
    const child = spawn(process.execPath, [vitest, "run", "packages/agent/test/hung-hooks.test.ts"], {
      cwd: ROOT,
      env: { ...process.env, HUNG_HOOK_RUNS: String(runs) },
      stdio: ["ignore", "inherit", "inherit"],
    });
    child.on("exit", (code) => done(code === 0 ? 0 : 1));
  });
}

/** A main thread stuck in an extension's loop, ended by every signal parley handles and stdin EOF, `rounds` times. */
function stuckMainStage(rounds) {
  console.error(`fuzz --stuck-main: ${rounds} rounds`);
  const vitest = join(ROOT, "node_modules/vitest/vitest.mjs");
  return new Promise((done) => {
    const child = spawn(process.execPath, [vitest, "run", "packages/agent/test/stuck-main-thread.e2e.test.ts"], {
      cwd: ROOT,
      env: { ...process.env, STUCK_MAIN_ROUNDS: String(rounds) },
      stdio: ["ignore", "inherit", "inherit"],
    });
    child.on("exit", (code) => done(code === 0 ? 0 : 1));
  });
}

/** The interleaving model, longer than its `npm test` variant: more scenarios, up to 40 commands each. */
async function interleaveStage({ runs, seed }) {
  const { checkInterleavings } = await import("./interleave.mjs");
  console.error(`fuzz --interleave: ${runs} scenarios${seed !== undefined ? `, seed ${seed}` : ""}`);
  let n = 0;
  const report = await checkInterleavings({ runs, seed, maxCommands: 40, log: (m) => console.error(`  ${++n}: ${m}`) });
  if (!report) {
    console.error("  ok");
    return 0;
  }
  console.error(`  FAIL (reproduce: node scripts/fuzz.mjs --interleave --seed ${report.seed})`);
  console.error(`  scenario: ${JSON.stringify(report.scenario)}`);
  for (const f of report.failures) console.error(`  - ${f}`);
  console.error(report.stderr);
  return 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  cli(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error) => {
      console.error(error);
      process.exit(2);
    },
  );
}
