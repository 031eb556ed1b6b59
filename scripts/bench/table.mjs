// Turns the results into rows (figure, parley, pi, floor/baseline, ratio, target, met/missed) and
// renders them as a plain-text table.

function num(x) {
  if (x == null || !Number.isFinite(x)) return "–";
  const a = Math.abs(x);
  if (a >= 1000) return Math.round(x).toLocaleString("en-US");
  if (a >= 100) return x.toFixed(0);
  if (a >= 10) return x.toFixed(1);
  return x.toFixed(2);
}

function ratioText(r) {
  if (r == null || !Number.isFinite(r)) return "–";
  if (r >= 100) return r.toFixed(0);
  if (r >= 10) return r.toFixed(1);
  if (r >= 0.1) return r.toFixed(2);
  return r.toFixed(3);
}

/**
 * A cell value: a number, or a failure ({ timeout, timeoutMs } / { error }). `bound` makes a
 * timed-out cell usable in a ratio as "more than timeoutMs".
 */
function cell(v, unit) {
  if (v == null) return { text: "–", value: null };
  if (typeof v === "number") return { text: `${num(v)}${unit ? ` ${unit}` : ""}`, value: v };
  if (v.timeout) return { text: `timeout >${v.timeoutMs / 1000} s`, value: null, lowerBound: v.timeoutMs };
  if (v.error) return { text: "failed", value: null, note: v.error };
  return { text: "–", value: null };
}

/**
 * ratio = a / b. With b only known as "more than X" (a timeout), the ratio is "less than a / X".
 * Returns { text, value, upperBound }.
 */
function ratioOf(a, b) {
  if (a.value == null) return { text: "–", value: null };
  if (b.value != null && b.value !== 0) {
    const value = a.value / b.value;
    return { text: ratioText(value), value };
  }
  if (b.lowerBound) {
    const upper = a.value / b.lowerBound;
    return { text: `<${ratioText(upper)}`, value: null, upperBound: upper };
  }
  return { text: "–", value: null };
}

/** Whether a ratio of `v` meets the target. */
const meets = (target, v) => (target.op === "<=" ? v <= target.value : v >= target.value);

function judge(target, ratio) {
  if (!target) return "";
  const v = ratio.value ?? null;
  if (v != null) return meets(target, v) ? "met" : "MISSED";
  // Only an upper bound is known (pi timed out): it can prove a "≤" target met, nothing else.
  if (target.op === "<=" && ratio.upperBound != null && ratio.upperBound <= target.value) return "met";
  return "n/a";
}

/**
 * The ratio as text, with as many more digits as it takes for the text to read the way it is
 * judged: 0.102 against a target of ≤ 0.1 is shown as "0.102", not as a missed "0.10".
 */
function decisiveText(r, target) {
  if (!target || r.value == null) return r.text;
  let text = r.text;
  for (let digits = 3; digits <= 6 && meets(target, Number(text)) !== meets(target, r.value); digits++) text = r.value.toFixed(digits);
  return text;
}

function makeRow({ section, figure, unit, parley, pi, floor, ratio, ratioKind = "parley/pi", target }) {
  const p = cell(parley, unit);
  const q = cell(pi, unit);
  const f = cell(floor, unit);
  const r = ratio ?? ratioOf(p, q);
  const notes = [...(p.note ? [`parley: ${p.note}`] : []), ...(q.note ? [`pi: ${q.note}`] : []), ...(f.note ? [`floor/baseline: ${f.note}`] : [])];
  return {
    section,
    figure,
    unit,
    parley: p.text,
    pi: q.text,
    floor: f.text,
    ratio: decisiveText(r, target),
    ratioKind,
    target: target ? `${ratioKind} ${target.op === "<=" ? "≤" : "≥"} ${target.value}` : "",
    status: judge(target, r),
    notes,
    values: { parley: p.value, pi: q.value, floor: f.value, ratio: r.value ?? null, ratioUpperBound: r.upperBound ?? null },
  };
}

export function buildRows(results) {
  const rows = [];
  const { startup, extensions, sessions, dialog, fireAndForget, framing, streaming, web, quick } = results;

  if (startup) {
    rows.push(makeRow({ section: "start-up", figure: "cold start (spawn → get_state)", unit: "ms", ...startup.coldStartMs, target: { op: "<=", value: 0.1 } }));
    if (startup.withExtensionMs) {
      rows.push(makeRow({ section: "start-up", figure: "cold start with one extension (imports pi-ai)", unit: "ms", ...startup.withExtensionMs }));
    }
    rows.push(makeRow({ section: "start-up", figure: "idle RSS (settled 1 s)", unit: "MiB", ...startup.idleRssMiB, target: { op: "<=", value: 0.35 } }));
  }
  if (extensions) {
    const section = "start-up with extensions";
    for (const [set, target] of [
      ["rpc-demo", 0.1],
      ["three examples", 0.1],
    ]) {
      const s = extensions.startup[set];
      if (!s) continue;
      const label = set === "rpc-demo" ? "pi's rpc-demo.ts" : "permission-gate + confirm-destructive + todo";
      rows.push(makeRow({ section, figure: `start-up with ${label}`, unit: "ms", ...s.ms, target: { op: "<=", value: target } }));
      rows.push(
        makeRow({
          section,
          figure: `peak RSS at start-up with ${label}`,
          unit: "MiB",
          ...s.peakRssMiB,
          target: { op: "<=", value: 0.35 },
        }),
      );
    }
    for (const [set, label] of [
      ["bench extension only", "first prompt (prompt → first message_update)"],
      ["three examples", "first prompt with the three examples"],
    ]) {
      if (extensions.firstPrompt[set])
        rows.push(makeRow({ section, figure: label, unit: "ms", ...extensions.firstPrompt[set], target: { op: "<=", value: 0.5 } }));
      // For scale, no target: main-thread CPU does not grow with the machine's load as wall time does.
      if (extensions.firstPromptCpuMs?.[set])
        rows.push(
          makeRow({ section, figure: `${label.replace(/ \(.*\)$/, "")}: main-thread CPU to agent_end`, unit: "ms", ...extensions.firstPromptCpuMs[set] }),
        );
    }
  }
  if (sessions) {
    const section = "sessions";
    const n = (x) => x.toLocaleString("en-US");
    rows.push(
      makeRow({
        section,
        figure: `resume ${n(sessions.resumeEntries)} entries (→ get_messages)`,
        unit: "ms",
        ...sessions.resumeMs,
        target: { op: "<=", value: 0.25 },
      }),
    );
    rows.push(makeRow({ section, figure: "resume: peak RSS", unit: "MiB", ...sessions.resumePeakRssMiB, target: { op: "<=", value: 0.4 } }));
    rows.push(makeRow({ section, figure: "append, fresh session (per entry)", unit: "ms", ...sessions.appendFreshMs }));
    rows.push(makeRow({ section, figure: `append at ${n(sessions.appendEntries)} entries (per entry)`, unit: "ms", ...sessions.appendBigMs }));
    rows.push(
      makeRow({
        section,
        figure: `parley: append cost at ${n(sessions.appendEntries)} vs fresh`,
        unit: "ms",
        parley: sessions.appendBigMs.parley,
        floor: sessions.appendFreshMs.parley,
        ratio: ratioOf(cell(sessions.appendBigMs.parley, "ms"), cell(sessions.appendFreshMs.parley, "ms")),
        ratioKind: "big/fresh",
        target: { op: "<=", value: 1.5 },
      }),
    );
    rows.push(makeRow({ section, figure: `get_entries, all ${n(sessions.appendEntries)}`, unit: "ms", ...sessions.entriesAllMs }));
    rows.push(makeRow({ section, figure: "get_entries with a cursor (last entry)", unit: "ms", ...sessions.entriesCursorMs }));
    const cursor = cell(sessions.entriesCursorMs.parley, "ms");
    const whole = cell(sessions.entriesAllMs.parley, "ms");
    rows.push(
      makeRow({
        section,
        figure: "parley: get_entries with a cursor vs all",
        unit: "ms",
        parley: sessions.entriesCursorMs.parley,
        floor: sessions.entriesAllMs.parley,
        ratio: ratioOf(cursor, whole),
        ratioKind: "cursor/all",
        target: { op: "<=", value: 0.1 },
      }),
    );
  }
  if (dialog) {
    const n = dialog.n.toLocaleString("en-US");
    // Issue 20: the round trip is done, "p50 at pi's, p99 within noise of the floor". At pi's: within
    // the 10% the issue counts as unnoticeable. Within noise: a fresh process's p99 moves 1.5–5×
    // between runs on this machine (scripts/bench/README.md), so a factor of 2 over the floor.
    rows.push(makeRow({ section: "dialog", figure: `dialog round trip p50 (${n} confirms)`, unit: "µs", ...dialog.p50Us, target: { op: "<=", value: 1.1 } }));
    rows.push(makeRow({ section: "dialog", figure: `dialog round trip p99 (${n} confirms)`, unit: "µs", ...dialog.p99Us }));
    rows.push(
      makeRow({
        section: "dialog",
        figure: "dialog round trip p99: parley vs floor",
        unit: "µs",
        parley: dialog.p99Us.parley,
        floor: dialog.p99Us.floor,
        ratio: ratioOf(cell(dialog.p99Us.parley, "µs"), cell(dialog.p99Us.floor, "µs")),
        ratioKind: "parley/floor",
        target: { op: "<=", value: 2 },
      }),
    );
    rows.push(makeRow({ section: "dialog", figure: "peak RSS, dialog load", unit: "MiB", ...dialog.peakRssMiB }));
  }
  if (fireAndForget) {
    const n = fireAndForget.n.toLocaleString("en-US");
    rows.push(
      makeRow({
        section: "fire-and-forget",
        figure: `setStatus throughput (${n} records)`,
        unit: "rec/s",
        ...fireAndForget.recordsPerSec,
        target: { op: ">=", value: 1.3 },
      }),
    );
    rows.push(makeRow({ section: "fire-and-forget", figure: "peak RSS, fire-and-forget load", unit: "MiB", ...fireAndForget.peakRssMiB }));
  }
  if (framing) {
    const lineCases = framing.cases.filter((c) => c.case.startsWith("line:"));
    // The issue's targets name the 16 and 32 MiB lines; --quick applies them to its two smaller sizes.
    const targeted = new Set(lineCases.slice(0, 2).map((c) => c.case));
    const v = (x, key) => (x?.timeout || x?.error ? x : x?.[key]);
    for (const c of framing.cases) {
      const t = targeted.has(c.case);
      rows.push(
        makeRow({
          section: "framing",
          figure: `${c.label}: time`,
          unit: "ms",
          parley: v(c.parley, "ms"),
          pi: v(c.pi, "ms"),
          floor: v(c.baseline, "ms"),
          target: t ? { op: "<=", value: 0.05 } : undefined,
        }),
      );
      rows.push(
        makeRow({
          section: "framing",
          figure: `${c.label}: peak RSS`,
          unit: "MiB",
          parley: v(c.parley, "peakRssMiB"),
          pi: v(c.pi, "peakRssMiB"),
          floor: v(c.baseline, "peakRssMiB"),
          target: t ? { op: "<=", value: 0.5 } : undefined,
        }),
      );
      const p = cell(v(c.parley, "ms"), "ms");
      const b = cell(v(c.baseline, "ms"), "ms");
      rows.push(
        makeRow({
          section: "framing",
          figure: `${c.label}: parley vs linear baseline`,
          unit: "ms",
          parley: v(c.parley, "ms"),
          floor: v(c.baseline, "ms"),
          ratio: ratioOf(p, b),
          ratioKind: "parley/baseline",
          target: { op: "<=", value: 1.2 },
        }),
      );
    }
  }
  if (streaming) {
    for (const r of streaming.rows) {
      const n = r.deltas.toLocaleString("en-US");
      const v = (x, key, scale = 1) => (x?.error ? x : x?.[key] == null ? null : x[key] / scale);
      rows.push(
        makeRow({
          section: "streaming",
          figure: `${n} deltas: stdout`,
          unit: "MiB",
          parley: v(r.parley, "bytes", 2 ** 20),
          pi: v(r.pi, "bytes", 2 ** 20),
          floor: v(r.floor, "bytes", 2 ** 20),
        }),
      );
      rows.push(
        makeRow({ section: "streaming", figure: `${n} deltas: time`, unit: "ms", parley: v(r.parley, "ms"), pi: v(r.pi, "ms"), floor: v(r.floor, "ms") }),
      );
      rows.push(
        makeRow({
          section: "streaming",
          figure: `${n} deltas: peak RSS`,
          unit: "MiB",
          parley: v(r.parley, "peakRssMiB"),
          pi: v(r.pi, "peakRssMiB"),
          floor: v(r.floor, "peakRssMiB"),
        }),
      );
    }
    const g = streaming.bytesPerDeltaGrowth;
    const growth = (x) => (x ? x.factor : null);
    const span = (x) => (x ? `${x.from.toLocaleString("en-US")}→${x.to.toLocaleString("en-US")}` : "");
    const pSpan = span(g.parley);
    const piSpan = span(g.pi);
    const pf = cell(growth(g.parley), "×");
    rows.push(
      makeRow({
        section: "streaming",
        figure: `bytes/delta growth ${pSpan}${piSpan && piSpan !== pSpan ? ` (pi ${piSpan})` : ""}`,
        unit: "×",
        parley: growth(g.parley),
        pi: growth(g.pi),
        floor: growth(g.floor),
        ratio: { text: pf.text === "–" ? "–" : pf.text.replace(" ×", ""), value: pf.value },
        ratioKind: "parley growth",
        target: { op: "<=", value: 1.2 },
      }),
    );
  }
  if (web) {
    const n = web.stream.deltas.toLocaleString("en-US");
    rows.push(makeRow({ section: "web", figure: `page shows a ${n}-delta reply: time`, unit: "ms", parley: web.stream.ms }));
    if (web.stream.pageWorkMs != null)
      rows.push(makeRow({ section: "web", figure: `page's own work (script, style, layout) for it`, unit: "ms", parley: web.stream.pageWorkMs }));
    rows.push(makeRow({ section: "web", figure: `page during the ${n}-delta reply: longest frame gap`, unit: "ms", parley: web.stream.maxFrameGapMs }));
    rows.push(makeRow({ section: "web", figure: `page during the ${n}-delta reply: p99 frame gap`, unit: "ms", parley: web.stream.p99FrameGapMs }));
    if (web.session) {
      const m = web.session.entries.toLocaleString("en-US");
      rows.push(
        makeRow({ section: "web", figure: `a ${m}-message session chosen in the list: newest message on screen`, unit: "ms", parley: web.session.openMs }),
      );
      rows.push(makeRow({ section: "web", figure: `from it to a new session: conversation empty`, unit: "ms", parley: web.session.switchAwayMs }));
    }
    const f = web.fanOut;
    rows.push(makeRow({ section: "web", figure: `fan-out: ${f.n.toLocaleString("en-US")} setStatus to ${f.clients} clients`, unit: "ms", parley: f.ms }));
  }
  if (quick) for (const row of rows) if (row.status) row.status = `${row.status}*`;
  return rows;
}

export function renderTable(rows, { quick } = {}) {
  const header = ["figure", "parley", "pi", "floor / baseline", "ratio", "target", ""];
  const lines = [];
  const data = rows.map((r) => [r.figure, r.parley, r.pi, r.floor, r.ratio, r.target, r.status]);
  const widths = header.map((h, i) => Math.max(h.length, ...data.map((d) => d[i].length)));
  const numeric = new Set([1, 2, 3, 4]);
  const fmt = (cells) =>
    cells
      .map((c, i) => (numeric.has(i) ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join("  ")
      .trimEnd();
  lines.push(fmt(header));
  lines.push(widths.map((w) => "-".repeat(w)).join("  "));
  let section = null;
  rows.forEach((r, i) => {
    if (r.section !== section) {
      if (section !== null) lines.push("");
      lines.push(`[${r.section}]`);
      section = r.section;
    }
    lines.push(fmt(data[i]));
  });
  lines.push("");
  const failures = new Map();
  for (const r of rows) for (const n of r.notes ?? []) failures.set(`${r.figure.replace(/:.*$/, "")}, ${n}`, true);
  for (const f of failures.keys()) lines.push(`failed: ${f}`);
  lines.push("ratio = parley/pi unless the target names another; floor = a do-nothing Node agent, for framing rows the linear baseline reader.");
  const judged = rows.filter((r) => r.status);
  const missed = judged.filter((r) => r.status.startsWith("MISSED"));
  const met = judged.filter((r) => r.status.startsWith("met"));
  lines.push(
    `targets: ${met.length} met, ${missed.length} missed${judged.length - met.length - missed.length ? `, ${judged.length - met.length - missed.length} n/a` : ""}`,
  );
  for (const r of missed) lines.push(`  missed: ${r.figure} (${r.ratio}; target ${r.target})`);
  if (quick) lines.push("* --quick: few iterations and small sizes; indicative only.");
  return lines.join("\n");
}
