/**
 * YAML frontmatter for skills/prompt files, as pi's parseFrontmatter exposes it.
 * parley has no YAML dependency, so this reads the subset frontmatter uses:
 * nested maps, "- item" lists, flow lists [a, b], quoted/plain scalars,
 * numbers, booleans, null and | / > block scalars. Anything else throws.
 */

export interface ParsedFrontmatter<T extends Record<string, unknown>> {
  frontmatter: T;
  body: string;
}

interface Line {
  indent: number;
  text: string;
  no: number;
}

function splitFrontmatter(content: string): { yaml: string; body: string } | undefined {
  const normalized = content.replace(/\r\n/g, "\n");
  if (!normalized.startsWith("---\n")) return undefined;
  const end = normalized.indexOf("\n---", 3);
  if (end === -1) return undefined;
  const afterMarker = normalized.indexOf("\n", end + 4);
  const closing = normalized.slice(end + 4, afterMarker === -1 ? undefined : afterMarker);
  if (closing.trim() !== "") return undefined;
  return {
    yaml: normalized.slice(4, end + 1),
    body: afterMarker === -1 ? "" : normalized.slice(afterMarker + 1),
  };
}

function stripComment(text: string): string {
  // " #" starts a comment outside quotes.
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
    } else if (ch === "#" && (i === 0 || text[i - 1] === " " || text[i - 1] === "\t")) {
      return text.slice(0, i).trimEnd();
    }
  }
  return text;
}

function splitFlow(inner: string, lineNo: number): string[] {
  const items: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let current = "";
  for (const ch of inner) {
    if (quote) {
      if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === "[" || ch === "{") depth++;
    else if (ch === "]" || ch === "}") depth--;
    if (ch === "," && depth === 0 && !quote) {
      items.push(current.trim());
      current = "";
    } else current += ch;
  }
  if (quote || depth !== 0) throw new Error(`Invalid frontmatter at line ${lineNo}: unbalanced flow collection`);
  if (current.trim() !== "") items.push(current.trim());
  return items;
}

function scalar(raw: string, lineNo: number): unknown {
  const text = raw.trim();
  if (text === "" || text === "~" || text === "null" || text === "Null" || text === "NULL") return null;
  if (text.startsWith('"')) {
    if (!text.endsWith('"') || text.length < 2) throw new Error(`Invalid frontmatter at line ${lineNo}: unterminated string`);
    return JSON.parse(text.replace(/\t/g, "\\t"));
  }
  if (text.startsWith("'")) {
    if (!text.endsWith("'") || text.length < 2) throw new Error(`Invalid frontmatter at line ${lineNo}: unterminated string`);
    return text.slice(1, -1).replace(/''/g, "'");
  }
  if (text.startsWith("[")) {
    if (!text.endsWith("]")) throw new Error(`Invalid frontmatter at line ${lineNo}: flow sequence must end with ]`);
    return splitFlow(text.slice(1, -1), lineNo).map((item) => scalar(item, lineNo));
  }
  if (text.startsWith("{")) {
    if (!text.endsWith("}")) throw new Error(`Invalid frontmatter at line ${lineNo}: flow mapping must end with }`);
    const obj: Record<string, unknown> = {};
    for (const pair of splitFlow(text.slice(1, -1), lineNo)) {
      const colon = pair.indexOf(":");
      if (colon === -1) throw new Error(`Invalid frontmatter at line ${lineNo}: expected key: value`);
      obj[String(scalar(pair.slice(0, colon), lineNo))] = scalar(pair.slice(colon + 1), lineNo);
    }
    return obj;
  }
  if (/^(true|True|TRUE)$/.test(text)) return true;
  if (/^(false|False|FALSE)$/.test(text)) return false;
  if (/^[-+]?\d+$/.test(text)) return Number.parseInt(text, 10);
  if (/^[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?$/.test(text)) return Number.parseFloat(text);
  return text;
}

class Parser {
  private pos = 0;
  constructor(private readonly lines: Line[]) {}

  parseBlock(indent: number): unknown {
    const first = this.lines[this.pos];
    if (!first || first.indent < indent) return null;
    return first.text.startsWith("- ") || first.text === "-" ? this.parseList(first.indent) : this.parseMap(first.indent);
  }

  private parseList(indent: number): unknown[] {
    const items: unknown[] = [];
    for (let line = this.lines[this.pos]; line && line.indent === indent && (line.text.startsWith("- ") || line.text === "-"); line = this.lines[this.pos]) {
      const rest = line.text.slice(1).trim();
      this.pos++;
      if (rest === "") items.push(this.parseBlock(indent + 1));
      else if (/^[^"'[{][^:]*:(\s|$)/.test(rest)) {
        // "- key: value" starts a map item; its further keys are indented past the dash.
        this.lines.splice(this.pos, 0, { indent: indent + 2, text: rest, no: line.no });
        items.push(this.parseMap(indent + 2));
      } else items.push(scalar(rest, line.no));
    }
    return items;
  }

  private parseMap(indent: number): Record<string, unknown> {
    const obj: Record<string, unknown> = {};
    for (let line = this.lines[this.pos]; line && line.indent === indent; line = this.lines[this.pos]) {
      const match = /^("[^"]*"|'[^']*'|[^:]+?)\s*:(?:\s+(.*)|$)/.exec(line.text);
      if (!match) throw new Error(`Invalid frontmatter at line ${line.no}: expected "key: value"`);
      const key = String(scalar(match[1] as string, line.no));
      const value = (match[2] ?? "").trim();
      this.pos++;
      if (value === "|" || value === ">" || /^[|>][-+]?$/.test(value)) {
        obj[key] = this.blockScalar(indent, value);
      } else if (value === "") {
        const next = this.lines[this.pos];
        // A list may sit at the same indent as its key ("key:\n- a").
        const nested = next && (next.indent > indent || (next.indent === indent && next.text.startsWith("- ")));
        obj[key] = nested ? this.parseBlock(next.indent) : null;
      } else {
        obj[key] = scalar(value, line.no);
      }
    }
    const stray = this.lines[this.pos];
    if (stray && stray.indent > indent) throw new Error(`Invalid frontmatter at line ${stray.no}: unexpected indentation`);
    return obj;
  }

  private blockScalar(indent: number, style: string): string {
    const rows: string[] = [];
    let blockIndent: number | undefined;
    for (let line = this.lines[this.pos]; line && line.indent > indent; line = this.lines[this.pos]) {
      blockIndent ??= line.indent;
      rows.push(" ".repeat(Math.max(0, line.indent - blockIndent)) + line.text);
      this.pos++;
    }
    const text = style.startsWith("|") ? rows.join("\n") : rows.join(" ");
    return style.endsWith("-") ? text : `${text}\n`;
  }
}

function parseYaml(yaml: string): Record<string, unknown> {
  const lines: Line[] = [];
  yaml.split("\n").forEach((raw, i) => {
    const withoutComment = stripComment(raw);
    if (withoutComment.trim() === "") return;
    const indent = withoutComment.length - withoutComment.trimStart().length;
    lines.push({ indent, text: withoutComment.trim(), no: i + 1 });
  });
  if (lines.length === 0) return {};
  const parser = new Parser(lines);
  const result = parser.parseBlock(0);
  if (result === null || typeof result !== "object" || Array.isArray(result)) {
    throw new Error("Invalid frontmatter: expected a mapping of keys to values");
  }
  return result as Record<string, unknown>;
}

/** Split "---\nyaml\n---\nbody" into parsed frontmatter and the (trimmed) body. */
export const parseFrontmatter = <T extends Record<string, unknown> = Record<string, unknown>>(content: string): ParsedFrontmatter<T> => {
  const parts = splitFrontmatter(content);
  if (!parts) return { frontmatter: {} as T, body: content };
  return { frontmatter: parseYaml(parts.yaml) as T, body: parts.body.trim() };
};

/** The body without its frontmatter block. */
export const stripFrontmatter = (content: string): string => {
  const parts = splitFrontmatter(content);
  return parts ? parts.body.trim() : content;
};
