/**
 * The session's tree, for a session with branches (get_tree): a collapsible "Session tree" in the
 * Sessions navigation, its messages nested as they branch, the current branch marked, and "Fork
 * from here" on each user message (a fork continues from any branch in a new session).
 */
import type { SessionTreeNode } from "@parley/protocol";
import { h } from "./dom.js";

const TEXT_CHARS = 80;

export class SessionTree {
  readonly element: HTMLDetailsElement;
  readonly #list: HTMLElement;

  constructor(fork: (entryId: string) => void) {
    this.#list = h("ul", { class: "tree" });
    this.element = h("details", { class: "session-tree" }, h("summary", null, "Session tree"), this.#list);
    this.element.hidden = true;
    this.#list.addEventListener("click", (event) => {
      const button = event.target instanceof Element ? event.target.closest("button[data-entry]") : null;
      const id = button?.getAttribute("data-entry");
      if (id) fork(id);
    });
  }

  update(roots: readonly SessionTreeNode[], leafId: string | null): void {
    const onBranch = new Set<string>();
    const mark = (node: SessionTreeNode): boolean => {
      const here = node.entry.id === leafId || node.children.some(mark);
      if (here) onBranch.add(node.entry.id);
      return here;
    };
    roots.forEach(mark);
    const branches = hasBranches(roots);
    this.element.hidden = !branches;
    if (!branches) {
      this.#list.replaceChildren();
      return;
    }
    this.#list.replaceChildren(...roots.flatMap((root) => render(root, onBranch)));
  }
}

function hasBranches(nodes: readonly SessionTreeNode[]): boolean {
  // Walked without recursion: a long session is a deep chain.
  const stack = [...nodes];
  if (nodes.length > 1) return true;
  for (let node = stack.pop(); node; node = stack.pop()) {
    if (node.children.length > 1) return true;
    stack.push(...node.children);
  }
  return false;
}

/** A node's list items: a message is an item (its children nested when they branch), other entries pass their children up. */
function render(start: SessionTreeNode, onBranch: ReadonlySet<string>): HTMLElement[] {
  const items: HTMLElement[] = [];
  let node: SessionTreeNode | undefined = start;
  // A chain is drawn flat; only a branching point nests.
  while (node) {
    const item = itemOf(node, onBranch);
    if (item) items.push(item);
    if (node.children.length === 1) node = node.children[0];
    else {
      if (node.children.length > 1) {
        const nested = node.children.map((child) => h("li", { class: "tree-branch" }, h("ul", { class: "tree" }, ...render(child, onBranch))));
        items.push(...nested);
      }
      node = undefined;
    }
  }
  return items;
}

function itemOf(node: SessionTreeNode, onBranch: ReadonlySet<string>): HTMLElement | undefined {
  const entry = node.entry;
  if (entry.type !== "message") return undefined;
  const message = entry.message;
  if (message.role !== "user" && message.role !== "assistant") return undefined;
  const text = short(textOf(message.content));
  const current = onBranch.has(entry.id);
  return h(
    "li",
    { class: `tree-item tree-${message.role}`, attrs: current ? { "aria-current": "true" } : {} },
    h("span", { class: "tree-text" }, `${message.role === "user" ? "You" : "Assistant"}: ${text}`),
    message.role === "user" ? h("button", { class: "small", attrs: { type: "button", "data-entry": entry.id } }, "Fork from here") : null,
  );
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b: { type?: unknown; text?: unknown }) => (b.type === "text" && typeof b.text === "string" ? b.text : "")).join(" ");
}

function short(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > TEXT_CHARS ? `${flat.slice(0, TEXT_CHARS - 1)}…` : flat;
}
