/**
 * Line diff for the edit tool's `details.diff`: Myers' O(ND) algorithm on
 * newline-terminated line tokens, rendered with old/new line numbers and a
 * few lines of context, in the layout pi's edit tool reports.
 */

type Op = { kind: "equal" | "removed" | "added"; token: string };

/** Split into lines that keep their "\n", so "b" and "b\n" differ like they do on disk. */
function tokenize(text: string): string[] {
  if (text === "") return [];
  const parts = text.split("\n");
  const tokens = parts.slice(0, -1).map((p) => `${p}\n`);
  const last = parts[parts.length - 1] ?? "";
  if (last !== "") tokens.push(last);
  return tokens;
}

// Bound on the stored Myers trace (cells, O(D^2)). Beyond it the remaining
// section is reported as a wholesale replacement: correct, just less precise.
const MAX_TRACE_CELLS = 16_000_000;

/**
 * Forward Myers search. Snakes (runs of equal lines) are taken as early as
 * possible, which is also how jsdiff (used by pi) aligns ambiguous repeats,
 * so diffs of repeated lines come out the same way.
 */
function myers(a: string[], b: string[]): Op[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d] holds V for diagonals -(d+1)..(d+1) as it was before step d.
  const trace: Int32Array[] = [];
  let cells = 0;
  for (let d = 0; d <= max; d++) {
    cells += 2 * d + 3;
    if (cells > MAX_TRACE_CELLS) return undefined;
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x: number;
      if (k === -d || (k !== d && (v[offset + k - 1] as number) < (v[offset + k + 1] as number))) {
        x = v[offset + k + 1] as number; // move down: insertion
      } else {
        x = (v[offset + k - 1] as number) + 1; // move right: deletion
      }
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(a, b, trace);
    }
  }
  return undefined;
}

function backtrack(a: string[], b: string[], trace: Int32Array[]): Op[] {
  const ops: Op[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 1; d >= 0; d--) {
    const slice = trace[d] as Int32Array;
    const at = (k: number) => slice[k + d + 1] as number;
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push({ kind: "equal", token: a[x - 1] as string });
      x--;
      y--;
    }
    if (d > 0) {
      if (x === prevX) ops.push({ kind: "added", token: b[prevY] as string });
      else ops.push({ kind: "removed", token: a[prevX] as string });
    }
    x = prevX;
    y = prevY;
  }
  return ops.reverse();
}

function diffTokens(a: string[], b: string[]): Op[] {
  // Skipping the common prefix is free (the forward search would take it as
  // one snake anyway) and keeps the search small for local edits. The common
  // suffix is not trimmed: that would change how repeated lines align.
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  const restA = a.slice(start);
  const restB = b.slice(start);
  const rest = myers(restA, restB) ?? [...restA.map((token): Op => ({ kind: "removed", token })), ...restB.map((token): Op => ({ kind: "added", token }))];
  return [...a.slice(0, start).map((token): Op => ({ kind: "equal", token })), ...rest];
}

type Part = { kind: "equal"; lines: string[] } | { kind: "change"; removed: string[]; added: string[] };

/** Group ops into equal runs and change blocks (removals listed before additions). */
function toParts(ops: Op[]): Part[] {
  const parts: Part[] = [];
  for (const op of ops) {
    const line = op.token.endsWith("\n") ? op.token.slice(0, -1) : op.token;
    const last = parts[parts.length - 1];
    if (op.kind === "equal") {
      if (last?.kind === "equal") last.lines.push(line);
      else parts.push({ kind: "equal", lines: [line] });
    } else {
      const block = last?.kind === "change" ? last : undefined;
      const target = block ?? { kind: "change" as const, removed: [], added: [] };
      if (!block) parts.push(target);
      (op.kind === "removed" ? target.removed : target.added).push(line);
    }
  }
  return parts;
}

/**
 * Unified-style diff: "-N old", "+N new", " N context" (context and removed
 * lines carry old line numbers, added lines new ones), with "..." where
 * unchanged lines are skipped.
 */
export function generateDiffString(oldContent: string, newContent: string, contextLines = 4): { diff: string; firstChangedLine: number | undefined } {
  const parts = toParts(diffTokens(tokenize(oldContent), tokenize(newContent)));
  const width = String(Math.max(oldContent.split("\n").length, newContent.split("\n").length)).length;
  const num = (n: number) => String(n).padStart(width);
  const ellipsis = ` ${" ".repeat(width)} ...`;
  const out: string[] = [];
  let oldNo = 1;
  let newNo = 1;
  let firstChangedLine: number | undefined;

  parts.forEach((part, index) => {
    if (part.kind === "change") {
      firstChangedLine ??= newNo;
      for (const line of part.removed) out.push(`-${num(oldNo++)} ${line}`);
      for (const line of part.added) out.push(`+${num(newNo++)} ${line}`);
      return;
    }
    const lines = part.lines;
    const context = (from: number, to: number) => {
      for (let i = from; i < to; i++) out.push(` ${num(oldNo + i)} ${lines[i]}`);
    };
    const hasPrev = index > 0;
    const hasNext = index < parts.length - 1;
    const count = lines.length;
    if (hasPrev && hasNext) {
      if (count <= contextLines * 2) context(0, count);
      else {
        context(0, contextLines);
        out.push(ellipsis);
        context(count - contextLines, count);
      }
    } else if (hasNext) {
      if (count > contextLines) out.push(ellipsis);
      context(Math.max(0, count - contextLines), count);
    } else if (hasPrev) {
      context(0, Math.min(count, contextLines));
      if (count > contextLines) out.push(ellipsis);
    } else {
      context(0, count);
    }
    oldNo += count;
    newNo += count;
  });

  return { diff: out.join("\n"), firstChangedLine };
}
