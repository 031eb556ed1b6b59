import { describe, expect, it } from "vitest";
import { checkCommand, type CommandCheck } from "../src/validate.js";
import { COMMAND_SCHEMAS, type CommandType } from "../src/schema/command-records.js";

/** A valid example per command (from pi's RPC docs where they give one) and a bad variant. */
const CASES: Record<CommandType, { valid: object[]; invalid: { value: object; error: string } }> = {
  prompt: {
    valid: [
      { id: "req-1", type: "prompt", message: "Hello, world!" },
      {
        type: "prompt",
        message: "What's in this image?",
        images: [{ type: "image", data: "base64-encoded-data", mimeType: "image/png" }],
      },
      { type: "prompt", message: "New instruction", streamingBehavior: "steer" },
    ],
    invalid: {
      value: { type: "prompt" },
      error: 'Invalid prompt command: "message" is required (a string)',
    },
  },
  steer: {
    valid: [
      { type: "steer", message: "Stop and do this instead" },
      {
        type: "steer",
        message: "Look at this instead",
        images: [{ type: "image", data: "base64-encoded-data", mimeType: "image/png" }],
      },
    ],
    invalid: { value: { type: "steer", message: 7 }, error: 'Invalid steer command: "message" must be a string (got 7)' },
  },
  follow_up: {
    valid: [
      { type: "follow_up", message: "After you're done, also do this" },
      {
        type: "follow_up",
        message: "Also check this image",
        images: [{ type: "image", data: "base64-encoded-data", mimeType: "image/png" }],
      },
    ],
    invalid: {
      value: { type: "follow_up", message: "x", images: [{ type: "image", data: "AAAA" }] },
      error: 'Invalid follow_up command: "images[0].mimeType" is required (a string)',
    },
  },
  abort: {
    valid: [{ type: "abort" }],
    invalid: { value: { type: "abort", id: true }, error: 'Invalid abort command: "id" must be a string or a number (got true)' },
  },
  clear_queue: {
    valid: [{ type: "clear_queue" }],
    invalid: {
      value: { type: "clear_queue", id: null },
      error: 'Invalid clear_queue command: "id" must be a string or a number (got null)',
    },
  },
  new_session: {
    valid: [{ type: "new_session" }, { type: "new_session", parentSession: "/path/to/parent-session.jsonl" }],
    invalid: {
      value: { type: "new_session", parentSession: false },
      error: 'Invalid new_session command: "parentSession" must be a string (got false)',
    },
  },
  get_state: {
    valid: [{ type: "get_state" }],
    invalid: { value: { type: "get_state", id: [] }, error: 'Invalid get_state command: "id" must be a string or a number (got an array)' },
  },
  get_messages: {
    valid: [{ type: "get_messages" }],
    invalid: {
      value: { type: "get_messages", id: {} },
      error: 'Invalid get_messages command: "id" must be a string or a number (got an object)',
    },
  },
  set_model: {
    valid: [{ type: "set_model", provider: "anthropic", modelId: "claude-sonnet-4-20250514" }],
    invalid: {
      value: { type: "set_model", provider: "anthropic" },
      error: 'Invalid set_model command: "modelId" is required (a string)',
    },
  },
  cycle_model: {
    valid: [{ type: "cycle_model" }],
    invalid: { value: { type: "cycle_model", id: false }, error: 'Invalid cycle_model command: "id" must be a string or a number (got false)' },
  },
  get_available_models: {
    valid: [{ type: "get_available_models" }],
    invalid: {
      value: { type: "get_available_models", id: [1] },
      error: 'Invalid get_available_models command: "id" must be a string or a number (got an array)',
    },
  },
  set_thinking_level: {
    valid: [
      { type: "set_thinking_level", level: "high" },
      { type: "set_thinking_level", level: "off" },
      { type: "set_thinking_level", level: "max" },
    ],
    invalid: {
      value: { type: "set_thinking_level", level: 42 },
      error: 'Invalid set_thinking_level command: "level" must be one of "off", "minimal", "low", "medium", "high", "xhigh", "max" (got 42)',
    },
  },
  cycle_thinking_level: {
    valid: [{ type: "cycle_thinking_level" }],
    invalid: {
      value: { type: "cycle_thinking_level", id: true },
      error: 'Invalid cycle_thinking_level command: "id" must be a string or a number (got true)',
    },
  },
  get_available_thinking_levels: {
    valid: [{ type: "get_available_thinking_levels" }],
    invalid: {
      value: { type: "get_available_thinking_levels", id: null },
      error: 'Invalid get_available_thinking_levels command: "id" must be a string or a number (got null)',
    },
  },
  set_steering_mode: {
    valid: [
      { type: "set_steering_mode", mode: "one-at-a-time" },
      { type: "set_steering_mode", mode: "all" },
    ],
    invalid: {
      value: { type: "set_steering_mode", mode: "some" },
      error: 'Invalid set_steering_mode command: "mode" must be one of "all", "one-at-a-time" (got "some")',
    },
  },
  set_follow_up_mode: {
    valid: [{ type: "set_follow_up_mode", mode: "one-at-a-time" }],
    invalid: {
      value: { type: "set_follow_up_mode" },
      error: 'Invalid set_follow_up_mode command: "mode" is required (one of "all", "one-at-a-time")',
    },
  },
  compact: {
    valid: [{ type: "compact" }, { type: "compact", customInstructions: "Focus on code changes" }],
    invalid: {
      value: { type: "compact", customInstructions: ["a"] },
      error: 'Invalid compact command: "customInstructions" must be a string (got an array)',
    },
  },
  set_auto_compaction: {
    valid: [{ type: "set_auto_compaction", enabled: true }],
    invalid: {
      value: { type: "set_auto_compaction", enabled: "yes" },
      error: 'Invalid set_auto_compaction command: "enabled" must be a boolean (got "yes")',
    },
  },
  set_auto_retry: {
    valid: [{ type: "set_auto_retry", enabled: true }],
    invalid: {
      value: { type: "set_auto_retry" },
      error: 'Invalid set_auto_retry command: "enabled" is required (a boolean)',
    },
  },
  abort_retry: {
    valid: [{ type: "abort_retry" }],
    invalid: { value: { type: "abort_retry", id: {} }, error: 'Invalid abort_retry command: "id" must be a string or a number (got an object)' },
  },
  bash: {
    valid: [
      { type: "bash", command: "ls -la" },
      { id: "req-1", type: "bash", command: "ls -la", excludeFromContext: true },
    ],
    invalid: { value: { type: "bash", command: null }, error: 'Invalid bash command: "command" must be a string (got null)' },
  },
  abort_bash: {
    valid: [{ type: "abort_bash" }],
    invalid: { value: { type: "abort_bash", id: false }, error: 'Invalid abort_bash command: "id" must be a string or a number (got false)' },
  },
  get_session_stats: {
    valid: [{ type: "get_session_stats" }],
    invalid: {
      value: { type: "get_session_stats", id: null },
      error: 'Invalid get_session_stats command: "id" must be a string or a number (got null)',
    },
  },
  export_html: {
    valid: [{ type: "export_html" }, { type: "export_html", outputPath: "/tmp/session.html" }],
    invalid: {
      value: { type: "export_html", outputPath: 1 },
      error: 'Invalid export_html command: "outputPath" must be a string (got 1)',
    },
  },
  switch_session: {
    valid: [{ type: "switch_session", sessionPath: "/path/to/session.jsonl" }],
    invalid: {
      value: { type: "switch_session" },
      error: 'Invalid switch_session command: "sessionPath" is required (a string)',
    },
  },
  fork: {
    valid: [{ type: "fork", entryId: "abc123" }],
    invalid: { value: { type: "fork", entryId: 123 }, error: 'Invalid fork command: "entryId" must be a string (got 123)' },
  },
  clone: {
    valid: [{ type: "clone" }],
    invalid: { value: { type: "clone", id: true }, error: 'Invalid clone command: "id" must be a string or a number (got true)' },
  },
  get_fork_messages: {
    valid: [{ type: "get_fork_messages" }],
    invalid: {
      value: { type: "get_fork_messages", id: [] },
      error: 'Invalid get_fork_messages command: "id" must be a string or a number (got an array)',
    },
  },
  get_entries: {
    valid: [{ type: "get_entries" }, { type: "get_entries", since: "abc123" }],
    invalid: { value: { type: "get_entries", since: 5 }, error: 'Invalid get_entries command: "since" must be a string (got 5)' },
  },
  get_tree: {
    valid: [{ type: "get_tree" }],
    invalid: { value: { type: "get_tree", id: {} }, error: 'Invalid get_tree command: "id" must be a string or a number (got an object)' },
  },
  get_last_assistant_text: {
    valid: [{ type: "get_last_assistant_text" }],
    invalid: {
      value: { type: "get_last_assistant_text", id: null },
      error: 'Invalid get_last_assistant_text command: "id" must be a string or a number (got null)',
    },
  },
  set_session_name: {
    valid: [{ type: "set_session_name", name: "my-feature-work" }],
    invalid: { value: { type: "set_session_name" }, error: 'Invalid set_session_name command: "name" is required (a string)' },
  },
  get_commands: {
    valid: [{ type: "get_commands" }],
    invalid: { value: { type: "get_commands", id: true }, error: 'Invalid get_commands command: "id" must be a string or a number (got true)' },
  },
  get_ui_state: {
    valid: [{ type: "get_ui_state" }, { id: "ui-1", type: "get_ui_state" }],
    invalid: { value: { type: "get_ui_state", id: false }, error: 'Invalid get_ui_state command: "id" must be a string or a number (got false)' },
  },
  list_sessions: {
    valid: [{ type: "list_sessions" }, { type: "list_sessions", scope: "folder" }, { type: "list_sessions", scope: "all" }],
    invalid: { value: { type: "list_sessions", scope: "mine" }, error: 'Invalid list_sessions command: "scope" must be one of "folder", "all" (got "mine")' },
  },
  reload: {
    valid: [{ type: "reload" }],
    invalid: { value: { type: "reload", id: [] }, error: 'Invalid reload command: "id" must be a string or a number (got an array)' },
  },
  refresh_models: {
    valid: [{ type: "refresh_models", id: 3 }],
    invalid: { value: { type: "refresh_models", id: {} }, error: 'Invalid refresh_models command: "id" must be a string or a number (got an object)' },
  },
  list_files: {
    valid: [{ type: "list_files" }, { type: "list_files", query: "ma", limit: 500 }],
    invalid: { value: { type: "list_files", limit: 501 }, error: 'Invalid list_files command: "limit" must be <= 500 (got 501)' },
  },
};

function expectFailure(result: CommandCheck): Extract<CommandCheck, { ok: false }> {
  if (result.ok) throw new Error(`expected a failure, got ok for ${JSON.stringify(result.command)}`);
  return result;
}

describe("checkCommand: every command type", () => {
  it("has a case for each command schema", () => {
    expect(Object.keys(CASES).sort()).toEqual(Object.keys(COMMAND_SCHEMAS).sort());
  });

  for (const [type, { valid, invalid }] of Object.entries(CASES)) {
    it(`accepts valid ${type} commands`, () => {
      for (const value of valid) {
        const result = checkCommand(JSON.parse(JSON.stringify(value)));
        expect(result, JSON.stringify(value)).toEqual({ ok: true, command: value });
      }
    });

    it(`names the wrong field of an invalid ${type} command`, () => {
      const result = expectFailure(checkCommand(JSON.parse(JSON.stringify(invalid.value))));
      expect(result.command).toBe(type);
      expect(result.error).toBe(invalid.error);
    });
  }
});

describe("checkCommand: ids", () => {
  it("accepts and keeps a numeric id", () => {
    expect(checkCommand({ id: 7, type: "get_state" })).toEqual({ ok: true, command: { id: 7, type: "get_state" } });
  });

  it("echoes a string or numeric id on field errors", () => {
    expect(checkCommand({ id: "a", type: "fork" })).toEqual({
      ok: false,
      id: "a",
      command: "fork",
      error: 'Invalid fork command: "entryId" is required (a string)',
    });
    expect(expectFailure(checkCommand({ id: 0, type: "fork" })).id).toBe(0);
  });

  it("does not echo an id that is itself invalid", () => {
    const result = expectFailure(checkCommand({ id: { nested: 1 }, type: "get_state" }));
    expect(result).not.toHaveProperty("id");
    expect(result.error).toContain('"id"');
  });

  it("accepts unknown extra fields", () => {
    expect(checkCommand({ type: "abort", future: { x: 1 } }).ok).toBe(true);
  });
});

describe("checkCommand: not a command object", () => {
  it.each([
    [null, "null"],
    [[], "an array"],
    [[{ type: "get_state" }], "an array"],
    [42, "a number"],
    ["get_state", "a string"],
    [true, "a boolean"],
  ])("rejects %j as a parse error", (value, name) => {
    expect(checkCommand(value)).toEqual({
      ok: false,
      command: "parse",
      error: `Expected a JSON object with a "type" field, got ${name}`,
    });
  });

  it("rejects a missing type, echoing the id", () => {
    const result = expectFailure(checkCommand({ id: "x1", message: "hi" }));
    expect(result.command).toBe("parse");
    expect(result.id).toBe("x1");
    expect(result.error).toMatch(/"type" is required/);
  });

  it("rejects a non-string type, echoing a numeric id", () => {
    const result = expectFailure(checkCommand({ id: 3, type: 12 }));
    expect(result).toEqual({
      ok: false,
      id: 3,
      command: "parse",
      error: 'Invalid command: "type" must be a string naming the command (got 12)',
    });
  });

  it("rejects an unknown type with the exact pi wording and the id", () => {
    expect(checkCommand({ id: "u1", type: "make_coffee" })).toEqual({
      ok: false,
      id: "u1",
      command: "make_coffee",
      error: "Unknown command: make_coffee",
    });
    expect(checkCommand({ id: 9, type: "nope" })).toEqual({
      ok: false,
      id: 9,
      command: "nope",
      error: "Unknown command: nope",
    });
  });
});

describe("checkCommand: hostile input", () => {
  it.each(["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"])("treats type %j as an unknown command", (type) => {
    const value = JSON.parse(`{"id":"p","type":${JSON.stringify(type)}}`);
    expect(checkCommand(value)).toEqual({ ok: false, id: "p", command: type, error: `Unknown command: ${type}` });
  });

  it("ignores a __proto__ key that tries to supply the type", () => {
    const value = JSON.parse('{"__proto__":{"type":"get_state"}}');
    const result = expectFailure(checkCommand(value));
    expect(result.command).toBe("parse");
    expect(result.error).toMatch(/"type" is required/);
  });

  it("does not read required fields through a __proto__ key", () => {
    const value = JSON.parse('{"type":"fork","__proto__":{"entryId":"abc"}}');
    const result = expectFailure(checkCommand(value));
    expect(result.error).toBe('Invalid fork command: "entryId" is required (a string)');
    expect(({} as Record<string, unknown>)["entryId"]).toBeUndefined();
  });

  it("accepts __proto__ and constructor as extra fields of a valid command", () => {
    const value = JSON.parse('{"type":"get_state","__proto__":{"polluted":true},"constructor":{"prototype":{}}}');
    expect(checkCommand(value).ok).toBe(true);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });

  it("reports a wrong field inside a __proto__-keyed image without crashing", () => {
    const value = JSON.parse('{"type":"prompt","message":"m","images":[{"__proto__":{"type":"image"}}]}');
    const result = expectFailure(checkCommand(value));
    expect(result.error).toBe('Invalid prompt command: "images[0].type" is required ("image")');
  });

  const deep = (depth: number): string => "[".repeat(depth) + "]".repeat(depth);
  const deepObject = (depth: number): string => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);

  it("handles 200-deep nesting in an unknown extra field", () => {
    const value = JSON.parse(`{"type":"get_state","extra":${deep(200)}}`);
    expect(checkCommand(value).ok).toBe(true);
  });

  it("handles 200-deep nesting in a checked field", () => {
    const arrays = expectFailure(checkCommand(JSON.parse(`{"type":"prompt","message":${deep(200)}}`)));
    expect(arrays.error).toBe('Invalid prompt command: "message" must be a string (got an array)');
    const objects = expectFailure(checkCommand(JSON.parse(`{"type":"prompt","message":"m","images":[${deepObject(200)}]}`)));
    expect(objects.error).toMatch(/^Invalid prompt command: "images\[0\]\.\w+" is required/);
    const inImages = expectFailure(checkCommand(JSON.parse(`{"type":"prompt","message":"m","images":${deep(200)}}`)));
    expect(inImages.error).toBe('Invalid prompt command: "images[0]" must be an object (got an array)');
  });

  it("handles a 200-deep top-level id", () => {
    const result = expectFailure(checkCommand(JSON.parse(`{"type":"abort","id":${deepObject(200)}}`)));
    expect(result.error).toBe('Invalid abort command: "id" must be a string or a number (got an object)');
  });

  it("shortens long strings in error text", () => {
    const result = expectFailure(checkCommand({ type: "set_thinking_level", level: "x".repeat(1000) }));
    expect(result.error.length).toBeLessThan(200);
  });
});
