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

// Bound on the Myers trace (cells). Beyond it the middle section is reported as
// a wholesale replacement, which is correct, just less precise.
const MAX_TRACE_CELLS = 20_000_000;

function myers(a: string[], b: string[]): Op[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const width = 2 * max + 3;
  const v = new Int32Array(width);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    if ((d + 1) * width > MAX_TRACE_CELLS) return undefined;
    trace.push(v.slice());
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
      if (x >= n && y >= m) return backtrack(a, b, trace, offset);
    }
  }
  return undefined;
}

function backtrack(a: string[], b: string[], trace: Int32Array[], offset: number): Op[] {
  const ops: Op[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 1; d >= 0; d--) {
    const v = trace[d] as Int32Array;
    const k = x - y;
    const prevK = k === -d || (k !== d && (v[offset + k - 1] as number) < (v[offset + k + 1] as number)) ? k + 1 : k - 1;
    const prevX = v[offset + prevK] as number;
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
  // Trim the common prefix/suffix first: edits are usually local, which keeps
  // the Myers search tiny even for big files.
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const middle = myers(midA, midB) ?? [
    ...midA.map((token): Op => ({ kind: "removed", token })),
    ...midB.map((token): Op => ({ kind: "added", token })),
  ];
  return [
    ...a.slice(0, start).map((token): Op => ({ kind: "equal", token })),
    ...middle,
    ...a.slice(endA).map((token): Op => ({ kind: "equal", token })),
  ];
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
export function generateDiffString(
  oldContent: string,
  newContent: string,
  contextLines = 4,
): { diff: string; firstChangedLine: number | undefined } {
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
