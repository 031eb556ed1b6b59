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
  | "clear_queue"
  | "set_steering_mode"
  | "set_follow_up_mode"
  | "set_auto_compaction"
  | "set_auto_retry"
  | "abort_retry"
  | "set_session_name"
  | "get_last_assistant_text";

export const stateCommands: CommandTable<StateCommands> = {
  get_state: sync((_c, server) => {
    const session = server.session();
    const s = server.settings;
    return {
      model: null,
      thinkingLevel: s.thinkingLevel,
      isStreaming: false,
      isCompacting: false,
      steeringMode: s.steeringMode,
      followUpMode: s.followUpMode,
      ...(session.file !== undefined ? { sessionFile: session.file } : {}),
      sessionId: session.id,
      ...(session.name !== undefined ? { sessionName: session.name } : {}),
      autoCompactionEnabled: s.autoCompactionEnabled,
      messageCount: session.messages().length,
      pendingMessageCount: 0,
    };
  }),
  get_ui_state: sync((_c, server) => ({ ...server.uiState(), pendingDialogs: server.dialogs.snapshot() })),
  get_commands: sync((_c, server) => ({ commands: server.runtime.commandList() })),
  get_messages: sync((_c, server) => ({ messages: server.session().messages() })),
  set_thinking_level: sync((c, server) => {
    server.setThinkingLevel(c.level);
  }),
  // No model is configured yet, so no level is available to cycle through (pi answers null too).
  cycle_thinking_level: sync(() => null),
  get_available_thinking_levels: sync((_c, server) => ({ levels: server.availableThinkingLevels() })),
  // Nothing queues until the agent loop exists, so there is never anything to clear.
  clear_queue: sync(() => ({ steering: [], followUp: [] })),
  set_steering_mode: sync((c, server) => {
    server.settings.steeringMode = c.mode;
  }),
  set_follow_up_mode: sync((c, server) => {
    server.settings.followUpMode = c.mode;
  }),
  set_auto_compaction: sync((c, server) => {
    server.settings.autoCompactionEnabled = c.enabled;
  }),
  set_auto_retry: sync((c, server) => {
    server.settings.autoRetryEnabled = c.enabled;
  }),
  abort_retry: sync(() => undefined),
  set_session_name: sync((c, server) => {
    const name = c.name.trim();
    if (!name) throw new CommandError("Session name cannot be empty");
    server.setSessionName(name);
  }),
  get_last_assistant_text: sync((_c, server) => {
    const last = server
      .session()
      .messages()
      .filter((m) => m.role === "assistant")
      .at(-1);
    const content = (last?.["content"] ?? []) as { type: string; text?: string }[];
    const text = content.filter((b) => b.type === "text").map((b) => b.text ?? "").join("");
    return { text: last ? text : null };
  }),
};
