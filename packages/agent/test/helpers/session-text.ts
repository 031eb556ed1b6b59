/** Big sessions for the scale tests (in process and through the CLI). */

/** A linear pi v3 session in `cwd`: header, then alternating user/assistant messages, as lines. */
export function sessionText(cwd: string, count: number, textChars = 50, id = (i: number) => `e${i.toString(16).padStart(7, "0")}`): string[] {
  const lines = [JSON.stringify({ type: "session", version: 3, id: "scale", timestamp: "2026-01-01T00:00:00.000Z", cwd })];
  for (let i = 0; i < count; i++) {
    const message =
      i % 2 === 0
        ? { role: "user", content: [{ type: "text", text: `q${i} ${"é".repeat(i % 3)}${"x".repeat(textChars)}` }], timestamp: i }
        : {
            role: "assistant",
            content: [{ type: "text", text: `a${i} ${"y".repeat(textChars)}` }],
            provider: "p",
            model: "m",
            api: "a",
            usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
            stopReason: "stop",
            timestamp: i,
          };
    lines.push(
      JSON.stringify({
        type: "message",
        id: id(i),
        parentId: i === 0 ? null : id(i - 1),
        timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
        message,
      }),
    );
  }
  return lines;
}
