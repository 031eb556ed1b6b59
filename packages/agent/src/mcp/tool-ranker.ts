/**
 * How tool_search ranks tools: MiniSearch's BM25 over the name (weighted most), the description
 * and argument names, and the namespace (the MCP server, its description and instructions). A
 * query that is a tool's name, or the part after its last `__`, puts that tool first.
 */
import MiniSearch from "minisearch";
import type { ToolInfo } from "../extensions/types.js";

/** What the ranker reads of a tool. */
export type SearchableTool = Pick<ToolInfo, "name" | "description" | "parameters" | "namespace">;

/** Words of identifiers too: `readFile` and `read_file` both give "read" and "file". */
function tokenize(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0);
}

const STOP_WORDS = new Set([
  "a",
  "an",
  "and",
  "are",
  "as",
  "at",
  "be",
  "by",
  "for",
  "from",
  "in",
  "is",
  "it",
  "of",
  "on",
  "or",
  "that",
  "the",
  "this",
  "to",
  "with",
]);

/** Lower case, no stop words, a naive singular (`issues` finds `issue`). */
function term(word: string): string | null {
  const lower = word.toLowerCase();
  if (STOP_WORDS.has(lower)) return null;
  if (lower.length > 4 && lower.endsWith("ies")) return `${lower.slice(0, -3)}y`;
  if (lower.length > 3 && lower.endsWith("s") && !lower.endsWith("ss")) return lower.slice(0, -1);
  return lower;
}

/** Argument names and descriptions of a JSON Schema, for the search text. */
function schemaWords(schema: unknown, out: string[], depth = 0): void {
  if (typeof schema !== "object" || schema === null || depth > 6) return;
  const record = schema as Record<string, unknown>;
  if (typeof record.description === "string") out.push(record.description);
  if (typeof record.properties === "object" && record.properties !== null) {
    for (const [name, property] of Object.entries(record.properties)) {
      out.push(name);
      schemaWords(property, out, depth + 1);
    }
  }
  schemaWords(record.items, out, depth + 1);
}

const normalizeName = (name: string): string =>
  name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_$]/g, "_");

/** The best matches among `candidates`; a query that is a tool's name (or its last `__` part) puts that tool first. */
export function rankTools(query: string, candidates: readonly SearchableTool[], limit: number): SearchableTool[] {
  const index = new MiniSearch<{ id: string; name: string; text: string; namespace: string }>({
    fields: ["name", "text", "namespace"],
    tokenize,
    processTerm: term,
    searchOptions: { boost: { name: 3, namespace: 0.5 }, prefix: (word) => word.length > 3, fuzzy: (word) => (word.length > 5 ? 0.2 : false) },
  });
  index.addAll(
    candidates.map((tool) => {
      const words: string[] = [tool.description ?? ""];
      schemaWords(tool.parameters, words);
      const namespace = tool.namespace ? [tool.namespace.name, tool.namespace.description ?? "", tool.namespace.instructions ?? ""].join(" ") : "";
      return { id: tool.name, name: tool.name, text: words.join(" "), namespace };
    }),
  );
  const exact = normalizeName(query);
  const named = candidates.filter((tool) => {
    const name = normalizeName(tool.name);
    return name === exact || name.endsWith(`__${exact}`);
  });
  const ranked = index.search(query).flatMap((hit) => candidates.filter((tool) => tool.name === hit.id));
  return [...new Set([...named, ...ranked])].slice(0, limit);
}
