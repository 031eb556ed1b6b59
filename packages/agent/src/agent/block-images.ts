/**
 * settings.json `images.blockImages`, as pi applies it: on the way to the model, every image of a
 * user message or tool result becomes one short text (a run of them becomes one), so nothing of
 * an image leaves the machine. The session keeps the images; only the request goes without.
 */
import type { ImageContent, Message, TextContent } from "@earendil-works/pi-ai";

/** pi's words, so a model sees the same text from either agent. */
export const IMAGE_BLOCKED_TEXT = "Image reading is disabled.";

function withoutImages(content: (TextContent | ImageContent)[]): TextContent[] | (TextContent | ImageContent)[] {
  if (!content.some((c) => c.type === "image")) return content;
  const out: TextContent[] = [];
  for (const part of content) {
    const next: TextContent = part.type === "image" ? { type: "text", text: IMAGE_BLOCKED_TEXT } : part;
    const previous = out.at(-1);
    if (next.text === IMAGE_BLOCKED_TEXT && previous?.text === IMAGE_BLOCKED_TEXT) continue;
    out.push(next);
  }
  return out;
}

export function blockImages(messages: Message[]): Message[] {
  return messages.map((message) => {
    if (message.role === "user" && Array.isArray(message.content)) return { ...message, content: withoutImages(message.content) };
    if (message.role === "toolResult") return { ...message, content: withoutImages(message.content) };
    return message;
  });
}
