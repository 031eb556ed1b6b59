/** Commands that read or set the agent's state: answered at once, in order (those that change the session, sent during a switch, wait for it: see afterSwitch). */
import { CommandError } from "../responses.js";
import { withKnownJson } from "../../../transport/json-pieces.js";
import { afterSwitch, type CommandGroup, handlersFor } from "./types.js";

/** What these handlers use of the agent. */
type Uses =
  | "autoCompactionEnabled"
  | "autoRetryEnabled"
  | "availableThinkingLevels"
  | "cycleThinkingLevel"
  | "followUpMode"
  | "isCompacting"
  | "isStreaming"
  | "messages"
  | "model"
  | "models"
  | "pendingMessageCount"
  | "session"
  | "setThinkingLevel"
  | "steeringMode"
  | "thinkingLevel";
const { sync } = handlersFor<Uses>();

export const stateCommands = {
  get_state: sync((_c, ctx) => {
    const agent = ctx.agent;
    const session = agent.session;
    return {
      model: agent.model,
      thinkingLevel: agent.thinkingLevel,
      isStreaming: agent.isStreaming,
      isCompacting: agent.isCompacting,
      steeringMode: agent.steeringMode,
      followUpMode: agent.followUpMode,
      ...(session.file !== undefined ? { sessionFile: session.file } : {}),
      sessionId: session.id,
      ...(session.name !== undefined ? { sessionName: session.name } : {}),
      autoCompactionEnabled: agent.autoCompactionEnabled,
      messageCount: agent.messages.length,
      pendingMessageCount: agent.pendingMessageCount,
      // parley: which model is answering when no provider is configured.
      ...(agent.model.provider === agent.models.offlineModel.provider && agent.model.id === agent.models.offlineModel.id ? { offlineModel: true } : {}),
    };
  }),
  get_ui_state: sync((_c, ctx) => ctx.uiState()),
  get_commands: sync((_c, ctx) => ({ commands: ctx.runtime.commandList() })),
  get_messages: sync((_c, ctx) => {
    // A resumed session's first answer sends its messages as the file spells them (no second serialisation).
    const json = ctx.agent.session.takeMessageJson();
    return { messages: json !== undefined ? withKnownJson(ctx.agent.messages, json) : ctx.agent.messages };
  }),
  set_thinking_level: afterSwitch(
    sync((c, ctx) => {
      // The newest pi's "max" is the model's highest level; the wire's highest is xhigh (clamped like every level).
      ctx.agent.setThinkingLevel(c.level === "max" ? "xhigh" : c.level);
      return undefined;
    }),
  ),
  cycle_thinking_level: afterSwitch(
    sync((_c, ctx) => {
      const level = ctx.agent.cycleThinkingLevel();
      return level === null ? null : { level };
    }),
  ),
  get_available_thinking_levels: sync((_c, ctx) => ({ levels: ctx.agent.availableThinkingLevels() })),
  set_steering_mode: sync((c, ctx) => {
    ctx.agent.steeringMode = c.mode;
    return undefined;
  }),
  set_follow_up_mode: sync((c, ctx) => {
    ctx.agent.followUpMode = c.mode;
    return undefined;
  }),
  set_auto_compaction: sync((c, ctx) => {
    ctx.agent.autoCompactionEnabled = c.enabled;
    return undefined;
  }),
  set_auto_retry: sync((c, ctx) => {
    ctx.agent.autoRetryEnabled = c.enabled;
    return undefined;
  }),
  set_session_name: afterSwitch(
    sync((c, ctx) => {
      const name = c.name.trim();
      if (!name) throw new CommandError("Session name cannot be empty");
      ctx.sessions.setSessionName(name);
      return undefined;
    }),
  ),
  // As pi 1.6: the last reply that ended normally, or one that did not (failed, aborted, only
  // calling tools) but has text; no text → no `text`.
  get_last_assistant_text: sync((_c, ctx) => {
    const last = ctx.agent.messages.findLast(
      (m) => m.role === "assistant" && (m.stopReason === "stop" || m.content.some((b) => b.type === "text" && b.text.trim() !== "")),
    );
    const text =
      last?.role === "assistant"
        ? last.content
            .flatMap((b) => (b.type === "text" ? [b.text] : []))
            .join("")
            .trim()
        : "";
    return text ? { text } : {};
  }),
} satisfies CommandGroup;
