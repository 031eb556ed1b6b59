/**
 * What an HTML export shows of the system messages (pure data; export-html.ts renders it), the
 * information pi 1.6's export shows: the message a branch's prompt starts with, as the whole
 * prompt and the tools declared; a later one, as the sections it changed (each's new text, or
 * its removal) and the tools it added and removed.
 */
import type { SessionEntry, SystemMessage } from "@parley/protocol";
import { toolName } from "./context.js";

export interface ShownTool {
  name: string;
  description: string;
  parameters: { name: string; type: string; required: boolean; description?: string }[];
}

/** A system message as the page shows it. */
export interface ShownSystem {
  /** The first one on the branch: the prompt whole. Later ones: what they change. */
  leading: boolean;
  /** What a later one changes, in short ("instructions, project_context, -rules, tools +bash -write"). */
  changes: string;
  /** The prompt's text (leading), or each change in words (later). */
  text: string;
  added: ShownTool[];
  removed: string[];
}

/** Whether an entry sets the prompt the entries after it on the branch see (a compaction snapshots it). */
export function carriesSystemState(entry: SessionEntry): boolean {
  return (entry.type === "message" && entry.message.role === "system") || (entry.type === "compaction" && entry.systemMessage !== undefined);
}

export function shownSystem(message: SystemMessage, leading: boolean): ShownSystem {
  const content = contentText(message.content);
  const sections = Object.entries(message.sections ?? {});
  const added = (message.toolsAdded ?? []).flatMap(shownTool);
  const removed = (message.toolsRemoved ?? []).flatMap((tool) => {
    const name = toolName(tool);
    return name === undefined ? [] : [name];
  });
  if (leading) {
    // As pi-ai renders a system message: the content, then each section's text.
    const text = [content, ...sections.flatMap(([, value]) => (value === null ? [] : [value]))].filter((part) => part.length > 0).join("\n\n");
    return { leading, changes: "", text, added, removed };
  }
  const changes = [
    ...(content.length > 0 ? ["instructions"] : []),
    ...sections.map(([name, value]) => (value === null ? `-${name}` : name)),
    ...(added.length + removed.length > 0 ? [`tools ${[...added.map((t) => `+${t.name}`), ...removed.map((name) => `-${name}`)].join(" ")}`] : []),
  ].join(", ");
  const text = [
    ...(content.length > 0 ? [content] : []),
    ...sections.map(([name, value]) => (value === null ? `Section "${name}" removed.` : `Section "${name}" now reads:\n\n${value}`)),
  ].join("\n\n");
  return { leading, changes, text, added, removed };
}

/** Tool declarations as the page lists them (declarations come from files: a malformed one is left out). */
export function shownTool(tool: unknown): ShownTool[] {
  const name = toolName(tool);
  if (name === undefined || typeof tool !== "object" || tool === null) return [];
  const description = "description" in tool && typeof tool.description === "string" ? tool.description : "";
  const schema = "parameters" in tool ? record(tool.parameters) : undefined;
  const properties = record(schema?.["properties"]) ?? {};
  const required = Array.isArray(schema?.["required"]) ? schema["required"] : [];
  const parameters = Object.entries(properties).map(([param, value]) => {
    const prop = record(value) ?? {};
    const type = typeof prop["type"] === "string" ? prop["type"] : "any";
    const text = typeof prop["description"] === "string" ? prop["description"] : undefined;
    return { name: param, type, required: required.includes(param), ...(text !== undefined ? { description: text } : {}) };
  });
  return [{ name, description, parameters }];
}

function contentText(content: SystemMessage["content"]): string {
  if (typeof content === "string") return content;
  return content.map((block) => block.text).join("\n");
}

function record(value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  return Object.fromEntries(Object.entries(value));
}
