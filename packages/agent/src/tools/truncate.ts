/**
 * Output truncation shared by all tools.
 *
 * Two independent limits (lines and UTF-8 bytes); whichever is hit first wins.
 * Result shapes and numbers match pi's exported helpers because extensions use
 * them directly and the model sees the derived notices.
 */

export const DEFAULT_MAX_LINES = 2000;
export const DEFAULT_MAX_BYTES = 50 * 1024;
/** Grep match lines longer than this many characters are cut. */
export const GREP_MAX_LINE_LENGTH = 500;

export interface TruncationResult {
  /** The kept content. */
  content: string;
  truncated: boolean;
  /** Which limit cut the content, or null when nothing was cut. */
  truncatedBy: "lines" | "bytes" | null;
  /** Lines in the original content (none in "", a final newline ends the last line rather than starting one). */
  totalLines: number;
  /** UTF-8 bytes in the original content. */
  totalBytes: number;
  /** Complete lines kept. */
  outputLines: number;
  /** UTF-8 bytes kept. */
  outputBytes: number;
  /** Tail truncation only: the single kept line is a suffix of a longer line. */
  lastLinePartial: boolean;
  /** Head truncation only: nothing could be kept because line 1 alone is too big. */
  firstLineExceedsLimit: boolean;
  maxLines: number;
  maxBytes: number;
}

export interface TruncationOptions {
  maxLines?: number;
  maxBytes?: number;
}

const byteLength = (s: string): number => Buffer.byteLength(s, "utf8");

/** Human-readable size: "512B", "1.5KB", "2.0MB". */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

function untruncated(content: string, totalLines: number, totalBytes: number, maxLines: number, maxBytes: number): TruncationResult {
  return {
    content,
    truncated: false,
    truncatedBy: null,
    totalLines,
    totalBytes,
    outputLines: totalLines,
    outputBytes: totalBytes,
    lastLinePartial: false,
    firstLineExceedsLimit: false,
    maxLines,
    maxBytes,
  };
}

/** The lines pi 1.6 counts: none in "", and no empty line after a final newline. */
function countedLines(content: string): string[] {
  if (content.length === 0) return [];
  const lines = content.split("\n");
  if (content.endsWith("\n")) lines.pop();
  return lines;
}

/** The limits, the content's size and its lines; `whole` is the result when nothing needs cutting. */
function measure(content: string, options: TruncationOptions) {
  const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const totalBytes = byteLength(content);
  const lines = countedLines(content);
  const totalLines = lines.length;
  const whole = totalLines <= maxLines && totalBytes <= maxBytes ? untruncated(content, totalLines, totalBytes, maxLines, maxBytes) : undefined;
  return { maxLines, maxBytes, totalBytes, lines, totalLines, whole };
}

/**
 * Keep the first lines/bytes (for file reads and search results, where the
 * beginning matters). Never returns a partial line.
 */
export function truncateHead(content: string, options: TruncationOptions = {}): TruncationResult {
  const { maxLines, maxBytes, totalBytes, lines, totalLines, whole } = measure(content, options);
  if (whole) return whole;

  const result = (content: string, truncatedBy: "lines" | "bytes", outputLines: number, firstLineExceedsLimit: boolean): TruncationResult => ({
    content,
    truncated: true,
    truncatedBy,
    totalLines,
    totalBytes,
    outputLines,
    outputBytes: byteLength(content),
    lastLinePartial: false,
    firstLineExceedsLimit,
    maxLines,
    maxBytes,
  });
  if (byteLength(lines[0] ?? "") > maxBytes) return result("", "bytes", 0, true);

  const kept: string[] = [];
  let bytes = 0;
  let truncatedBy: "lines" | "bytes" = "lines";
  for (let i = 0; i < lines.length && i < maxLines; i++) {
    const line = lines[i] ?? "";
    const cost = byteLength(line) + (i > 0 ? 1 : 0); // +1 for the joining newline
    if (bytes + cost > maxBytes) {
      truncatedBy = "bytes";
      break;
    }
    kept.push(line);
    bytes += cost;
  }
  return result(kept.join("\n"), truncatedBy, kept.length, false);
}

/** The longest suffix of `line` whose UTF-8 encoding fits in `maxBytes` (never splits a character). */
function utf8Suffix(line: string, maxBytes: number): string {
  let bytes = 0;
  let start = line.length;
  for (const ch of Array.from(line).reverse()) {
    const b = byteLength(ch);
    if (bytes + b > maxBytes) break;
    bytes += b;
    start -= ch.length;
  }
  return line.slice(start);
}

/**
 * Keep the last lines/bytes (for command output, where errors and results are
 * at the end). If even the last line is too big, keeps its tail (lastLinePartial).
 */
export function truncateTail(content: string, options: TruncationOptions = {}): TruncationResult {
  const { maxLines, maxBytes, totalBytes, lines, totalLines, whole } = measure(content, options);
  if (whole) return whole;

  const kept: string[] = [];
  let bytes = 0;
  let truncatedBy: "lines" | "bytes" = "lines";
  let lastLinePartial = false;
  for (let i = lines.length - 1; i >= 0 && kept.length < maxLines; i--) {
    const line = lines[i] ?? "";
    const cost = byteLength(line) + (kept.length > 0 ? 1 : 0);
    if (bytes + cost > maxBytes) {
      truncatedBy = "bytes";
      if (kept.length === 0) {
        const tail = utf8Suffix(line, maxBytes);
        kept.unshift(tail);
        bytes = byteLength(tail);
        lastLinePartial = true;
      }
      break;
    }
    kept.unshift(line);
    bytes += cost;
  }
  // pi attributes a cut to the line limit whenever the kept lines reach it,
  // even if the single kept line is itself a partial (byte-cut) one.
  if (kept.length >= maxLines) truncatedBy = "lines";
  const out = kept.join("\n");
  return {
    content: out,
    truncated: true,
    truncatedBy,
    totalLines,
    totalBytes,
    outputLines: kept.length,
    outputBytes: byteLength(out),
    lastLinePartial,
    firstLineExceedsLimit: false,
    maxLines,
    maxBytes,
  };
}

/** Cut one line to `maxChars` characters, marking the cut. */
export function truncateLine(line: string, maxChars: number = GREP_MAX_LINE_LENGTH): { text: string; wasTruncated: boolean } {
  if (line.length <= maxChars) return { text: line, wasTruncated: false };
  return { text: `${line.slice(0, maxChars)}... [truncated]`, wasTruncated: true };
}
