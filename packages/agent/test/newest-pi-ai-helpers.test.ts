/**
 * The newest pi-ai's helpers that parley implements for extensions (extensions/compat/
 * pi-ai-transcript.ts, pi-ai-utils.ts, pi-ai-additions.ts), compared with pi-ai 1.6.0's own on
 * generated inputs: the same answers.
 */
import * as newestHeaders from "@earendil-works/pi-ai/utils/headers";
import * as newestJson from "@earendil-works/pi-ai/utils/json-parse";
import * as newestSanitize from "@earendil-works/pi-ai/utils/sanitize-unicode";
import * as newestText from "@earendil-works/pi-ai/utils/text";
import * as newestTranscript from "@earendil-works/pi-ai/utils/transcript";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseToolCallArguments, uuidv7 } from "../src/extensions/compat/pi-ai-additions.js";
import * as transcript from "../src/extensions/compat/pi-ai-transcript.js";
import * as utils from "../src/extensions/compat/pi-ai-utils.js";

const name = fc.constantFrom("read", "ls", "grep", "edit");
const tool = fc.record({
  name,
  description: fc.constantFrom("one", "two"),
  parameters: fc.constantFrom({ type: "object", properties: {} }, { type: "object", properties: { path: { type: "string" } } }),
});
const text = fc.constantFrom("", "Base.", "More.", "x\ny");
const content = fc.oneof(
  text,
  fc.array(fc.oneof(fc.record({ type: fc.constant("text"), text }), fc.constant({ type: "image", data: "", mimeType: "image/png" })), { maxLength: 3 }),
);
const system = fc.record(
  {
    role: fc.constant("system" as const),
    content,
    sections: fc.dictionary(fc.constantFrom("rules", "env", "tone"), fc.option(text, { nil: null }), { maxKeys: 3 }),
    toolsAdded: fc.array(tool, { maxLength: 3 }),
    toolsRemoved: fc.array(fc.record({ name }), { maxLength: 2 }),
    timestamp: fc.nat(100),
  },
  { requiredKeys: ["role", "content", "timestamp"] },
);
const other = fc.record({ role: fc.constantFrom("user", "assistant", "custom"), content: text, timestamp: fc.nat(100) });
const messages = fc.array(fc.oneof(system, other), { maxLength: 8 });
// pi-ai 1.6.0's signatures take its own message types; both sides read only these fields.
type Loose = Parameters<typeof newestTranscript.getCurrentTools>[0];
const loose = (m: unknown[]): Loose => m as unknown as Loose;

describe("the transcript helpers", () => {
  it("answer as pi-ai 1.6.0's on generated transcripts", () => {
    fc.assert(
      fc.property(messages, fc.constantFrom("none", "additions", "changes") as fc.Arbitrary<"none" | "additions" | "changes">, (m, support) => {
        expect(transcript.getCurrentTools(m)).toEqual(newestTranscript.getCurrentTools(loose(m)));
        expect(transcript.getCurrentSystemMessage(m)).toEqual(newestTranscript.getCurrentSystemMessage(loose(m)));
        expect(transcript.getCurrentSystemPrompt(m)).toEqual(newestTranscript.getCurrentSystemPrompt(loose(m)));
        expect(transcript.collapseSystemMessages({ messages: m })).toEqual(newestTranscript.collapseSystemMessages({ messages: loose(m) } as never));
        expect(transcript.getDeclaredTools(m)).toEqual(newestTranscript.getDeclaredTools(loose(m)));
        expect(transcript.hasToolRedefinitions(m)).toBe(newestTranscript.hasToolRedefinitions(loose(m)));
        expect(transcript.hasNonAdditiveToolChanges(m)).toBe(newestTranscript.hasNonAdditiveToolChanges(loose(m)));
        expect(transcript.resolveTranscriptTools(m, support)).toEqual(newestTranscript.resolveTranscriptTools(loose(m), support));
        expect(transcript.getInitialSystemMessage(m)).toEqual(newestTranscript.getInitialSystemMessage(loose(m)));
        for (const message of m.filter((x) => x.role === "system")) {
          const s = message as transcript.SystemMessageLike;
          expect(transcript.getSystemMessageText(s)).toBe(newestText.getSystemMessageText(s as never));
          expect(transcript.renderSystemMessageUpdate(s)).toBe(newestText.renderSystemMessageUpdate(s as never));
          expect(transcript.contentText(s.content, " | ")).toBe(newestText.contentText(s.content as never, " | "));
        }
      }),
      { numRuns: 500 },
    );
  });

  it("tool state changes, declarations and the leading system message answer as pi-ai 1.6.0's", () => {
    fc.assert(
      fc.property(fc.array(tool, { maxLength: 4 }), fc.array(tool, { maxLength: 4 }), fc.option(text, { nil: undefined }), (before, after, prompt) => {
        expect(transcript.getToolStateChanges(before, after)).toEqual(newestTranscript.getToolStateChanges(before as never, after as never));
        expect(transcript.createInitialSystemMessage(prompt, after)).toEqual(newestTranscript.createInitialSystemMessage(prompt, after as never));
        expect(transcript.normalizeContext({ systemPrompt: prompt, tools: after, messages: [] })).toEqual(
          newestTranscript.normalizeContext({ systemPrompt: prompt, tools: after as never, messages: [] }),
        );
      }),
    );
  });
});

describe("the small helpers", () => {
  it("sanitizeSurrogates, providerHeadersToRecord and parseToolCallArguments answer as pi-ai 1.6.0's", () => {
    const headers = fc.dictionary(fc.constantFrom("X-A", "x-a", "Auth", "auth"), fc.option(fc.constantFrom("1", "2"), { nil: null }), { maxKeys: 3 });
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.array(fc.option(headers, { nil: undefined }), { maxLength: 3 }), fc.json(), (s, sources, json) => {
        expect(utils.sanitizeSurrogates(s)).toBe(newestSanitize.sanitizeSurrogates(s));
        expect(utils.providerHeadersToRecord(...sources)).toEqual(newestHeaders.providerHeadersToRecord(...sources));
        // The same arguments, and an error exactly when pi-ai reports one (its words differ).
        const mine = parseToolCallArguments(json);
        const theirs = newestJson.parseToolCallArguments(json);
        expect(mine.arguments).toEqual(theirs.arguments);
        expect(mine.argumentsError === undefined).toBe(theirs.argumentsError === undefined);
      }),
    );
  });

  it("uuidv7 makes version-7 ids in creation order, a given timestamp leading", () => {
    const ids = Array.from({ length: 2000 }, () => uuidv7());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(uuidv7(0).startsWith("00000000-0000-7")).toBe(true);
    expect(() => uuidv7(-1)).toThrow(RangeError);
  });
});

describe("ToolCallArgumentsStream and StreamingJsonParser", () => {
  it("show the arguments read so far, and read a large text in many pieces in linear time", async () => {
    const { makeStreamingClasses } = await import("../src/extensions/compat/pi-ai-additions.js");
    const ai = await import("@mariozechner/pi-ai");
    const { ToolCallArgumentsStream, StreamingJsonParser } = makeStreamingClasses(() => ai);
    const small = new ToolCallArgumentsStream();
    expect([small.append('{"a": [1, '), small.append('2], "b": "x'), small.replace('{"a": [1, 2], "b": "xyz"}').delta]).toEqual([
      { a: [1] },
      { a: [1, 2], b: "x" },
      'yz"}',
    ]);
    expect(small.finish()).toEqual({ arguments: { a: [1, 2], b: "xyz" } });
    expect(small.replace('{"c": 1}')).toEqual({ delta: undefined, arguments: { c: 1 } });
    // ~2 MB in 20-character pieces: reparsing at every piece would take minutes.
    const content = "x".repeat(2_000_000);
    const text = JSON.stringify({ path: "big.txt", content });
    const big = new ToolCallArgumentsStream();
    const parser = new StreamingJsonParser();
    let changes = 0;
    for (let i = 0; i < text.length; i += 20) {
      big.append(text.slice(i, i + 20));
      changes += parser.append(text.slice(i, i + 20)).length;
    }
    expect(big.finish()).toEqual({ arguments: { path: "big.txt", content } });
    expect(parser.snapshot()).toEqual({ path: "big.txt", content });
    expect(changes).toBeGreaterThan(1);
  }, 120_000);
});
