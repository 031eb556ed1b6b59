/**
 * Minimal glob → RegExp translation used by find, grep's `glob` filter and
 * .gitignore matching. Paths are "/"-separated and relative.
 *
 * Supported: `*`, `?`, `**` (any number of directories), `[...]`/`[!...]`
 * classes, `{a,b}` alternation and backslash escapes.
 */

const REGEX_SPECIAL = /[.+^$()|{}[\]\\]/;

function escapeChar(ch: string): string {
  return REGEX_SPECIAL.test(ch) ? `\\${ch}` : ch;
}

/** Translate the glob body (no anchors). */
function translate(glob: string): string {
  let out = "";
  let braceDepth = 0;
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i] as string;
    if (ch === "\\" && i + 1 < glob.length) {
      out += escapeChar(glob[++i] as string);
    } else if (ch === "*") {
      if (glob[i + 1] === "*") {
        const atSegmentStart = i === 0 || glob[i - 1] === "/";
        const j = i + 2;
        if (atSegmentStart && glob[j] === "/") {
          // "**/" — zero or more whole directories
          out += "(?:[^/]*/)*";
          i = j;
        } else if (atSegmentStart && j === glob.length) {
          // trailing "**" — everything below
          out += ".*";
          i = j - 1;
        } else {
          out += "[^/]*"; // "**" inside a segment behaves like "*"
          i++;
        }
      } else {
        out += "[^/]*";
      }
    } else if (ch === "?") {
      out += "[^/]";
    } else if (ch === "[") {
      const close = glob.indexOf("]", i + 2);
      if (close === -1) {
        out += "\\[";
      } else {
        let body = glob.slice(i + 1, close);
        if (body.startsWith("!")) body = `^${body.slice(1)}`;
        out += `[${body.replace(/\\/g, "\\\\")}]`;
        i = close;
      }
    } else if (ch === "{") {
      braceDepth++;
      out += "(?:";
    } else if (ch === "}" && braceDepth > 0) {
      braceDepth--;
      out += ")";
    } else if (ch === "," && braceDepth > 0) {
      out += "|";
    } else {
      out += escapeChar(ch);
    }
  }
  // Unbalanced "{": close the groups so the regex still compiles.
  out += ")".repeat(braceDepth);
  return out;
}

/** Full-match regex for a glob. */
export function globToRegExp(glob: string, options: { ignoreCase?: boolean } = {}): RegExp {
  return new RegExp(`^${translate(glob)}$`, options.ignoreCase ? "i" : "");
}

/**
 * Matcher for user-supplied search globs (find's pattern, grep's `glob`):
 * a pattern without "/" matches the file name at any depth; one with "/"
 * matches the relative path, anchored anywhere below the search root unless
 * it starts with "/".
 */
export function createPathMatcher(pattern: string): (relPath: string) => boolean {
  let p = pattern.replace(/\\/g, "/");
  if (p.startsWith("./")) p = p.slice(2);
  if (!p.includes("/") || (p.endsWith("/") && !p.slice(0, -1).includes("/"))) {
    const re = globToRegExp(p.replace(/\/$/, ""));
    return (rel) => re.test(rel.slice(rel.lastIndexOf("/") + 1));
  }
  p = p.replace(/\/$/, "");
  const re = p.startsWith("/") ? globToRegExp(p.slice(1)) : globToRegExp(p.startsWith("**/") ? p : `**/${p}`);
  return (rel) => re.test(rel);
}
