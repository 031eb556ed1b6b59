/**
 * context_with_system as pi 1.6 runs it: handlers get the transcript form, a leading system
 * message with the prompt and the tool declarations, then the messages. parley makes each request
 * fresh from its prompt and tools beside the messages (`AgentSession.#send`), so what the handlers
 * return is folded back: every system message is replayed in order (content appended, sections
 * patched by name, tools added and removed) into the request's prompt and tools, and the other
 * messages go to the model.
 */
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { Tool } from "@earendil-works/pi-ai";
import type { SystemMessage } from "../extensions/types.js";

export type TranscriptMessage = AgentMessage | SystemMessage;

/** The prompt and tool declarations a request is sent with, after the handlers. */
export interface RequestSystem {
  systemPrompt: string;
  tools: Tool[];
}

/** The transcript form: the prompt and tools as the leading system message (none when both are empty). */
export function withSystemMessage(systemPrompt: string, tools: readonly Tool[], transcript: readonly AgentMessage[]): TranscriptMessage[] {
  // System messages read from the newest pi's session files are never sent to the model: the
  // request's own prompt is the leading one.
  const messages = transcript.filter((m) => m.role !== "system");
  if (systemPrompt.length === 0 && tools.length === 0) return messages;
  const head: SystemMessage = {
    role: "system",
    content: systemPrompt,
    // Declarations only (pi-ai 1.6's toToolDeclaration shape): what a tool runs with stays with the loop.
    ...(tools.length > 0 ? { toolsAdded: tools.map(declaration) } : {}),
    timestamp: 0,
  };
  return [head, ...messages];
}

/** A tool as a system message declares it: name, description, parameters and, when set, constrainedSampling. */
function declaration(tool: Tool): Tool {
  const { name, description, parameters, constrainedSampling } = tool;
  return { name, description, parameters, ...(constrainedSampling === undefined ? {} : { constrainedSampling }) };
}

/** Every system message replayed into one prompt and tool set; the rest of the messages as they are. */
export function foldSystemMessages(transcript: readonly TranscriptMessage[]): { system: RequestSystem; messages: AgentMessage[] } {
  const content: string[] = [];
  const sections = new Map<string, string>();
  const tools = new Map<string, Tool>();
  const messages: AgentMessage[] = [];
  for (const message of transcript) {
    if (message.role !== "system") {
      messages.push(message);
      continue;
    }
    const text = textOf(message.content);
    if (text.length > 0) content.push(text);
    for (const [name, value] of Object.entries(message.sections ?? {})) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
    for (const tool of message.toolsRemoved ?? []) if (isNamed(tool)) tools.delete(tool.name);
    for (const tool of message.toolsAdded ?? []) if (isTool(tool)) tools.set(tool.name, tool);
  }
  const prompt = [content.join("\n\n"), ...sections.values()].filter((part) => part.length > 0).join("\n\n");
  return { system: { systemPrompt: prompt, tools: [...tools.values()] }, messages };
}

function textOf(content: SystemMessage["content"]): string {
  if (typeof content === "string") return content;
  return content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n");
}

// Extension code returns these: a malformed tool declaration is left out rather than sent.
function isNamed(value: unknown): value is { name: string } {
  return typeof value === "object" && value !== null && "name" in value && typeof value.name === "string";
}

function isTool(value: unknown): value is Tool {
  return (
    isNamed(value) &&
    "description" in value &&
    typeof value.description === "string" &&
    "parameters" in value &&
    typeof value.parameters === "object" &&
    value.parameters !== null
  );
}

/**
 * The system message a run (or a turn) starts with when the prompt's sections differ from the
 * ones its transcript records, as pi 1.6 stores it: empty content and a patch of the named
 * sections that changed (`null` for one that went); the loop then adds the tool declarations to
 * it. Undefined when the transcript already has them all.
 */
export function systemPromptPatch(
  wanted: Readonly<Record<string, string>>,
  transcript: readonly TranscriptMessage[],
  timestamp: number,
): SystemMessage | undefined {
  const recorded = new Map<string, string>();
  for (const message of transcript) {
    if (message.role !== "system") continue;
    for (const [name, value] of Object.entries(message.sections ?? {})) {
      if (value === null) recorded.delete(name);
      else recorded.set(name, value);
    }
  }
  const patch: Record<string, string | null> = {};
  for (const [name, value] of Object.entries(wanted)) if (recorded.get(name) !== value) patch[name] = value;
  for (const name of recorded.keys()) if (!Object.hasOwn(wanted, name)) patch[name] = null;
  if (Object.keys(patch).length === 0) return undefined;
  return { role: "system", content: "", sections: patch, timestamp };
}
