/**
 * An MCP server's `elicitation/create` (form mode) as the extension UI's dialogs, so a server that
 * asks its user something reaches the user wherever parley's dialogs go (an RPC client, a browser
 * tab, an ACP editor). Each field of the requested schema is one dialog, in order: a boolean a
 * confirm, an enum a select, a string or a number an input (asked again until it is a number).
 * A dismissed dialog (or the server giving up: its signal) cancels the whole request; a form with
 * no fields is one confirm whose "no" declines. The newest pi answers elicitations with nothing.
 */
import type { ExtensionUIContext } from "../extensions/types.js";

export type ElicitResult = { action: "accept"; content: Record<string, string | number | boolean> } | { action: "decline" | "cancel" };

interface Field {
  type?: unknown;
  title?: unknown;
  description?: unknown;
  enum?: unknown;
  enumNames?: unknown;
  oneOf?: unknown;
  default?: unknown;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** An enum's values and the labels shown for them (`enumNames`, or `oneOf` with `const`/`title`). */
function choices(field: Field): { value: string; label: string }[] | undefined {
  if (Array.isArray(field.enum)) {
    const names = Array.isArray(field.enumNames) ? field.enumNames : [];
    return field.enum.map((value, i) => ({ value: String(value), label: typeof names[i] === "string" ? names[i] : String(value) }));
  }
  if (Array.isArray(field.oneOf)) {
    return field.oneOf
      .filter(isRecord)
      .map((option) => ({ value: String(option.const), label: typeof option.title === "string" ? option.title : String(option.const) }));
  }
  return undefined;
}

export async function elicitWithDialogs(ui: ExtensionUIContext, server: string, params: unknown, signal: AbortSignal): Promise<ElicitResult> {
  if (!isRecord(params) || (params.mode !== undefined && params.mode !== "form")) return { action: "decline" };
  const message = typeof params.message === "string" ? params.message : "";
  const schema = isRecord(params.requestedSchema) ? params.requestedSchema : {};
  const properties = isRecord(schema.properties) ? Object.entries(schema.properties) : [];
  const required = Array.isArray(schema.required) ? schema.required : [];
  const options = { signal };
  const heading = `${server}: ${message}`;
  if (properties.length === 0) return (await ui.confirm(heading, message, options)) ? { action: "accept", content: {} } : { action: "decline" };
  const content: Record<string, string | number | boolean> = {};
  for (const [name, raw] of properties) {
    const field: Field = isRecord(raw) ? raw : {};
    const label = typeof field.title === "string" ? field.title : name;
    const title = `${heading} (${label}${typeof field.description === "string" ? `: ${field.description}` : ""})`;
    const listed = choices(field);
    if (field.type === "boolean") {
      content[name] = await ui.confirm(title, message, options);
    } else if (listed !== undefined) {
      const picked = await ui.select(
        title,
        listed.map((choice) => choice.label),
        options,
      );
      const choice = listed.find((entry) => entry.label === picked);
      if (choice === undefined) return { action: "cancel" };
      content[name] = choice.value;
    } else {
      const numeric = field.type === "number" || field.type === "integer";
      for (;;) {
        const placeholder = field.default !== undefined ? String(field.default) : numeric ? "a number" : undefined;
        const text = await ui.input(title, placeholder, options);
        if (text === undefined || signal.aborted) return { action: "cancel" };
        if (text === "" && !required.includes(name)) break;
        if (!numeric) {
          content[name] = text;
          break;
        }
        const value = Number(text);
        if (text.trim() !== "" && Number.isFinite(value) && (field.type === "number" || Number.isInteger(value))) {
          content[name] = value;
          break;
        }
      }
    }
    if (signal.aborted) return { action: "cancel" };
  }
  return { action: "accept", content };
}
