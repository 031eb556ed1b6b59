/**
 * The first prompt of a print or JSON run, as pi builds it: piped stdin (trimmed; nothing when
 * stdin is a terminal or empty), then the `@file` text, then the first message, joined with
 * nothing between them; the files' images go with it. The other messages follow as prompts of
 * their own.
 */
import type { ImageContent } from "@parley/protocol";

/** All of piped stdin as text, trimmed; undefined for a terminal or input that is only whitespace. */
export function readPipedInput(stream: NodeJS.ReadableStream & { isTTY?: boolean }): Promise<string | undefined> {
  if (stream.isTTY) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let data = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => (data += chunk));
    // A read error ends the input as EOF does: what was read is used.
    const end = (): void => resolve(data.trim() || undefined);
    stream.on("end", end);
    stream.on("error", end);
    stream.resume();
  });
}

export interface PromptPlan {
  /** The first prompt, with the files' images; absent when there is nothing to say. */
  initial?: { text: string; images?: ImageContent[] | undefined } | undefined;
  /** The prompts after it, one run each. */
  rest: string[];
}

export function planPrompts(input: {
  stdin?: string | undefined;
  fileText?: string | undefined;
  images?: ImageContent[] | undefined;
  messages: readonly string[];
}): PromptPlan {
  const [first, ...rest] = input.messages;
  const parts = [input.stdin, input.fileText || undefined, first].filter((part): part is string => part !== undefined);
  if (parts.length === 0) return { rest };
  const images = input.images !== undefined && input.images.length > 0 ? input.images : undefined;
  return { initial: { text: parts.join(""), ...(images ? { images } : {}) }, rest };
}
