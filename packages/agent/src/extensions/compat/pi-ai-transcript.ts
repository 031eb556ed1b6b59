/**
 * The newest pi-ai's transcript helpers (`@earendil-works/pi-ai`, `utils/transcript`, `utils/text`),
 * written for parley from their documented behaviour: a transcript's system messages carry the
 * prompt (`content`, named `sections`) and tool changes (`toolsAdded`, `toolsRemoved`), and
 * replaying them in order gives the current prompt and tools. Pure functions over plain data.
 */

export interface TextBlock {
  type: string;
  text?: string;
}
export interface ToolLike {
  name: string;
  description?: string;
  parameters?: unknown;
  constrainedSampling?: unknown;
}
export interface SystemMessageLike {
  role: "system";
  content: string | readonly TextBlock[];
  sections?: Record<string, string | null>;
  toolsAdded?: ToolLike[];
  toolsRemoved?: { name: string }[];
  timestamp: number;
}
type AnyMessage = { role: string };
type Transcript = readonly AnyMessage[];

const isSystem = (message: AnyMessage): message is SystemMessageLike => message.role === "system";

/** The text blocks of some content, joined (a string is its own text). */
export function contentText(content: string | readonly TextBlock[], separator = "\n"): string {
  if (typeof content === "string") return content;
  return content
    .filter((block) => block.type === "text")
    .map((block) => block.text ?? "")
    .join(separator);
}

/** A system message as a whole prompt: its content, then each section still present. */
export function getSystemMessageText(message: SystemMessageLike): string {
  const parts = [contentText(message.content), ...Object.values(message.sections ?? {}).filter((s): s is string => s !== null)];
  return parts.filter((part) => part.length > 0).join("\n\n");
}

/** A later system message as text for models that take system messages mid-conversation. */
export function renderSystemMessageUpdate(message: SystemMessageLike): string {
  const parts: string[] = [];
  const text = contentText(message.content);
  if (text.length > 0) parts.push(text);
  for (const [name, value] of Object.entries(message.sections ?? {})) {
    parts.push(value === null ? `Removed system prompt section "${name}".` : `Updated system prompt section "${name}":\n\n${value}`);
  }
  return parts.join("\n\n");
}

/** `text.slice(start, end)` copied, so that it does not keep a large `text` alive. */
export function ownedSlice(text: string, start: number, end = text.length): string {
  return `${text.slice(start, end)}.`.slice(0, -1);
}

/** The leading system message for a prompt and tools; undefined when both are empty. */
export function createInitialSystemMessage(systemPrompt: string | undefined, tools: ToolLike[] | undefined): SystemMessageLike | undefined {
  const prompt = systemPrompt ?? "";
  if (prompt.length === 0 && (tools === undefined || tools.length === 0)) return undefined;
  return { role: "system", content: prompt, ...(tools !== undefined && tools.length > 0 ? { toolsAdded: tools } : {}), timestamp: 0 };
}

/** A context's `systemPrompt` and `tools` folded into a leading system message. */
export function normalizeContext(context: { systemPrompt?: string; tools?: ToolLike[]; messages: AnyMessage[] }): { messages: AnyMessage[] } {
  const head = createInitialSystemMessage(context.systemPrompt, context.tools);
  return { messages: head === undefined ? context.messages : [head, ...context.messages] };
}

export function getInitialSystemMessage(messages: Transcript): SystemMessageLike | undefined {
  const first = messages[0];
  return first !== undefined && isSystem(first) ? first : undefined;
}

export function withoutInitialSystemMessage<M extends AnyMessage>(messages: M[]): M[] {
  return getInitialSystemMessage(messages) === undefined ? messages : messages.slice(1);
}

/** The tools in force after every system message's removals and additions, in order. */
export function getCurrentTools(messages: Transcript): ToolLike[] {
  const tools = new Map<string, ToolLike>();
  for (const message of messages.filter(isSystem)) {
    for (const removed of message.toolsRemoved ?? []) tools.delete(removed.name);
    for (const added of message.toolsAdded ?? []) tools.set(added.name, added);
  }
  return [...tools.values()];
}

/**
 * One system message equivalent to all of them: contents joined, sections patched by name
 * (null removes one), the current tools, the first one's timestamp. Undefined when there is none.
 */
export function getCurrentSystemMessage(messages: Transcript): SystemMessageLike | undefined {
  const system = messages.filter(isSystem);
  const tools = getCurrentTools(system);
  if (system.length === 0 && tools.length === 0) return undefined;
  const sections = new Map<string, string>();
  for (const message of system) {
    for (const [name, value] of Object.entries(message.sections ?? {})) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
  }
  return {
    role: "system",
    content: system
      .map((m) => contentText(m.content))
      .filter((text) => text.length > 0)
      .join("\n\n"),
    ...(sections.size > 0 ? { sections: Object.fromEntries(sections) } : {}),
    ...(tools.length > 0 ? { toolsAdded: tools } : {}),
    timestamp: system[0]?.timestamp ?? 0,
  };
}

export function getCurrentSystemPrompt(messages: Transcript): string {
  const message = getCurrentSystemMessage(messages);
  return message === undefined ? "" : getSystemMessageText(message);
}

/** The transcript with one leading system message (the replayed one) and no later ones. */
export function collapseSystemMessages(context: { messages: AnyMessage[] }): { messages: AnyMessage[] } {
  const head = getCurrentSystemMessage(context.messages);
  const rest = context.messages.filter((message) => !isSystem(message));
  return { messages: head === undefined ? rest : [head, ...rest] };
}

export function resolveTranscript(context: { messages: AnyMessage[] }, supportsMidConvoSystemMessages: boolean | undefined): { messages: AnyMessage[] } {
  return supportsMidConvoSystemMessages ? context : collapseSystemMessages(context);
}

/** What a tool declares to the model: name, description, a plain copy of its parameters. */
export function toToolDeclaration(tool: ToolLike): ToolLike {
  return {
    name: tool.name,
    description: tool.description ?? "",
    parameters: JSON.parse(JSON.stringify(tool.parameters ?? {})) as unknown,
    ...(tool.constrainedSampling === undefined ? {} : { constrainedSampling: tool.constrainedSampling }),
  };
}

export function declarationsEqual(left: ToolLike, right: ToolLike): boolean {
  return JSON.stringify(toToolDeclaration(left)) === JSON.stringify(toToolDeclaration(right));
}

/** From one tool set to another: a changed tool counts as removed and added. */
export function getToolStateChanges(previous: readonly ToolLike[], current: readonly ToolLike[]): { toolsAdded: ToolLike[]; toolsRemoved: { name: string }[] } {
  const same = (a: ToolLike | undefined, b: ToolLike): boolean => a !== undefined && declarationsEqual(a, b);
  const before = new Map(previous.map((t) => [t.name, t]));
  const after = new Map(current.map((t) => [t.name, t]));
  return {
    toolsAdded: current.filter((t) => !same(before.get(t.name), t)).map(toToolDeclaration),
    toolsRemoved: previous.filter((t) => !same(after.get(t.name), t)).map((t) => ({ name: t.name })),
  };
}

/** Every tool a system message declared, the last definition of each name, in first-seen order. */
export function getDeclaredTools(messages: Transcript): ToolLike[] {
  const tools = new Map<string, ToolLike>();
  for (const message of messages.filter(isSystem)) for (const tool of message.toolsAdded ?? []) tools.set(tool.name, tool);
  return [...tools.values()];
}

export function hasToolRedefinitions(messages: Transcript): boolean {
  const seen = new Map<string, ToolLike>();
  for (const message of messages.filter(isSystem)) {
    for (const tool of message.toolsAdded ?? []) {
      const earlier = seen.get(tool.name);
      if (earlier !== undefined && !declarationsEqual(earlier, tool)) return true;
      seen.set(tool.name, tool);
    }
  }
  return false;
}

/** Index among system messages of the last removal or redeclaration of a name, or -1. */
function lastNonAdditive(system: readonly SystemMessageLike[]): number {
  const names = new Set<string>();
  let last = -1;
  system.forEach((message, index) => {
    if ((message.toolsRemoved ?? []).length > 0) last = index;
    for (const tool of message.toolsAdded ?? []) {
      if (names.has(tool.name)) last = index;
      names.add(tool.name);
    }
  });
  return last;
}

export function hasNonAdditiveToolChanges(messages: Transcript): boolean {
  return lastNonAdditive(messages.filter(isSystem)) >= 0;
}

/** Which tools go in the request's tool list and how many system messages that list covers. */
export function resolveTranscriptTools(
  messages: Transcript,
  support: "none" | "additions" | "changes",
): { requestTools: ToolLike[]; foldedSystemMessages: number } {
  const system = messages.filter(isSystem);
  if (support === "none") return { requestTools: getCurrentTools(system), foldedSystemMessages: system.length };
  if (support === "changes") return { requestTools: [], foldedSystemMessages: 0 };
  const folded = Math.max(getInitialSystemMessage(messages) === undefined ? 0 : 1, lastNonAdditive(system) + 1);
  return { requestTools: getCurrentTools(system.slice(0, folded)), foldedSystemMessages: folded };
}
