/**
 * pi 1.6's run boundaries around pi-agent-core's loop: `turn_end` (with the turn's entry ids) and
 * `agent_before_settle`. Their handlers may propose session entries (drafts), appended once every
 * handler has run, and ask for one more model request (`continue`).
 *
 * pi 1.6 hands its loop a `finishTurn` hook, which the loop asks after each turn whether to go on.
 * parley does not: a continuation the loop did not make by itself (tool calls, steering,
 * follow-ups) is made once the loop has ended, the agent continuing from the context as pi 1.6
 * does for agent_before_settle (the agent holds the first loop's agent_end meanwhile, so clients
 * see one run, as pi 1.6 shows it).
 */
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ToolResultMessage } from "@earendil-works/pi-ai";
import type { RpcEvent } from "@parley/protocol";
import { convertToLlm, estimateTokens } from "../extensions/compat/messages.js";
import type { BoundaryPreview, ExtensionRuntime } from "../extensions/runtime.js";
import type { AgentActivityOutcome, BoundaryContextPreview, ContextEditEntryDraft, SessionBoundaryDraft } from "../extensions/types.js";
import { buildSessionProjection } from "../session/context.js";
import { loopMessages } from "./loop-messages.js";
import type { CompactionEntry, ContextEditEntry, CustomEntry, CustomMessageEntry, Session, SessionEntry } from "../session/session.js";

/** The entries drafts become, before the session gives them an id, a parent and a time. */
type DraftEntry = Omit<CustomEntry, Placed> | Omit<CustomMessageEntry, Placed> | Omit<CompactionEntry, Placed> | Omit<ContextEditEntry, Placed>;
type Placed = "id" | "parentId" | "timestamp";

/** What the boundaries need from the agent. */
export interface BoundaryHost {
  /** The current session (it changes with new_session, switch_session, fork). */
  session(): Session;
  readonly runtime: ExtensionRuntime;
  /** Steering and follow-up messages the loop has not taken yet. */
  pendingMessages(): AgentMessage[];
  /** The session gained these entries (drafts appended): the agent's context takes them in. */
  appended(entries: SessionEntry[]): void;
  emit(event: RpcEvent): void;
}

type Boundary = "turn_end" | "agent_before_settle";

export class RunBoundaries {
  readonly #host: BoundaryHost;
  /** The session entry each persisted message became (the entry holds a copy, not the object). */
  readonly #entryIds = new WeakMap<object, string>();
  #outcome: AgentActivityOutcome = "completed";
  /** A turn_end handler asked for another request that no turn has made yet. */
  #continuation = false;

  constructor(host: BoundaryHost) {
    this.#host = host;
  }

  /** A message was saved as this entry. */
  saved(message: object, entryId: string): void {
    this.#entryIds.set(message, entryId);
  }

  /** A turn starts: it is the request a turn_end continuation asked for. */
  turnStarted(): void {
    this.#continuation = false;
  }

  /** The run starts afresh: no continuation is owed. */
  runStarted(): void {
    this.#continuation = false;
  }

  /** Whether a turn_end handler's continuation is owed (no turn has made it yet). */
  owesContinuation(): boolean {
    return this.#continuation;
  }

  /** Whether a turn_end handler's continuation is still owed (and is taken now). */
  takeContinuation(): boolean {
    const owed = this.#continuation;
    this.#continuation = false;
    return owed;
  }

  /** turn_end: the turn's messages are saved; handlers may append entries and ask to go on. */
  async turnEnd(message: AgentMessage, toolResults: ToolResultMessage[], turnIndex: number): Promise<void> {
    this.#outcome = outcomeOf(message);
    const runtime = this.#host.runtime;
    if (!runtime.hasHandlers("turn_end")) return;
    const messageEntryId = this.#entryIds.get(message);
    if (messageEntryId === undefined) {
      runtime.reportError({ extensionPath: "<boundary>", event: "turn_end", error: "turn_end could not resolve the persisted assistant entry ID" });
      return;
    }
    const toolResultEntryIds = toolResults.flatMap((result) => {
      const id = this.#entryIds.get(result);
      return id === undefined ? [] : [id];
    });
    const result = await runtime.emitBoundary(
      "turn_end",
      (state) => ({ type: "turn_end", turnIndex, message, toolResults, messageEntryId, toolResultEntryIds, ...state }),
      this.#outcome,
      (proposal) => this.#preview(proposal, "turn_end"),
    );
    this.#commit(result.entries);
    if (!result.continue) return;
    if (!this.#preview([], "turn_end").context.canContinue) return this.#invalidContinuation("turn_end");
    // An error or an aborted response ends the run whatever handlers ask (pi's hard exits).
    if (this.#outcome === "completed") this.#continuation = true;
  }

  /**
   * agent_before_settle: the run would settle now. Resolves whether to continue (a handler asked
   * and there is something to answer, or messages are queued). Without handlers: false.
   */
  async beforeSettle(aborted: () => boolean): Promise<boolean> {
    const runtime = this.#host.runtime;
    if (!runtime.hasHandlers("agent_before_settle")) return false;
    const result = await runtime.emitBoundary(
      "agent_before_settle",
      (state) => ({ type: "agent_before_settle", ...state }),
      this.#outcome,
      (proposal) => this.#preview(proposal, "agent_before_settle"),
    );
    // Entries are kept even when an abort came meanwhile; the continuation is not.
    this.#commit(result.entries);
    if (aborted()) return false;
    const queued = this.#host.pendingMessages().length > 0;
    const shouldContinue = result.continue || queued;
    if (shouldContinue && !this.#preview([], "agent_before_settle").context.canContinue) {
      if (result.continue) this.#invalidContinuation("agent_before_settle");
      return false;
    }
    return shouldContinue;
  }

  #invalidContinuation(event: Boundary): void {
    this.#host.runtime.reportError({ extensionPath: "<boundary>", event, error: `${event} requested continuation without runnable model context` });
  }

  /** The proposal checked, and the context it would make (the session is not touched). */
  #preview(proposal: unknown, boundary: Boundary): BoundaryPreview {
    const branch = this.#host.session().branch();
    const drafts = checkDrafts(proposal, branch);
    const path = [...branch];
    drafts.forEach((draft, i) => {
      const id = `draft-${i}`;
      path.push({ ...draftEntry(draft, path), id, parentId: path.at(-1)?.id ?? null, timestamp: new Date().toISOString() });
    });
    return { drafts, context: this.#contextOf(path, boundary) };
  }

  #contextOf(path: SessionEntry[], boundary: Boundary): BoundaryContextPreview {
    const projection = buildSessionProjection(path);
    const contextMessages: AgentMessage[] = loopMessages(projection.entries.flatMap((e) => e.messages));
    const llmMessages = convertToLlm(contextMessages);
    const pendingMessages = this.#host.pendingMessages();
    const finalRole = llmMessages.at(-1)?.role;
    const contextCanContinue = llmMessages.length > 0 && finalRole !== "assistant";
    const queued = pendingMessages.length > 0;
    return {
      contextEntries: projection.entries.map((e) => ({ ...e, messages: loopMessages(e.messages) })),
      contextMessages,
      llmMessages,
      pendingMessages,
      canContinue: contextCanContinue || (boundary === "turn_end" ? queued : finalRole === "assistant" && queued),
    };
  }

  /** Appends the drafts in order; the client hears of each entry (entry_appended), as from pi. */
  #commit(drafts: SessionBoundaryDraft[]): void {
    if (drafts.length === 0) return;
    const session = this.#host.session();
    const appended = drafts.map((draft) => session.append(draftEntry(draft, session.branch())));
    this.#host.appended(appended);
    for (const entry of appended) this.#host.emit({ type: "entry_appended", entry });
  }
}

function outcomeOf(message: AgentMessage): AgentActivityOutcome {
  if (message.role !== "assistant") return "completed";
  const reason = message.stopReason;
  return reason === "aborted" ? "aborted" : reason === "error" ? "error" : "completed";
}

/**
 * The entry a draft becomes. A compaction's tokensBefore is estimated from the context it
 * summarises; `firstKeptEntryId: null` keeps nothing before it (pi names the compaction itself).
 */
function draftEntry(draft: SessionBoundaryDraft, path: readonly SessionEntry[]): DraftEntry {
  switch (draft.type) {
    case "custom":
      return { type: "custom", customType: draft.customType, ...(draft.data !== undefined ? { data: draft.data } : {}) };
    case "custom_message":
      return {
        type: "custom_message",
        customType: draft.customType,
        content: draft.content,
        display: draft.display,
        ...(draft.details !== undefined ? { details: draft.details } : {}),
      };
    case "compaction": {
      const tokensBefore = buildSessionProjection(path)
        .entries.flatMap((e) => e.messages)
        .reduce((sum, m) => sum + estimateTokens(m), 0);
      return {
        type: "compaction",
        summary: draft.summary,
        // Null keeps nothing: without a first kept entry the summary stands alone.
        ...(draft.firstKeptEntryId !== null ? { firstKeptEntryId: draft.firstKeptEntryId } : {}),
        tokensBefore,
        ...(draft.details !== undefined ? { details: draft.details } : {}),
        ...(draft.usage !== undefined ? { usage: draft.usage } : {}),
        // pi's key order.
        fromHook: true,
      };
    }
    case "context_edit": {
      // Text for an assistant or a tool result becomes one text block, as pi writes it (those roles hold arrays).
      const target = path.find((entry) => entry.id === draft.targetId);
      const role = target?.type === "message" ? target.message.role : "custom";
      const { replacement } = draft;
      const normalized =
        replacement !== null && (role === "assistant" || role === "toolResult") && typeof replacement.content === "string"
          ? { content: [{ type: "text" as const, text: replacement.content }] }
          : replacement;
      return { type: "context_edit", targetId: draft.targetId, replacement: normalized };
    }
  }
}

/** Whether an entry gives the model content a context_edit can change: a user, assistant or tool-result message, or a custom message. */
function editable(entry: SessionEntry): boolean {
  if (entry.type === "custom_message") return true;
  return entry.type === "message" && (entry.message.role === "user" || entry.message.role === "assistant" || entry.message.role === "toolResult");
}

/** What a handler returned as `entries`, checked draft by draft (the first problem is the error); `branch` is the active branch. */
export function checkDrafts(proposal: unknown, branch: readonly SessionEntry[]): SessionBoundaryDraft[] {
  if (!Array.isArray(proposal)) throw new Error("entries must be an array of entry drafts");
  const branchIds = new Set(branch.map((entry) => entry.id));
  return proposal.map((raw: unknown, i): SessionBoundaryDraft => {
    const at = `entries[${i}]`;
    if (typeof raw !== "object" || raw === null) throw new Error(`${at} must be an entry draft object`);
    const get = (key: string): unknown => (key in raw ? Reflect.get(raw, key) : undefined);
    const type = get("type");
    const customType = get("customType");
    switch (type) {
      case "custom":
        if (typeof customType !== "string") throw new Error(`${at}.customType must be a string`);
        return { type, customType, data: get("data") };
      case "custom_message": {
        const content = get("content");
        const display = get("display");
        if (typeof customType !== "string") throw new Error(`${at}.customType must be a string`);
        if (!isContent(content)) throw new Error(`${at}.content must be a string or an array of text and image blocks`);
        if (typeof display !== "boolean") throw new Error(`${at}.display must be a boolean`);
        return { type, customType, content, display, details: get("details") };
      }
      case "compaction": {
        const summary = get("summary");
        const firstKeptEntryId = get("firstKeptEntryId");
        if (typeof summary !== "string") throw new Error(`${at}.summary must be a string`);
        if (firstKeptEntryId !== null && typeof firstKeptEntryId !== "string") throw new Error(`${at}.firstKeptEntryId must be an entry id or null`);
        if (typeof firstKeptEntryId === "string" && !branchIds.has(firstKeptEntryId)) throw new Error(`Entry ${firstKeptEntryId} is not on the active branch`);
        const usage = get("usage");
        const draft: SessionBoundaryDraft = { type, summary, firstKeptEntryId, details: get("details") };
        return isUsage(usage) ? { ...draft, usage } : draft;
      }
      case "context_edit": {
        const targetId = get("targetId");
        const replacement = get("replacement");
        if (typeof targetId !== "string") throw new Error(`${at}.targetId must be an entry id`);
        if (replacement !== null && !(typeof replacement === "object" && isEditedContent(Reflect.get(replacement, "content")))) {
          throw new Error("Context edit replacement must be null or contain string/array content");
        }
        if (!branchIds.has(targetId)) throw new Error(`Entry ${targetId} is not on the active branch`);
        const target = branch.find((entry) => entry.id === targetId);
        if (target === undefined || !editable(target)) throw new Error(`Entry ${targetId} does not contribute editable model content`);
        return { type, targetId, replacement: replacement === null ? null : { content: Reflect.get(replacement, "content") as EditedContent } };
      }
      default:
        throw new Error(`${at}.type must be "custom", "custom_message", "context_edit" or "compaction"`);
    }
  });
}

type Content = Extract<SessionBoundaryDraft, { type: "custom_message" }>["content"];

function isContent(value: unknown): value is Content {
  if (typeof value === "string") return true;
  if (!Array.isArray(value)) return false;
  return value.every((block: unknown) => {
    if (typeof block !== "object" || block === null) return false;
    const kind = Reflect.get(block, "type");
    if (kind === "text") return typeof Reflect.get(block, "text") === "string";
    return kind === "image" && typeof Reflect.get(block, "data") === "string" && typeof Reflect.get(block, "mimeType") === "string";
  });
}

type EditedContent = NonNullable<ContextEditEntryDraft["replacement"]>["content"];

/** A replacement's content: text, or blocks a message can hold (text, image, thinking, tool call). */
function isEditedContent(value: unknown): value is EditedContent {
  if (typeof value === "string") return true;
  if (!Array.isArray(value)) return false;
  return value.every((block: unknown) => {
    if (typeof block !== "object" || block === null) return false;
    const field = (key: string): unknown => Reflect.get(block, key);
    switch (field("type")) {
      case "text":
        return typeof field("text") === "string";
      case "image":
        return typeof field("data") === "string" && typeof field("mimeType") === "string";
      case "thinking":
        return typeof field("thinking") === "string";
      case "toolCall":
        return typeof field("id") === "string" && typeof field("name") === "string" && typeof field("arguments") === "object" && field("arguments") !== null;
      default:
        return false;
    }
  });
}

type DraftUsage = NonNullable<Extract<SessionBoundaryDraft, { type: "compaction" }>["usage"]>;

function isUsage(value: unknown): value is DraftUsage {
  if (typeof value !== "object" || value === null) return false;
  return ["input", "output", "cacheRead", "cacheWrite", "totalTokens"].every((k) => typeof Reflect.get(value, k) === "number");
}
