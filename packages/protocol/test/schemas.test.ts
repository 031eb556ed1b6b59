/**
 * Every example record of pi's RPC documentation (0.73.1's docs/rpc.md and the newer upstream
 * rpc.md / rpc-commands.md / json.md) validates against the schema of its kind, and against
 * the generated JSON Schema files. Where a doc example has `{...}` / `[...]` placeholders, a
 * concrete value of the documented type stands in.
 */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { Compile } from "typebox/compile";
import { Compile as CompileJsonSchema } from "typebox/schema";
import type { TSchema } from "typebox";
import {
  AgentMessage,
  AssistantMessage,
  BashExecutionMessage,
  COMMAND_SCHEMAS,
  ErrorResponse,
  EVENT_SCHEMAS,
  ExtensionUiDismissed,
  ExtensionUiError,
  ExtensionUiRequest,
  ExtensionUiResponse,
  InboundRecord,
  Model,
  OutboundRecord,
  ParleyAdditionRecord,
  ResponseEnvelope,
  RpcCommand,
  RpcEvent,
  RpcResponse,
  SUCCESS_RESPONSE_SCHEMAS,
  ToolResultMessage,
  UserMessage,
} from "../src/schema/index.js";

// ---- validators --------------------------------------------------------------------------

const compiled = new Map<TSchema, ReturnType<typeof Compile>>();
function validator(schema: TSchema) {
  let v = compiled.get(schema);
  if (v === undefined) {
    v = Compile(schema);
    compiled.set(schema, v);
  }
  return v;
}

function expectValid(schema: TSchema, value: unknown): void {
  const v = validator(schema);
  if (!v.Check(value)) {
    throw new Error(`expected valid: ${JSON.stringify(value)}\n${JSON.stringify(v.Errors(value).slice(0, 4), null, 1)}`);
  }
}

function expectInvalid(schema: TSchema, value: unknown): void {
  expect(validator(schema).Check(value), JSON.stringify(value)).toBe(false);
}

const jsonSchemaDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../json-schema");
const jsonValidators = new Map<string, ReturnType<typeof CompileJsonSchema>>();
function jsonValidator(file: string) {
  let v = jsonValidators.get(file);
  if (v === undefined) {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const document = JSON.parse(readFileSync(path.join(jsonSchemaDir, file), "utf8")) as any;
    v = CompileJsonSchema(document);
    jsonValidators.set(file, v);
  }
  return v;
}

function expectValidJson(file: string, value: unknown): void {
  expect(jsonValidator(file).Check(value), `${file}: ${JSON.stringify(value)}`).toBe(true);
}

function expectInvalidJson(file: string, value: unknown): void {
  expect(jsonValidator(file).Check(value), `${file}: ${JSON.stringify(value)}`).toBe(false);
}

/** A documented JSON example, parsed from its text as a client would. */
const json = (text: string): Record<string, unknown> => JSON.parse(text) as Record<string, unknown>;

// ---- stand-ins for the docs' placeholders ------------------------------------------------------

const MODEL = json(`{
  "id": "claude-sonnet-4-20250514",
  "name": "Claude Sonnet 4",
  "api": "anthropic-messages",
  "provider": "anthropic",
  "baseUrl": "https://api.anthropic.com",
  "reasoning": true,
  "input": ["text", "image"],
  "contextWindow": 200000,
  "maxTokens": 16384,
  "cost": {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}
}`);

const USAGE = json(`{
  "input": 100, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 150,
  "cost": {"input": 0.0003, "output": 0.00075, "cacheRead": 0, "cacheWrite": 0, "total": 0.00105}
}`);

const USER_MESSAGE = json(`{"role": "user", "content": "Hello!", "timestamp": 1733234567890, "attachments": []}`);

/** The docs' AssistantMessage example, whose usage lacks pi-ai's required totalTokens. */
const DOC_ASSISTANT_MESSAGE = json(`{
  "role": "assistant",
  "content": [
    {"type": "text", "text": "Hello! How can I help?"},
    {"type": "thinking", "thinking": "User is greeting me..."},
    {"type": "toolCall", "id": "call_123", "name": "bash", "arguments": {"command": "ls"}}
  ],
  "api": "anthropic-messages",
  "provider": "anthropic",
  "model": "claude-sonnet-4-20250514",
  "usage": {
    "input": 100, "output": 50, "cacheRead": 0, "cacheWrite": 0,
    "cost": {"input": 0.0003, "output": 0.00075, "cacheRead": 0, "cacheWrite": 0, "total": 0.00105}
  },
  "stopReason": "stop",
  "timestamp": 1733234567890
}`);
const ASSISTANT_MESSAGE = { ...DOC_ASSISTANT_MESSAGE, usage: USAGE };

const TOOL_RESULT = json(`{
  "role": "toolResult",
  "toolCallId": "call_123",
  "toolName": "bash",
  "content": [{"type": "text", "text": "total 48\\ndrwxr-xr-x ..."}],
  "isError": false,
  "timestamp": 1733234567890
}`);

const TOOL_RESULT_WITH_USAGE = json(`{
  "role": "toolResult",
  "toolCallId": "call_123",
  "toolName": "bash",
  "content": [{"type": "text", "text": "total 48\\ndrwxr-xr-x ..."}],
  "usage": {
    "input": 100, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 150,
    "cost": {"input": 0.0003, "output": 0.00075, "cacheRead": 0, "cacheWrite": 0, "total": 0.00105}
  },
  "isError": false,
  "timestamp": 1733234567890
}`);

const BASH_MESSAGE = json(`{
  "role": "bashExecution",
  "command": "ls -la",
  "output": "total 48\\ndrwxr-xr-x ...",
  "exitCode": 0,
  "cancelled": false,
  "truncated": false,
  "fullOutputPath": null,
  "timestamp": 1733234567890
}`);

const USER_ENTRY = {
  type: "message",
  id: "def456",
  parentId: "abc123",
  timestamp: "2024-12-03T14:00:01.000Z",
  message: { role: "user", content: "Hello", timestamp: 1733234567890 },
};
const ROOT_ENTRY = { ...USER_ENTRY, id: "abc123", parentId: null };

// ---- requests --------------------------------------------------------------------------------

const COMMAND_EXAMPLES = [
  `{"id": "req-1", "type": "prompt", "message": "Hello, world!"}`,
  `{"type": "prompt", "message": "What's in this image?", "images": [{"type": "image", "data": "base64-encoded-data", "mimeType": "image/png"}]}`,
  `{"type": "prompt", "message": "New instruction", "streamingBehavior": "steer"}`,
  `{"type": "steer", "message": "Stop and do this instead"}`,
  `{"type": "steer", "message": "Look at this instead", "images": [{"type": "image", "data": "base64-encoded-data", "mimeType": "image/png"}]}`,
  `{"type": "follow_up", "message": "After you're done, also do this"}`,
  `{"type": "follow_up", "message": "Also check this image", "images": [{"type": "image", "data": "base64-encoded-data", "mimeType": "image/png"}]}`,
  `{"type": "abort"}`,
  `{"type": "clear_queue"}`,
  `{"type": "new_session"}`,
  `{"type": "new_session", "parentSession": "/path/to/parent-session.jsonl"}`,
  `{"type": "get_state"}`,
  `{"type": "get_messages"}`,
  `{"type": "set_model", "provider": "anthropic", "modelId": "claude-sonnet-4-20250514"}`,
  `{"type": "cycle_model"}`,
  `{"type": "get_available_models"}`,
  `{"type": "set_thinking_level", "level": "high"}`,
  `{"type": "cycle_thinking_level"}`,
  `{"type": "get_available_thinking_levels"}`,
  `{"type": "set_steering_mode", "mode": "one-at-a-time"}`,
  `{"type": "set_follow_up_mode", "mode": "one-at-a-time"}`,
  `{"type": "compact"}`,
  `{"type": "compact", "customInstructions": "Focus on code changes"}`,
  `{"type": "set_auto_compaction", "enabled": true}`,
  `{"type": "set_auto_retry", "enabled": true}`,
  `{"type": "abort_retry"}`,
  `{"type": "bash", "command": "ls -la"}`,
  `{"id": "req-1", "type": "bash", "command": "ls -la"}`,
  `{"type": "abort_bash"}`,
  `{"type": "get_session_stats"}`,
  `{"type": "export_html"}`,
  `{"type": "export_html", "outputPath": "/tmp/session.html"}`,
  `{"type": "switch_session", "sessionPath": "/path/to/session.jsonl"}`,
  `{"type": "fork", "entryId": "abc123"}`,
  `{"type": "clone"}`,
  `{"type": "get_fork_messages"}`,
  `{"type": "get_entries"}`,
  `{"type": "get_entries", "since": "abc123"}`,
  `{"type": "get_tree"}`,
  `{"type": "get_last_assistant_text"}`,
  `{"type": "set_session_name", "name": "my-feature-work"}`,
  `{"type": "get_commands"}`,
  `{"type": "get_ui_state"}`,
  `{"type": "list_sessions"}`,
  `{"type": "list_sessions", "scope": "all"}`,
  `{"type": "reload"}`,
  `{"type": "refresh_models"}`,
  `{"type": "list_files", "query": "src/ma", "limit": 20}`,
].map(json);

describe("commands from the docs", () => {
  it("cover every command type", () => {
    const types = new Set(COMMAND_EXAMPLES.map((c) => c["type"]));
    expect([...types].sort()).toEqual(Object.keys(COMMAND_SCHEMAS).sort());
  });

  it.each(COMMAND_EXAMPLES.map((c) => [c["type"], c] as const))("%s: %j", (type, command) => {
    expectValid(COMMAND_SCHEMAS[type as keyof typeof COMMAND_SCHEMAS], command);
    expectValid(RpcCommand, command);
    expectValid(InboundRecord, command);
    expectValidJson("command.json", command);
    expectValidJson("inbound.json", command);
  });

  it("reject a wrong field against the union and the JSON Schema", () => {
    // "max" is a level the newest pi accepts; "maximum" is not one.
    expectValid(RpcCommand, { type: "set_thinking_level", level: "max" });
    expectValidJson("command.json", { type: "set_thinking_level", level: "max" });
    const bad = { type: "set_thinking_level", level: "maximum" };
    expectInvalid(RpcCommand, bad);
    expectInvalid(InboundRecord, bad);
    expectInvalidJson("command.json", bad);
    expectInvalidJson("inbound.json", bad);
    expectInvalidJson("command.json", { type: "prompt" });
    expectInvalidJson("command.json", { type: "no_such_command" });
  });
});

// ---- responses -------------------------------------------------------------------------------

const RESPONSE_EXAMPLES: Record<string, unknown>[] = [
  json(`{"id": "req-1", "type": "response", "command": "prompt", "success": true}`),
  json(`{"type": "response", "command": "steer", "success": true}`),
  json(`{"type": "response", "command": "follow_up", "success": true}`),
  json(`{"type": "response", "command": "abort", "success": true}`),
  json(`{"type": "response", "command": "clear_queue", "success": true,
         "data": {"steering": ["Change direction"], "followUp": ["Summarize when finished"]}}`),
  json(`{"type": "response", "command": "new_session", "success": true, "data": {"cancelled": false}}`),
  json(`{"type": "response", "command": "new_session", "success": true, "data": {"cancelled": true}}`),
  {
    ...json(`{"type": "response", "command": "get_state", "success": true}`),
    data: {
      model: MODEL,
      ...json(`{
        "thinkingLevel": "medium",
        "isStreaming": false,
        "isCompacting": false,
        "steeringMode": "all",
        "followUpMode": "one-at-a-time",
        "sessionFile": "/path/to/session.jsonl",
        "sessionId": "abc123",
        "sessionName": "my-feature-work",
        "autoCompactionEnabled": true,
        "messageCount": 5,
        "pendingMessageCount": 0
      }`),
    },
  },
  {
    type: "response",
    command: "get_messages",
    success: true,
    data: { messages: [USER_MESSAGE, ASSISTANT_MESSAGE, TOOL_RESULT, BASH_MESSAGE] },
  },
  { type: "response", command: "set_model", success: true, data: MODEL },
  {
    type: "response",
    command: "cycle_model",
    success: true,
    data: { model: MODEL, thinkingLevel: "medium", isScoped: false },
  },
  { type: "response", command: "cycle_model", success: true, data: null },
  { type: "response", command: "get_available_models", success: true, data: { models: [MODEL] } },
  json(`{"type": "response", "command": "set_thinking_level", "success": true}`),
  json(`{"type": "response", "command": "cycle_thinking_level", "success": true, "data": {"level": "high"}}`),
  json(`{"type": "response", "command": "get_available_thinking_levels", "success": true,
         "data": {"levels": ["off", "minimal", "low", "medium", "high"]}}`),
  json(`{"type": "response", "command": "set_steering_mode", "success": true}`),
  json(`{"type": "response", "command": "set_follow_up_mode", "success": true}`),
  json(`{"type": "response", "command": "compact", "success": true,
         "data": {"summary": "Summary of conversation...", "firstKeptEntryId": "abc123", "tokensBefore": 150000, "details": {}}}`),
  json(`{"type": "response", "command": "compact", "success": true,
         "data": {
           "summary": "Summary of conversation...",
           "firstKeptEntryId": "abc123",
           "tokensBefore": 150000,
           "estimatedTokensAfter": 32000,
           "usage": {"input": 32000, "output": 1200, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 33200,
                     "cost": {"input": 0.01, "output": 0.02, "cacheRead": 0, "cacheWrite": 0, "total": 0.03}},
           "details": {}
         }}`),
  json(`{"type": "response", "command": "set_auto_compaction", "success": true}`),
  json(`{"type": "response", "command": "set_auto_retry", "success": true}`),
  json(`{"type": "response", "command": "abort_retry", "success": true}`),
  json(`{"id": "req-1", "type": "response", "command": "bash", "success": true,
         "data": {"output": "total 48\\ndrwxr-xr-x ...", "exitCode": 0, "cancelled": false, "truncated": false}}`),
  json(`{"type": "response", "command": "bash", "success": true,
         "data": {"output": "truncated output...", "exitCode": 0, "cancelled": false, "truncated": true,
                  "fullOutputPath": "/tmp/pi-bash-abc123.log"}}`),
  json(`{"type": "response", "command": "abort_bash", "success": true}`),
  json(`{"type": "response", "command": "get_session_stats", "success": true,
         "data": {
           "sessionFile": "/path/to/session.jsonl",
           "sessionId": "abc123",
           "userMessages": 5, "assistantMessages": 5, "toolCalls": 12, "toolResults": 12, "totalMessages": 22,
           "tokens": {"input": 50000, "output": 10000, "cacheRead": 40000, "cacheWrite": 5000, "total": 105000},
           "cost": 0.45,
           "contextUsage": {"tokens": 60000, "contextWindow": 200000, "percent": 30}
         }}`),
  json(`{"type": "response", "command": "get_session_stats", "success": true,
         "data": {
           "sessionId": "abc123",
           "userMessages": 1, "assistantMessages": 1, "toolCalls": 0, "toolResults": 0, "totalMessages": 2,
           "tokens": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "total": 2},
           "cost": 0,
           "contextUsage": {"tokens": null, "contextWindow": 200000, "percent": null}
         }}`),
  json(`{"type": "response", "command": "export_html", "success": true, "data": {"path": "/tmp/session.html"}}`),
  json(`{"type": "response", "command": "switch_session", "success": true, "data": {"cancelled": false}}`),
  json(`{"type": "response", "command": "switch_session", "success": true, "data": {"cancelled": true}}`),
  json(`{"type": "response", "command": "fork", "success": true, "data": {"text": "The original prompt text...", "cancelled": false}}`),
  json(`{"type": "response", "command": "fork", "success": true, "data": {"text": "The original prompt text...", "cancelled": true}}`),
  json(`{"type": "response", "command": "fork", "success": true, "data": {"cancelled": true}}`),
  json(`{"type": "response", "command": "clone", "success": true, "data": {"cancelled": false}}`),
  json(`{"type": "response", "command": "clone", "success": true, "data": {"cancelled": true}}`),
  json(`{"type": "response", "command": "get_fork_messages", "success": true,
         "data": {"messages": [{"entryId": "abc123", "text": "First prompt..."}, {"entryId": "def456", "text": "Second prompt..."}]}}`),
  { type: "response", command: "get_entries", success: true, data: { entries: [USER_ENTRY], leafId: "def456" } },
  { type: "response", command: "get_entries", success: true, data: { entries: [], leafId: null } },
  {
    type: "response",
    command: "get_tree",
    success: true,
    data: {
      tree: [{ entry: ROOT_ENTRY, children: [{ entry: USER_ENTRY, children: [], label: "checkpoint-1" }] }],
      leafId: "def456",
    },
  },
  json(`{"type": "response", "command": "get_last_assistant_text", "success": true, "data": {"text": "The assistant's response..."}}`),
  json(`{"type": "response", "command": "get_last_assistant_text", "success": true, "data": {"text": null}}`),
  json(`{"type": "response", "command": "set_session_name", "success": true}`),
  json(`{"type": "response", "command": "get_commands", "success": true,
         "data": {"commands": [
           {"name": "session-name", "description": "Set or clear session name", "source": "extension", "path": "/home/user/.pi/agent/extensions/session.ts"},
           {"name": "fix-tests", "description": "Fix failing tests", "source": "prompt", "location": "project", "path": "/home/user/myproject/.pi/agent/prompts/fix-tests.md"},
           {"name": "skill:brave-search", "description": "Web search via Brave API", "source": "skill", "location": "user", "path": "/home/user/.pi/agent/skills/brave-search/SKILL.md"}
         ]}}`),
  json(`{"type": "response", "command": "get_commands", "success": true,
         "data": {"commands": [
           {"name": "fix-tests", "description": "Fix failing tests", "source": "prompt",
            "sourceInfo": {"path": "/home/user/myproject/.pi/agent/prompts/fix-tests.md", "source": "local", "scope": "project", "origin": "top-level"}}
         ]}}`),
  json(`{"type": "response", "command": "get_ui_state", "success": true,
         "data": {"statuses": {"my-ext": "Turn 3 running..."},
                  "widgets": {"my-ext": {"lines": ["--- My Widget ---"], "placement": "aboveEditor"}},
                  "notifications": [{"message": "Command blocked by user", "notifyType": "warning"}],
                  "pendingDialogs": [{"request": {"type": "extension_ui_request", "id": "uuid-1", "method": "select",
                                                  "title": "Allow dangerous command?", "options": ["Allow", "Block"], "timeout": 10000},
                                      "remainingMs": 7000}]}}`),
  json(`{"type": "response", "command": "list_sessions", "success": true,
         "data": {"sessions": [{"id": "0193", "path": "/home/user/.pi/agent/sessions/--p--/a.jsonl", "cwd": "/p", "name": "refactor",
                                "firstMessage": "Tidy the parser", "updated": "2026-01-02T03:04:05.000Z", "messageCount": 12}]}}`),
  json(`{"type": "response", "command": "reload", "success": true}`),
  json(`{"type": "response", "command": "refresh_models", "success": true, "data": {"models": []}}`),
  json(`{"type": "response", "command": "list_files", "success": true, "data": {"files": ["src/", "src/main.ts"], "truncated": false}}`),
];

const ERROR_EXAMPLES = [
  `{"type": "response", "command": "set_model", "success": false, "error": "Model not found: invalid/model"}`,
  `{"type": "response", "command": "parse", "success": false, "error": "Failed to parse command: Unexpected token..."}`,
  `{"id": 7, "type": "response", "command": "make_coffee", "success": false, "error": "Unknown command: make_coffee"}`,
].map(json);

describe("responses from the docs", () => {
  it("cover every command type", () => {
    const commands = new Set(RESPONSE_EXAMPLES.map((r) => r["command"]));
    expect([...commands].sort()).toEqual(Object.keys(SUCCESS_RESPONSE_SCHEMAS).sort());
  });

  it.each(RESPONSE_EXAMPLES.map((r) => [r["command"], r] as const))("%s: %j", (command, response) => {
    expectValid(SUCCESS_RESPONSE_SCHEMAS[command as keyof typeof SUCCESS_RESPONSE_SCHEMAS], response);
    expectValid(RpcResponse, response);
    expectValid(ResponseEnvelope, response);
    expectValid(OutboundRecord, response);
    expectValidJson("response.json", response);
    expectValidJson("outbound.json", response);
  });

  it.each(ERROR_EXAMPLES)("error: %j", (response) => {
    expectValid(ErrorResponse, response);
    expectValid(RpcResponse, response);
    expectValid(OutboundRecord, response);
    expectValidJson("response.json", response);
    expectValidJson("outbound.json", response);
  });

  it("reject data of the wrong shape for the command", () => {
    expectInvalid(RpcResponse, { type: "response", command: "new_session", success: true, data: { cancelled: "no" } });
    expectInvalid(RpcResponse, { type: "response", command: "get_state", success: true, data: {} });
    expectInvalid(RpcResponse, { type: "response", command: "set_model", success: false });
    expectInvalidJson("response.json", { type: "response", command: "get_state", success: true, data: {} });
    expectInvalidJson("outbound.json", { type: "response", command: "new_session", success: true, data: { cancelled: "no" } });
    // The loose envelope accepts any data.
    expectValid(ResponseEnvelope, { type: "response", command: "get_state", success: true, data: {} });
  });
});

// ---- events ----------------------------------------------------------------------------------

const usage = { usage: USAGE };
const EVENT_EXAMPLES: Record<string, unknown>[] = [
  json(`{"type": "agent_start"}`),
  { type: "agent_end", messages: [USER_MESSAGE, ASSISTANT_MESSAGE] },
  { type: "agent_end", messages: [USER_MESSAGE, ASSISTANT_MESSAGE], willRetry: false },
  json(`{"type": "agent_settled"}`),
  json(`{"type": "turn_start"}`),
  { type: "turn_end", message: ASSISTANT_MESSAGE, toolResults: [TOOL_RESULT] },
  { type: "message_start", message: USER_MESSAGE },
  { type: "message_end", message: ASSISTANT_MESSAGE },
  { ...json(`{"type":"message_update","assistantMessageEvent":{"type":"text_start","contentIndex":0}}`), ...usage },
  { ...json(`{"type":"message_update","assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"Hello"}}`), ...usage },
  { ...json(`{"type":"message_update","assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":" world"}}`), ...usage },
  {
    ...json(`{"type":"message_update","assistantMessageEvent":{"type":"text_end","contentIndex":0,"content":"Hello world"}}`),
    ...usage,
  },
  { ...json(`{"type":"message_update","assistantMessageEvent":{"type":"start"}}`), ...usage },
  { ...json(`{"type":"message_update","assistantMessageEvent":{"type":"thinking_start","contentIndex":0}}`), ...usage },
  { ...json(`{"type":"message_update","assistantMessageEvent":{"type":"thinking_delta","contentIndex":0,"delta":"Hm"}}`), ...usage },
  { ...json(`{"type":"message_update","assistantMessageEvent":{"type":"thinking_end","contentIndex":0,"content":"Hm"}}`), ...usage },
  {
    ...json(`{"type":"message_update","assistantMessageEvent":{"type":"toolcall_start","contentIndex":1,"id":"call_123","toolName":"bash"}}`),
    ...usage,
  },
  {
    ...json(`{"type":"message_update","assistantMessageEvent":{"type":"toolcall_delta","contentIndex":1,"delta":"{\\"command\\":"}}`),
    ...usage,
  },
  {
    ...json(`{"type":"message_update","assistantMessageEvent":{"type":"toolcall_end","contentIndex":1,
              "toolCall":{"type":"toolCall","id":"call_123","name":"bash","arguments":{"command":"ls"}}}}`),
    ...usage,
  },
  { type: "message_update", usage: USAGE, assistantMessageEvent: { type: "done", reason: "stop", message: ASSISTANT_MESSAGE } },
  json(`{"type": "bash_execution_update", "id": "req-1", "delta": "total 48\\n"}`),
  json(`{"type": "tool_execution_start", "toolCallId": "call_abc123", "toolName": "bash", "args": {"command": "ls -la"}}`),
  json(`{"type": "tool_execution_update", "toolCallId": "call_abc123", "toolName": "bash", "args": {"command": "ls -la"},
         "partialResult": {"content": [{"type": "text", "text": "partial output so far..."}],
                           "details": {"truncation": null, "fullOutputPath": null}}}`),
  json(`{"type": "tool_execution_end", "toolCallId": "call_abc123", "toolName": "bash",
         "result": {"content": [{"type": "text", "text": "total 48\\n..."}], "details": {}}, "isError": false}`),
  json(`{"type": "queue_update", "steering": ["Focus on error handling"], "followUp": ["After that, summarize the result"]}`),
  json(`{"type": "compaction_start", "reason": "threshold"}`),
  json(`{"type": "compaction_end", "reason": "threshold",
         "result": {"summary": "Summary of conversation...", "firstKeptEntryId": "abc123", "tokensBefore": 150000, "details": {}},
         "aborted": false, "willRetry": false}`),
  json(`{"type": "compaction_end", "reason": "threshold",
         "result": {"summary": "Summary of conversation...", "firstKeptEntryId": "abc123", "tokensBefore": 150000,
                    "estimatedTokensAfter": 32000,
                    "usage": {"input": 32000, "output": 1200, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 33200,
                              "cost": {"input": 0.01, "output": 0.02, "cacheRead": 0, "cacheWrite": 0, "total": 0.03}},
                    "details": {}},
         "aborted": false, "willRetry": false}`),
  json(`{"type": "compaction_end", "reason": "manual", "result": null, "aborted": true, "willRetry": false}`),
  json(`{"type": "compaction_end", "reason": "overflow", "result": null, "aborted": false, "willRetry": false,
         "errorMessage": "quota exceeded"}`),
  json(`{"type": "auto_retry_start", "attempt": 1, "maxAttempts": 3, "delayMs": 2000,
         "errorMessage": "529 {\\"type\\":\\"error\\",\\"error\\":{\\"type\\":\\"overloaded_error\\",\\"message\\":\\"Overloaded\\"}}"}`),
  json(`{"type": "auto_retry_end", "success": true, "attempt": 2}`),
  json(`{"type": "auto_retry_end", "success": false, "attempt": 3, "finalError": "529 overloaded_error: Overloaded"}`),
  json(`{"type": "summarization_retry_scheduled", "attempt": 1, "maxAttempts": 3, "delayMs": 2000, "errorMessage": "terminated"}`),
  json(`{"type": "summarization_retry_attempt_start", "source": "compaction", "reason": "threshold"}`),
  json(`{"type": "summarization_retry_attempt_start", "source": "branchSummary"}`),
  json(`{"type": "summarization_retry_finished"}`),
  json(`{"type": "extension_error", "extensionPath": "/path/to/extension.ts", "event": "tool_call", "error": "Error message..."}`),
  json(`{"type": "session_info_changed", "name": "my-feature-work"}`),
  json(
    `{"type": "entry_appended", "entry": {"type": "custom", "customType": "evidence", "data": {"event": "agent_start"}, "id": "65c59a3a", "parentId": null, "timestamp": "2026-01-01T00:00:00.000Z"}}`,
  ),
  json(`{"type": "thinking_level_changed", "level": "high"}`),
];

describe("events from the docs", () => {
  it("cover every event type", () => {
    const types = new Set(EVENT_EXAMPLES.map((e) => e["type"]));
    expect([...types].sort()).toEqual(Object.keys(EVENT_SCHEMAS).sort());
  });

  it.each(EVENT_EXAMPLES.map((e) => [e["type"], e] as const))("%s: %j", (type, event) => {
    expectValid(EVENT_SCHEMAS[type as keyof typeof EVENT_SCHEMAS], event);
    expectValid(RpcEvent, event);
    expectValid(OutboundRecord, event);
    expectValidJson("event.json", event);
    expectValidJson("outbound.json", event);
  });

  it("reject pi 0.73's snapshot-carrying message_update (the seed is delta-only)", () => {
    const withSnapshot = {
      type: "message_update",
      message: ASSISTANT_MESSAGE,
      usage: USAGE,
      assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta: "Hello ", partial: ASSISTANT_MESSAGE },
    };
    expectInvalid(RpcEvent, withSnapshot);
    expectInvalidJson("event.json", withSnapshot);
    expectInvalidJson("outbound.json", withSnapshot);
    expectInvalid(RpcEvent, { ...withSnapshot, message: undefined, assistantMessageEvent: { type: "text_start", contentIndex: 0, partial: {} } });
    const { message: _message, ...withoutMessage } = withSnapshot;
    expectInvalid(RpcEvent, withoutMessage);
    expectInvalidJson("event.json", withoutMessage);
    // `usage` is required.
    expectInvalid(RpcEvent, { type: "message_update", assistantMessageEvent: { type: "text_start", contentIndex: 0 } });
    // toolcall_start carries id and toolName.
    expectInvalid(RpcEvent, { type: "message_update", usage: USAGE, assistantMessageEvent: { type: "toolcall_start", contentIndex: 0 } });
  });
});

// ---- extension UI ----------------------------------------------------------------------------

const UI_REQUEST_EXAMPLES = [
  `{"type": "extension_ui_request", "id": "uuid-1", "method": "select", "title": "Allow dangerous command?", "options": ["Allow", "Block"], "timeout": 10000}`,
  `{"type": "extension_ui_request", "id": "uuid-2", "method": "confirm", "title": "Clear session?", "message": "All messages will be lost.", "timeout": 5000}`,
  `{"type": "extension_ui_request", "id": "uuid-3", "method": "input", "title": "Enter a value", "placeholder": "type something..."}`,
  `{"type": "extension_ui_request", "id": "uuid-4", "method": "editor", "title": "Edit some text", "prefill": "Line 1\\nLine 2\\nLine 3"}`,
  `{"type": "extension_ui_request", "id": "uuid-5", "method": "notify", "message": "Command blocked by user", "notifyType": "warning"}`,
  `{"type": "extension_ui_request", "id": "uuid-6", "method": "setStatus", "statusKey": "my-ext", "statusText": "Turn 3 running..."}`,
  `{"type": "extension_ui_request", "id": "uuid-7", "method": "setWidget", "widgetKey": "my-ext", "widgetLines": ["--- My Widget ---", "Line 1", "Line 2"], "widgetPlacement": "aboveEditor"}`,
  `{"type": "extension_ui_request", "id": "uuid-8", "method": "setTitle", "title": "pi - my project"}`,
  `{"type": "extension_ui_request", "id": "uuid-9", "method": "set_editor_text", "text": "prefilled text for the user"}`,
].map(json);

const UI_RESPONSE_EXAMPLES = [
  `{"type": "extension_ui_response", "id": "uuid-1", "value": "Allow"}`,
  `{"type": "extension_ui_response", "id": "uuid-2", "confirmed": true}`,
  `{"type": "extension_ui_response", "id": "uuid-3", "cancelled": true}`,
].map(json);

describe("extension UI records from the docs", () => {
  it.each(UI_REQUEST_EXAMPLES.map((r) => [r["method"], r] as const))("request %s: %j", (_method, request) => {
    expectValid(ExtensionUiRequest, request);
    expectValid(OutboundRecord, request);
    expectValidJson("extension-ui-request.json", request);
    expectValidJson("outbound.json", request);
  });

  it("reject malformed extension UI records", () => {
    expectInvalidJson("extension-ui-request.json", { type: "extension_ui_request", id: "u", method: "select", title: "t" });
    expectInvalidJson("extension-ui-response.json", { type: "extension_ui_response", id: "u", cancelled: false });
    expectInvalid(ExtensionUiResponse, { type: "extension_ui_response", id: "u", cancelled: false });
  });

  it.each(UI_RESPONSE_EXAMPLES)("response %j", (response) => {
    expectValid(ExtensionUiResponse, response);
    expectValid(InboundRecord, response);
    expectValidJson("extension-ui-response.json", response);
    expectValidJson("inbound.json", response);
  });
});

// ---- parley additions ------------------------------------------------------------------------

describe("parley additions", () => {
  const dismissed = json(`{"type": "extension_ui_dismissed", "id": "uuid-1", "method": "select", "reason": "timeout"}`);
  const refused = json(
    `{"type": "extension_ui_error", "id": "uuid-1", "code": "already_resolved", "error": "Dialog uuid-1 was already answered", "pending": false}`,
  );

  it("validate as outbound records and as additions", () => {
    expectValid(ExtensionUiDismissed, dismissed);
    expectValid(ExtensionUiError, refused);
    for (const record of [dismissed, refused]) {
      expectValid(OutboundRecord, record);
      expectValid(ParleyAdditionRecord, record);
      expectValidJson("outbound.json", record);
      expectValidJson("parley-additions.json", record);
    }
    const command = json(`{"id": "ui-1", "type": "get_ui_state"}`);
    expectValid(ParleyAdditionRecord, command);
    expectValidJson("parley-additions.json", command);
    const response = RESPONSE_EXAMPLES.find((r) => r["command"] === "get_ui_state");
    expectValid(ParleyAdditionRecord, response);
    expectValidJson("parley-additions.json", response);
  });
});

// ---- message shapes ----------------------------------------------------------------------------

describe("message and model shapes from the docs", () => {
  it("Model", () => {
    expectValid(Model, MODEL);
    expectInvalid(Model, { ...MODEL, input: ["audio"] });
  });

  it("UserMessage (with the docs' extra attachments field)", () => {
    expectValid(UserMessage, USER_MESSAGE);
    expectValid(AgentMessage, USER_MESSAGE);
    expectValid(UserMessage, {
      role: "user",
      content: [
        { type: "text", text: "look" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
      ],
      timestamp: 1,
    });
    expectInvalid(UserMessage, { role: "user", content: [{ type: "thinking", thinking: "x" }], timestamp: 1 });
  });

  it("AssistantMessage: the docs' example omits usage.totalTokens, which pi-ai requires", () => {
    expectInvalid(AssistantMessage, DOC_ASSISTANT_MESSAGE);
    expectInvalidJson("event.json", { type: "message_end", message: DOC_ASSISTANT_MESSAGE });
    expectValid(AssistantMessage, ASSISTANT_MESSAGE);
    expectValid(AgentMessage, ASSISTANT_MESSAGE);
    expectInvalid(AssistantMessage, { ...ASSISTANT_MESSAGE, stopReason: "paused" });
  });

  it("ToolResultMessage, with and without the newer usage field", () => {
    expectValid(ToolResultMessage, TOOL_RESULT);
    expectValid(ToolResultMessage, TOOL_RESULT_WITH_USAGE);
    expectValid(AgentMessage, TOOL_RESULT_WITH_USAGE);
  });

  it("BashExecutionMessage (null fullOutputPath as in the docs)", () => {
    expectValid(BashExecutionMessage, BASH_MESSAGE);
    expectValid(AgentMessage, BASH_MESSAGE);
  });
});
