/**
 * The README, ARCHITECTURE.md, docs/ and the packages' READMEs as a reader follows them: every relative link reaches a file (and a
 * heading, for `#anchor`), every page of docs/ is reachable from the README, and a code block
 * introduced as taken from a file ("From [`examples/x.ts`](…):") shows that file's code as it is, so
 * the example a reader copies is the one `npm test` type-checks (examples/tsconfig.json).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import GithubSlugger from "github-slugger";
import { marked, type Token, type Tokens } from "marked";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const docsDir = join(root, "docs");
const docPages = readdirSync(docsDir)
  .filter((name) => name.endsWith(".md"))
  .map((name) => join(docsDir, name));
const packageReadmes = readdirSync(join(root, "packages"))
  .map((name) => join(root, "packages", name, "README.md"))
  .filter((file) => existsSync(file));
const checked = [join(root, "README.md"), join(root, "ARCHITECTURE.md"), ...docPages, ...packageReadmes];

function tokensOf(file: string): Token[] {
  return marked.lexer(readFileSync(file, "utf8"));
}

/** A heading's text as GitHub renders it (code spans and emphasis without their marks). */
function plainText(tokens: readonly Token[]): string {
  return tokens.map((token) => ("tokens" in token && token.tokens ? plainText(token.tokens) : "text" in token ? token.text : "")).join("");
}

/** The anchors GitHub gives a file's headings (repeated names get -1, -2, …). */
function anchorsOf(file: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  marked.walkTokens(tokensOf(file), (token) => {
    if (token.type === "heading") anchors.add(slugger.slug(plainText((token as Tokens.Heading).tokens)));
  });
  return anchors;
}

/** Links and images of a file, outside code. */
function linksOf(file: string): string[] {
  const hrefs: string[] = [];
  marked.walkTokens(tokensOf(file), (token) => {
    if (token.type === "link" || token.type === "image") hrefs.push((token as Tokens.Link | Tokens.Image).href);
  });
  return hrefs;
}

const isExternal = (href: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(href);

describe("README.md, ARCHITECTURE.md, docs/ and the packages' READMEs", () => {
  it.each(checked.map((file) => [relative(root, file), file]))("%s: every relative link resolves", (_name, file) => {
    const broken: string[] = [];
    for (const href of linksOf(file)) {
      if (isExternal(href)) continue;
      const [path = "", anchor] = href.split("#", 2);
      const target = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
      if (!target.startsWith(root) || !existsSync(target)) {
        broken.push(`${href}: no such file`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!target.endsWith(".md") || statSync(target).isDirectory()) broken.push(`${href}: an anchor into a file that is not markdown`);
      else if (!anchorsOf(target).has(anchor)) broken.push(`${href}: no heading with that anchor in ${relative(root, target)}`);
    }
    expect(broken).toEqual([]);
  });

  it("every page of docs/ is linked from the README", () => {
    const linked = new Set(
      linksOf(join(root, "README.md"))
        .filter((href) => !isExternal(href))
        .map((href) => resolve(root, href.split("#")[0] ?? "")),
    );
    expect(docPages.filter((page) => !linked.has(page)).map((page) => relative(root, page))).toEqual([]);
  });

  it("a code block that names its source file shows that file's code", () => {
    let blocks = 0;
    for (const file of checked) {
      const tokens = tokensOf(file);
      tokens.forEach((token, index) => {
        if (token.type !== "code") return;
        const before = tokens.slice(0, index).findLast((previous) => previous.type !== "space");
        // "From [`examples/x.ts`](…)…:" introduces a block taken from that file.
        const source = before?.type === "paragraph" ? /\bFrom \[[^\]]*\]\(((?:\.\.\/)?examples\/[^)]+\.ts)\)/.exec(before.raw)?.[1] : undefined;
        if (source === undefined) return;
        blocks++;
        const code = (token as Tokens.Code).text;
        expect(readFileSync(resolve(dirname(file), source), "utf8"), `${relative(root, file)}: the block after the link to ${source}`).toContain(code);
      });
    }
    // The README's and docs/sdk.md's embedding examples at least: a rule that checks nothing would pass.
    expect(blocks).toBeGreaterThanOrEqual(2);
  });
});
