/**
 * Building DOM from data. Every string becomes a text node: nothing here parses HTML, so text
 * from extensions and models renders inertly whatever it contains.
 */
export type Child = Node | string | null | undefined | false;

export interface Props {
  class?: string;
  /** Attributes set with setAttribute (values are text, never markup). */
  attrs?: Record<string, string>;
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Props | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (props?.class) element.className = props.class;
  if (props?.attrs) for (const [name, value] of Object.entries(props.attrs)) element.setAttribute(name, value);
  append(element, children);
  return element;
}

export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
}

let ids = 0;
/** A fresh element id (for aria-labelledby and the like). */
export function uid(prefix: string): string {
  return `${prefix}-${++ids}`;
}

/** The element with this id, which the page itself created. */
export function byId<T extends HTMLElement>(id: string, type: { new (): T }): T {
  const element = document.getElementById(id);
  if (!(element instanceof type)) throw new Error(`#${id} is missing`);
  return element;
}

/**
 * A button that copies some text to the clipboard and says so for a moment ("Copied"). Its name
 * stays `label` for assistive technology; the outcome is announced through its live text.
 */
export function copyButton(text: () => string, label: string): HTMLButtonElement {
  const button = h("button", { class: "small copy", attrs: { type: "button", "aria-label": label } }, label);
  button.addEventListener("click", () => {
    void copyText(text()).then((ok) => {
      button.textContent = ok ? "Copied" : "Copy failed";
      window.setTimeout(() => (button.textContent = label), 1500);
    });
  });
  return button;
}

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No clipboard API (an insecure origin) or no permission: the selection way.
    const area = h("textarea", { class: "offscreen", attrs: { "aria-hidden": "true", tabindex: "-1" } });
    area.value = text;
    document.body.append(area);
    area.select();
    const ok = document.execCommand("copy");
    area.remove();
    return ok;
  }
}
