/**
 * Code highlighting with highlight.js's grammars through lowlight, which answers a syntax tree
 * rather than an HTML string: the tree becomes DOM here (spans and text nodes only), so code from
 * a model is never parsed as HTML. A few common languages keep the page small.
 */
import { createLowlight } from "lowlight";
import bash from "highlight.js/lib/languages/bash";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

const lowlight = createLowlight({ bash, diff, go, javascript, json, python, rust, typescript, xml, yaml });

type HastNode = ReturnType<typeof lowlight.highlight>["children"][number];

/** Fills `code` with `text`, highlighted when `lang` is a known language (else plain). */
export function highlightInto(code: HTMLElement, text: string, lang: string | undefined): void {
  const language = lang?.trim().split(/\s/)[0]?.toLowerCase();
  if (!language || !lowlight.registered(language)) {
    code.textContent = text;
    return;
  }
  code.classList.add("hljs");
  for (const node of lowlight.highlight(language, text).children) code.append(toDom(node));
}

function toDom(node: HastNode): Node {
  if (node.type === "text") return document.createTextNode(node.value);
  if (node.type !== "element") return document.createTextNode("");
  const span = document.createElement("span");
  const classes = node.properties["className"];
  if (Array.isArray(classes)) span.className = classes.filter((c): c is string => typeof c === "string" && /^hljs-[\w-]+$|^[\w-]+_$/.test(c)).join(" ");
  for (const child of node.children) span.append(toDom(child));
  return span;
}
