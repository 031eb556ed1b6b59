import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { type Static, Type } from "typebox";
import { generateDiffString } from "./diff.js";
import { withFileMutationQueue } from "./file-mutation-queue.js";
import { resolveToCwd } from "./path-utils.js";
import { replaceFile } from "./replace-file.js";
import { readRegularFile } from "./read-regular-file.js";
import type { AgentTool, ToolDefinition } from "./types.js";
import { errorCode, throwIfAborted, toAgentTool } from "./util.js";

const replacementSchema = Type.Object(
  {
    oldText: Type.String({
      description: "Exact text to replace. It must occur exactly once in the original file and must not overlap another edit's oldText.",
    }),
    newText: Type.String({ description: "Text to put in its place." }),
  },
  { additionalProperties: false },
);

const editSchema = Type.Object(
  {
    path: Type.String({ description: "File to edit, relative to the working directory or absolute" }),
    edits: Type.Array(replacementSchema, {
      description:
        "One or more replacements, each matched against the original file (not against the result of earlier edits). Edits must not overlap; merge changes to the same or neighbouring lines into one edit.",
    }),
  },
  { additionalProperties: false },
);

export type EditToolInput = Static<typeof editSchema>;

export interface EditToolDetails {
  /** Line diff of the change. */
  diff: string;
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

export function detectLineEnding(content: string): "\r\n" | "\n" {
  const lf = content.indexOf("\n");
  return lf > 0 && content[lf - 1] === "\r" ? "\r\n" : "\n";
}

export const normalizeToLF = (text: string): string => text.replace(/\r\n/g, "\n");

export const restoreLineEndings = (text: string, ending: "\r\n" | "\n"): string => (ending === "\r\n" ? text.replace(/\n/g, "\r\n") : text);

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
 * whole operation works on the fuzzy-normalised content, so the file is
 * written back in normalised form.
 */
export function applyEdits(content: string, edits: Replacement[], path: string): { baseContent: string; newContent: string } {
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

  let newContent = baseContent;
  for (const edit of [...sorted].reverse()) {
    newContent = newContent.slice(0, edit.index) + edit.newText + newContent.slice(edit.index + edit.length);
  }
  return { baseContent, newContent };
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

        // Match on LF text without BOM, then restore the file's conventions.
        const { bom, text } = stripBom(raw);
        const ending = detectLineEnding(text);
        const { baseContent, newContent } = applyEdits(normalizeToLF(text), edits, path);
        if (baseContent === newContent) {
          throw new Error(
            edits.length > 1
              ? `No changes made to ${path}. The replacements produced identical content.`
              : `No changes made to ${path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.`,
          );
        }
        throwIfAborted(signal);
        await ops.writeFile(absolutePath, bom + restoreLineEndings(newContent, ending));

        const { diff, firstChangedLine } = generateDiffString(baseContent, newContent);
        const details: EditToolDetails = firstChangedLine === undefined ? { diff } : { diff, firstChangedLine };
        return {
          content: [{ type: "text", text: `Successfully replaced ${edits.length} block(s) in ${path}.` }],
          details,
        };
      });
    },
  };
}

export function createEditTool(cwd: string, options?: EditToolOptions): AgentTool<typeof editSchema, EditToolDetails | undefined> {
  return toAgentTool(createEditToolDefinition(cwd, options));
}
