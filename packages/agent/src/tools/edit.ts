import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { type Static, Type } from "typebox";
import { importModule } from "../startup/module-loader.js";
import { generateDiffString } from "./diff.js";
import { withFileMutationQueue } from "./file-mutation-queue.js";
import { resolveToCwd } from "./path-utils.js";
import { replaceFile } from "./replace-file.js";
import { readRegularFile } from "./read-regular-file.js";
import type { AgentTool, ToolDefinition } from "./types.js";
import { errorCode, throwIfAborted, toAgentTool } from "./util.js";

const replacementSchema = Type.Object({
  oldText: Type.String({
    description: "Exact text to replace. It must occur exactly once in the original file and must not overlap another edit's oldText.",
  }),
  newText: Type.String({ description: "Text to put in its place." }),
});

const editSchema = Type.Object({
  path: Type.String({ description: "File to edit, relative to the working directory or absolute" }),
  edits: Type.Array(replacementSchema, {
    description:
      "One or more replacements, each matched against the original file (not against the result of earlier edits). Edits must not overlap; merge changes to the same or neighbouring lines into one edit.",
  }),
});

export type EditToolInput = Static<typeof editSchema>;

export interface EditToolDetails {
  /** Line diff of the change. */
  diff: string;
  /** The change as a unified patch (file headers, 4 lines of context), as pi 1.6 gives it. */
  patch: string;
  /** First changed line in the new file, for editor navigation. */
  firstChangedLine?: number;
}

/** Pluggable file access, so extensions can edit files on remote systems. */
export interface EditOperations {
  readFile: (absolutePath: string) => Promise<Buffer>;
  writeFile: (absolutePath: string, content: string) => Promise<void>;
  /** Throws if the file is not readable and writable. */
  access: (absolutePath: string) => Promise<void>;
}

export interface EditToolOptions {
  operations?: EditOperations;
}

const localOperations: EditOperations = {
  readFile: readRegularFile,
  writeFile: replaceFile,
  access: (p) => access(p, constants.R_OK | constants.W_OK),
};

export interface Replacement {
  oldText: string;
  newText: string;
}

/** Line breaks as one LF: CRLF, and a lone CR (classic Mac files), which keeps every offset but CRLF's. */
export const normalizeToLF = (text: string): string => text.replace(/\r\n?/g, "\n");

/**
 * Ranges located in `normalizeToLF(original)` applied to `original` itself, so every byte outside
 * them is kept, each line's own ending included (a file with mixed endings stays mixed). A line
 * break inside a new text takes the ending of the line where its range starts.
 */
export function applyToOriginal(original: string, ranges: readonly Range[]): string {
  // Only a CRLF shortens the normalised text: the n-th one's LF sits n places earlier there.
  const crlfs: number[] = [];
  for (let at = original.indexOf("\r\n"); at !== -1; at = original.indexOf("\r\n", at + 2)) crlfs.push(at - crlfs.length);
  let before = 0;
  // Called with offsets that only grow; an offset at a CRLF's LF maps to its CR, so a range covers the whole break.
  const toOriginal = (offset: number): number => {
    while (before < crlfs.length && (crlfs[before] ?? Number.POSITIVE_INFINITY) < offset) before++;
    return offset + before;
  };
  const pieces: string[] = [];
  const add = (piece: string): void => {
    if (piece === "") return;
    // A kept CR meeting a new LF would read as one CRLF: give the CR a line feed of its own.
    if (pieces.at(-1)?.endsWith("\r") && piece.startsWith("\n")) pieces.push("\n");
    pieces.push(piece);
  };
  let position = 0;
  for (const range of [...ranges].sort((a, b) => a.index - b.index)) {
    const start = toOriginal(range.index);
    add(original.slice(position, start));
    const ending = lineEndingAt(original, start);
    add(ending === "\n" ? range.newText : range.newText.replaceAll("\n", ending));
    position = toOriginal(range.index + range.length);
  }
  add(original.slice(position));
  return pieces.join("");
}

/** The ending of the line holding `offset` (the one before it for an unterminated last line); CR alone only in a file without LF. */
function lineEndingAt(text: string, offset: number): "\r\n" | "\n" | "\r" {
  const next = text.indexOf("\n", offset);
  const lf = next === -1 ? text.lastIndexOf("\n", offset) : next;
  if (lf === -1) return text.includes("\r") ? "\r" : "\n";
  return text[lf - 1] === "\r" ? "\r\n" : "\n";
}

export function stripBom(content: string): { bom: string; text: string } {
  return content.startsWith("\uFEFF") ? { bom: "\uFEFF", text: content.slice(1) } : { bom: "", text: content };
}

/**
 * Fallback matching for text the model retyped slightly differently: ignore
 * trailing whitespace and fold typographic quotes, dashes and spaces to ASCII.
 */
export function normalizeForFuzzyMatch(text: string): string {
  return text
    .split("\n")
    .map((line) => line.replace(/\s+$/, ""))
    .join("\n")
    .replace(/[\u2018\u2019\u201A\u201B\u2032]/g, "'")
    .replace(/[\u201C\u201D\u201E\u201F\u2033]/g, '"')
    .replace(/[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]/g, "-")
    .replace(/[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g, " ");
}

function countOccurrences(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

/**
 * Apply replacements to LF-normalised content. All edits are located in the
 * original content, validated (present, unique, non-overlapping) and applied
 * back to front so offsets stay valid. If any edit only matches fuzzily, the
 * edits are located in the fuzzy-normalised content, and only the lines they
 * touch are written in normalised form: every other line keeps its bytes, as
 * pi 1.6 does (trailing whitespace and typographic quotes elsewhere survive).
 */
export function applyEdits(content: string, edits: Replacement[], path: string): { baseContent: string; newContent: string; ranges: Range[] } {
  const multi = edits.length > 1;
  const label = (i: number) => (multi ? `edits[${i}]` : "the text");
  const normalized = edits.map((e) => ({ oldText: normalizeToLF(e.oldText), newText: normalizeToLF(e.newText) }));
  let fuzzyContent: string | undefined;
  let useFuzzy = false;

  normalized.forEach((edit, i) => {
    if (edit.oldText === "") {
      throw new Error(multi ? `edits[${i}].oldText must not be empty in ${path}.` : `oldText must not be empty in ${path}.`);
    }
    let space = content;
    let needle = edit.oldText;
    if (!content.includes(needle)) {
      fuzzyContent ??= normalizeForFuzzyMatch(content);
      space = fuzzyContent;
      needle = normalizeForFuzzyMatch(edit.oldText);
      if (!space.includes(needle)) {
        throw new Error(
          multi
            ? `Could not find edits[${i}] in ${path}. The oldText must match exactly including all whitespace and newlines.`
            : `Could not find the exact text in ${path}. The old text must match exactly including all whitespace and newlines.`,
        );
      }
      useFuzzy = true;
    }
    const count = countOccurrences(space, needle);
    if (count > 1) {
      throw new Error(
        multi
          ? `Found ${count} occurrences of ${label(i)} in ${path}. Each oldText must be unique. Please provide more context to make it unique.`
          : `Found ${count} occurrences of the text in ${path}. The text must be unique. Please provide more context to make it unique.`,
      );
    }
  });

  const baseContent = useFuzzy ? (fuzzyContent ?? normalizeForFuzzyMatch(content)) : content;
  const located = normalized.map((edit, i) => {
    const needle = useFuzzy ? normalizeForFuzzyMatch(edit.oldText) : edit.oldText;
    const count = countOccurrences(baseContent, needle);
    // Normalising the whole file can merge two distinct regions into duplicates.
    if (count !== 1) {
      throw new Error(
        `Found ${count} occurrences of ${label(i)} in ${path} after normalising whitespace and quotes. Please provide more context to make it unique.`,
      );
    }
    return { index: baseContent.indexOf(needle), length: needle.length, newText: edit.newText, i };
  });

  const sorted = [...located].sort((a, b) => a.index - b.index);
  for (let j = 1; j < sorted.length; j++) {
    const prev = sorted[j - 1]!;
    const cur = sorted[j]!;
    if (prev.index + prev.length > cur.index) {
      throw new Error(`edits[${prev.i}] and edits[${cur.i}] overlap in ${path}. Merge them into one edit or target disjoint regions.`);
    }
  }

  // The ranges returned are offsets into `content` either way (applyToOriginal maps them to the file).
  if (!useFuzzy) return { baseContent, newContent: replaceRanges(baseContent, sorted), ranges: sorted };
  const ranges = wholeLineReplacements(content, baseContent, sorted);
  return { baseContent: content, newContent: replaceRanges(content, ranges), ranges };
}

export interface Range {
  index: number;
  length: number;
  newText: string;
}

/** `ranges` (sorted, disjoint, offsets into `text` past `offset`) replaced, back to front. */
function replaceRanges(text: string, ranges: readonly Range[], offset = 0): string {
  let out = text;
  for (const r of [...ranges].reverse()) out = out.slice(0, r.index - offset) + r.newText + out.slice(r.index - offset + r.length);
  return out;
}

/** Each line's [start, end) in `text`, its newline included. */
function lineSpans(text: string): Array<{ start: number; end: number }> {
  const spans: Array<{ start: number; end: number }> = [];
  for (let start = 0; start < text.length; ) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline + 1;
    spans.push({ start, end });
    start = end;
  }
  return spans;
}

/**
 * Ranges found in `fuzzy` (the fuzzy-normalised `original`, which has the same lines) turned into
 * ranges of `original` that replace whole lines: the touched lines of `fuzzy` with the ranges
 * applied. Ranges touching a common line are replaced together.
 */
function wholeLineReplacements(original: string, fuzzy: string, ranges: readonly Range[]): Range[] {
  const originalLines = lineSpans(original);
  const fuzzyLines = lineSpans(fuzzy);
  if (originalLines.length !== fuzzyLines.length) throw new Error("Cannot keep the unchanged lines: normalising changed the line count.");
  const lineOf = (offset: number): number => fuzzyLines.findIndex((l) => offset < l.end);
  const groups: Array<{ first: number; last: number; ranges: Range[] }> = [];
  for (const range of ranges) {
    const first = lineOf(range.index);
    // A range ending at a line's end (its newline included) ends on that line.
    const last = range.length === 0 ? first : lineOf(range.index + range.length - 1);
    if (first === -1 || last === -1) throw new Error("Cannot keep the unchanged lines: an edit lies outside the file.");
    const group = groups.at(-1);
    if (group && first <= group.last) {
      group.last = Math.max(group.last, last);
      group.ranges.push(range);
    } else groups.push({ first, last, ranges: [range] });
  }
  return groups.map(({ first, last, ranges: inGroup }) => {
    const from = fuzzyLines[first]!.start;
    const to = fuzzyLines[last]!.end;
    const start = originalLines[first]!.start;
    return { index: start, length: originalLines[last]!.end - start, newText: replaceRanges(fuzzy.slice(from, to), inGroup, from) };
  });
}

/** Accept pi's older single-replacement shape ({oldText, newText}) and stringified edit arrays. */
function prepareEditArguments(args: unknown): EditToolInput {
  if (!args || typeof args !== "object") return args as EditToolInput;
  const input = { ...(args as Record<string, unknown>) };
  if (typeof input.edits === "string") {
    try {
      input.edits = JSON.parse(input.edits);
    } catch {
      // leave as is; schema validation will report it
    }
  }
  if (typeof input.oldText === "string" && typeof input.newText === "string") {
    const edits = Array.isArray(input.edits) ? input.edits : [];
    input.edits = [...edits, { oldText: input.oldText, newText: input.newText }];
    delete input.oldText;
    delete input.newText;
  }
  return input as EditToolInput;
}

export function createEditToolDefinition(cwd: string, options: EditToolOptions = {}): ToolDefinition<typeof editSchema, EditToolDetails | undefined> {
  const ops = options.operations ?? localOperations;
  return {
    name: "edit",
    label: "edit",
    description:
      "Edit one file by exact text replacement. Each edits[].oldText must match a unique region of the original file, and edits must not overlap; combine changes that touch the same or nearby lines into a single edit. Keep oldText short but unique.",
    promptSnippet: "Make targeted edits to files by exact text replacement (several disjoint edits per call allowed)",
    // Strict-schema arguments where the provider offers them, as pi 1.6 declares its read, bash, edit and write.
    constrainedSampling: { type: "json_schema", strict: "prefer" },
    promptGuidelines: [
      "Use edit for targeted changes; edits[].oldText must match the file exactly.",
      "To change several places in one file, send one edit call with several entries in edits[] rather than several calls.",
      "edits[].oldText is matched against the original file, not the result of earlier edits; do not send overlapping or nested edits.",
      "Keep edits[].oldText as small as possible while still unique; do not pad it with unchanged lines.",
    ],
    parameters: editSchema,
    renderShell: "self",
    prepareArguments: prepareEditArguments,
    async execute(_toolCallId, params, signal) {
      throwIfAborted(signal);
      const edits = Array.isArray(params.edits) ? params.edits : [];
      if (edits.length === 0) {
        throw new Error("Edit tool input is invalid. edits must contain at least one replacement.");
      }
      const path = params.path;
      const absolutePath = resolveToCwd(path, cwd);
      return withFileMutationQueue(absolutePath, async () => {
        throwIfAborted(signal);
        let raw: string;
        try {
          await ops.access(absolutePath);
          raw = (await ops.readFile(absolutePath)).toString("utf8");
        } catch (error) {
          const code = errorCode(error);
          if (code === "ENOENT") throw new Error(`File not found: ${path}`);
          if (code === "EISDIR") throw new Error(`Could not edit ${path}: it is a directory, not a file.`);
          if (code) throw new Error(`Could not edit file: ${path}. Error code: ${code}.`);
          throw error;
        }
        throwIfAborted(signal);

        // Match on LF text without BOM; write the replacements into the file's own text.
        const { bom, text } = stripBom(raw);
        const { baseContent, newContent, ranges } = applyEdits(normalizeToLF(text), edits, path);
        if (baseContent === newContent) {
          throw new Error(
            edits.length > 1
              ? `No changes made to ${path}. The replacements produced identical content.`
              : `No changes made to ${path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.`,
          );
        }
        throwIfAborted(signal);
        await ops.writeFile(absolutePath, bom + applyToOriginal(text, ranges));

        const { diff, firstChangedLine } = generateDiffString(baseContent, newContent);
        const patch = await unifiedPatch(path, baseContent, newContent);
        const details: EditToolDetails = firstChangedLine === undefined ? { diff, patch } : { diff, patch, firstChangedLine };
        return {
          content: [{ type: "text", text: `Successfully replaced ${edits.length} block(s) in ${path}.` }],
          details,
        };
      });
    },
  };
}

/** jsdiff's unified patch with file headers only; loaded on the first edit, not at start-up. */
async function unifiedPatch(path: string, oldContent: string, newContent: string): Promise<string> {
  const { createTwoFilesPatch, FILE_HEADERS_ONLY } = await importModule<typeof import("diff")>("diff");
  return createTwoFilesPatch(path, path, oldContent, newContent, undefined, undefined, { context: 4, headerOptions: FILE_HEADERS_ONLY });
}

export function createEditTool(cwd: string, options?: EditToolOptions): AgentTool<typeof editSchema, EditToolDetails | undefined> {
  return toAgentTool(createEditToolDefinition(cwd, options));
}
