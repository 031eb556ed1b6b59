/** Commands that read or set the agent's state: answered at once, in order. */
import { CommandError } from "../responses.js";
import { sync, type CommandTable } from "./types.js";

type StateCommands =
  | "get_state"
  | "get_ui_state"
  | "get_commands"
  | "get_messages"
  | "set_thinking_level"
  | "cycle_thinking_level"
  | "get_available_thinking_levels"
  | "set_steering_mode"
  | "set_follow_up_mode"
  | "set_auto_compaction"
  | "set_auto_retry"
  | "set_session_name"
  | "get_last_assistant_text";

export const stateCommands: CommandTable<StateCommands> = {
  get_state: sync((_c, server) => {
    const agent = server.agent;
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
  get_ui_state: sync((_c, server) => ({ ...server.host.uiState(), pendingDialogs: server.dialogs.snapshot() })),
  get_commands: sync((_c, server) => ({ commands: server.runtime.commandList() })),
  get_messages: sync((_c, server) => ({ messages: server.agent.messages })),
  set_thinking_level: sync((c, server) => {
    server.agent.setThinkingLevel(c.level);
  }),
  cycle_thinking_level: sync((_c, server) => {
    const level = server.agent.cycleThinkingLevel();
    return level === null ? null : { level };
  }),
  get_available_thinking_levels: sync((_c, server) => ({ levels: server.agent.availableThinkingLevels() })),
  set_steering_mode: sync((c, server) => {
    server.agent.steeringMode = c.mode;
  }),
  set_follow_up_mode: sync((c, server) => {
    server.agent.followUpMode = c.mode;
  }),
  set_auto_compaction: sync((c, server) => {
    server.agent.autoCompactionEnabled = c.enabled;
  }),
  set_auto_retry: sync((c, server) => {
    server.agent.autoRetryEnabled = c.enabled;
  }),
  set_session_name: sync((c, server) => {
    const name = c.name.trim();
    if (!name) throw new CommandError("Session name cannot be empty");
    server.host.setSessionName(name);
  }),
  // As pi: the last assistant message that is not an empty aborted one; no text → no `text`.
  get_last_assistant_text: sync((_c, server) => {
    const last = server.agent.messages.findLast((m) => m.role === "assistant" && !(m.stopReason === "aborted" && m.content.length === 0));
    const text =
      last?.role === "assistant"
        ? last.content
            .flatMap((b) => (b.type === "text" ? [b.text] : []))
            .join("")
            .trim()
        : "";
    return text ? { text } : {};
  }),
};
