/**
 * Markdown to DOM, safely: marked's lexer gives tokens, and this file builds elements from them.
 * No HTML string is ever parsed: raw HTML in the source shows as text, link targets other than
 * http(s) and mailto become plain text, and images are not loaded (their alt text shows).
 *
 * A streamed message re-lexes only its last block: finished blocks are rendered once and kept.
 */
import { Lexer, type Token, type Tokens } from "marked";
import { append, copyButton, h, type Child } from "./dom.js";
import { highlightInto } from "./highlight.js";
import { schedule, type FrameView } from "./frame.js";

const SAFE_PROTOCOLS = new Set(["http:", "https:", "mailto:"]);
/** Above this size a still-growing last block is shown as plain text until it ends. */
const PLAIN_TAIL_CHARS = 16 * 1024;

export function safeHref(href: string): string | undefined {
  try {
    const url = new URL(href, document.baseURI);
    return SAFE_PROTOCOLS.has(url.protocol) ? url.href : undefined;
  } catch {
    return undefined;
  }
}

export function lex(text: string): Token[] {
  return Lexer.lex(text, { gfm: true, breaks: false });
}

export function renderBlocks(tokens: readonly Token[]): Node[] {
  const nodes: Node[] = [];
  for (const token of tokens) {
    const node = renderBlock(token);
    if (node) nodes.push(node);
  }
  return nodes;
}

function renderBlock(token: Token): Node | undefined {
  switch (token.type) {
    case "space":
    case "def":
      return undefined;
    case "code": {
      const t = token as Tokens.Code;
      const code = h("code", t.lang ? { attrs: { "data-lang": t.lang } } : null);
      highlightInto(code, t.text, t.lang);
      return h(
        "div",
        { class: "code-block" },
        h("pre", null, code),
        copyButton(() => t.text, "Copy"),
      );
    }
    case "heading": {
      const t = token as Tokens.Heading;
      const level = Math.min(6, Math.max(1, t.depth));
      const tag = `h${level}` as "h1";
      return h(tag, null, ...renderInline(t.tokens));
    }
    case "hr":
      return h("hr");
    case "blockquote":
      return h("blockquote", null, ...renderBlocks((token as Tokens.Blockquote).tokens));
    case "list": {
      const t = token as Tokens.List;
      const list = t.ordered ? h("ol") : h("ul");
      if (t.ordered && typeof t.start === "number" && t.start !== 1) list.setAttribute("start", String(t.start));
      for (const item of t.items) {
        const li = h("li");
        if (item.task) {
          const box = h("input", { attrs: { type: "checkbox", disabled: "" } });
          box.checked = item.checked === true;
          li.append(box, " ");
        }
        append(li, renderBlocks(item.tokens.filter((child) => child.type !== "checkbox")));
        list.append(li);
      }
      return list;
    }
    case "paragraph":
      return h("p", null, ...renderInline((token as Tokens.Paragraph).tokens));
    case "text": {
      const t = token as Tokens.Text;
      return h("span", null, ...(t.tokens ? renderInline(t.tokens) : [t.text]));
    }
    case "html":
      return h("p", { class: "raw" }, (token as Tokens.HTML).raw);
    case "table": {
      const t = token as Tokens.Table;
      const head = h("tr", null, ...t.header.map((cell) => h("th", null, ...renderInline(cell.tokens))));
      const rows = t.rows.map((row) => h("tr", null, ...row.map((cell) => h("td", null, ...renderInline(cell.tokens)))));
      return h("table", null, h("thead", null, head), h("tbody", null, ...rows));
    }
    default:
      return h("p", null, token.raw);
  }
}

function renderInline(tokens: readonly Token[] | undefined): Child[] {
  if (!tokens) return [];
  return tokens.map(renderInlineToken);
}

function renderInlineToken(token: Token): Child {
  switch (token.type) {
    case "text": {
      const t = token as Tokens.Text;
      return t.tokens ? h("span", null, ...renderInline(t.tokens)) : decodeEntities(t.text);
    }
    case "escape":
      return (token as Tokens.Escape).text;
    case "strong":
      return h("strong", null, ...renderInline((token as Tokens.Strong).tokens));
    case "em":
      return h("em", null, ...renderInline((token as Tokens.Em).tokens));
    case "del":
      return h("del", null, ...renderInline((token as Tokens.Del).tokens));
    case "codespan":
      return h("code", null, (token as Tokens.Codespan).text);
    case "br":
      return h("br");
    case "link": {
      const t = token as Tokens.Link;
      const href = safeHref(t.href);
      const label = renderInline(t.tokens);
      if (!href) return h("span", { class: "unsafe-link" }, ...label);
      return h("a", { attrs: { href, rel: "noopener noreferrer nofollow", target: "_blank" } }, ...label);
    }
    case "image": {
      const t = token as Tokens.Image;
      return h("span", { class: "image-alt" }, `[image: ${t.text}]`);
    }
    default:
      return token.raw;
  }
}

/** The named character references models write; others stay as written (no HTML is parsed to decode them). */
const NAMED: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: "\u00a0",
  copy: "©",
  reg: "®",
  trade: "™",
  hellip: "…",
  mdash: "—",
  ndash: "–",
  lsquo: "‘",
  rsquo: "’",
  ldquo: "“",
  rdquo: "”",
  laquo: "«",
  raquo: "»",
  bull: "•",
  middot: "·",
  deg: "°",
  times: "×",
  divide: "÷",
  plusmn: "±",
  ne: "≠",
  le: "≤",
  ge: "≥",
  larr: "←",
  rarr: "→",
  uarr: "↑",
  darr: "↓",
  harr: "↔",
  euro: "€",
  pound: "£",
  yen: "¥",
  cent: "¢",
  sect: "§",
  para: "¶",
  check: "✓",
};

/** marked keeps character references as written; show them as the characters they name. */
function decodeEntities(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(
    /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z]+));/g,
    (match, dec: string | undefined, hex: string | undefined, name: string | undefined) => {
      if (name !== undefined) return NAMED[name] ?? match;
      const code = dec !== undefined ? Number.parseInt(dec, 10) : Number.parseInt(hex ?? "", 16);
      // As HTML does: 0, surrogates and values past Unicode become U+FFFD.
      return code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff) ? "\ufffd" : String.fromCodePoint(code);
    },
  );
}

/**
 * A block of markdown that grows by deltas. Blocks before the last are final once a later block
 * has begun: they are rendered once. Only the last block is lexed and rebuilt per frame.
 */
export class MarkdownView implements FrameView {
  readonly element: HTMLElement;
  readonly #stable: HTMLElement;
  readonly #tail: HTMLElement;
  #text = "";
  #stableEnd = 0;
  #final = false;
  /** A very long block still streaming shows as plain text, grown in place; markdown when it ends. */
  #plainTail: Text | undefined;
  #nextRenderAt = 0;

  constructor(className: string) {
    this.#stable = h("div", { class: "md-stable" });
    this.#tail = h("div", { class: "md-tail" });
    this.element = h("div", { class: `markdown ${className}` }, this.#stable, this.#tail);
  }

  get text(): string {
    return this.#text;
  }

  append(delta: string): void {
    this.#text += delta;
  }

  /** The whole text (a finished message): rendered from scratch at the next frame. */
  set(text: string, final: boolean): void {
    this.#text = text;
    this.#stableEnd = 0;
    this.#stable.replaceChildren();
    this.#final = final;
    this.#nextRenderAt = 0;
  }

  render(): void {
    // The last block is re-lexed as it grows: when that gets costly, do it less often (at most
    // about a ninth of the time), so a long block cannot eat the frames.
    const started = performance.now();
    if (!this.#final && started < this.#nextRenderAt) {
      schedule(this);
      return;
    }
    this.#renderNow();
    const cost = performance.now() - started;
    this.#nextRenderAt = cost > 2 ? performance.now() + cost * 8 : 0;
  }

  #renderNow(): void {
    const rest = this.#text.slice(this.#stableEnd);
    if (!this.#final && rest.length > PLAIN_TAIL_CHARS && !rest.includes("\n\n")) {
      this.#renderPlainTail(rest);
      return;
    }
    this.#plainTail = undefined;
    const tokens = lex(rest);
    const last = this.#final ? tokens.length : Math.max(0, tokens.length - 1);
    let keep = 0;
    let offset = 0;
    // A block is kept only where its source is exactly where the text says (it always is, short
    // of markdown marked rewrites, e.g. CR LF): the offset then stays true.
    while (keep < last && rest.startsWith((tokens[keep] as Token).raw, offset)) {
      const token = tokens[keep] as Token;
      const node = renderBlock(token);
      if (node) this.#stable.append(node);
      offset += token.raw.length;
      keep++;
    }
    this.#stableEnd += offset;
    this.#tail.replaceChildren(...renderBlocks(tokens.slice(keep)));
  }

  /** Re-lexing a huge block every frame would cost more each frame: append its new text instead. */
  #renderPlainTail(rest: string): void {
    if (!this.#plainTail || !rest.startsWith(this.#plainTail.data)) {
      this.#plainTail = document.createTextNode(rest);
      this.#tail.replaceChildren(h("p", { class: "streaming-plain" }, this.#plainTail));
      return;
    }
    this.#plainTail.appendData(rest.slice(this.#plainTail.data.length));
  }
}
