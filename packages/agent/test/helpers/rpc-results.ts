/** Comparing what two agents answered through an RpcClient: run-to-run noise taken out. */

/** Run-to-run noise out: uuids, 8-hex entry ids, timestamps, the temp folder, token counts. */
export function normalise(value: unknown, base: string): unknown {
  const text = JSON.stringify(value ?? null)
    .replaceAll(base, "<base>")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>")
    .replace(/"[0-9a-f]{8}"/g, '"<id>"')
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}[-:]\d{2}[-:]\d{2}[-.]\d{3}Z/g, "<time>")
    .replace(/"(timestamp)":\d+/g, '"$1":"<ms>"')
    .replace(/"(input|output|cacheRead|cacheWrite|total|totalTokens|tokens|tokensBefore|percent)":[\d.]+/g, '"$1":"<n>"');
  return JSON.parse(text) as unknown;
}

export const withoutKeys = (value: unknown, keys: string[]): unknown => {
  if (!value || typeof value !== "object" || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => !keys.includes(k)));
};
