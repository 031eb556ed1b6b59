/** An ACP prompt's content blocks as the agent's prompt: text (references and embedded context in it) and images. */
import type { ContentBlock } from "@agentclientprotocol/sdk";
import type { ImageContent } from "@earendil-works/pi-ai";
import { fromFileUrl } from "../../resources/paths.js";

/**
 * A prompt's blocks as the agent's text and images; resources become references in the text. A
 * reference is its own word: a space separates it from text it would otherwise touch
 * ("explain" + link + "please" reads "explain @/p please", not "explain@/pplease").
 */
export function promptInput(blocks: ContentBlock[]): { text: string; images: ImageContent[] } {
  let text = "";
  let afterReference = false;
  const add = (part: string, reference: boolean): void => {
    if (part === "") return;
    const touching = text !== "" && !/\s$/.test(text) && !/^\s/.test(part);
    if (touching && (reference || afterReference)) text += " ";
    text += part;
    afterReference = reference;
  };
  const images: ImageContent[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        add(block.text, false);
        break;
      case "image":
        images.push({ type: "image", data: block.data, mimeType: block.mimeType });
        break;
      case "resource_link":
        add(`@${fileReference(block.uri)}`, true);
        break;
      case "resource": {
        const resource = block.resource;
        if ("text" in resource) add(`\n<context ref="${resource.uri}">\n${resource.text}\n</context>`, false);
        else add(`@${resource.uri}`, true);
        break;
      }
      default:
        break;
    }
  }
  return { text, images };
}

/**
 * A file URI as the path it names; one that names no local path (a bad %-escape, another host)
 * stays the URI it is, so a client's odd link is a reference, never an internal error.
 */
function fileReference(uri: string): string {
  return uri.startsWith("file:") ? (fromFileUrl(uri) ?? uri) : uri;
}
