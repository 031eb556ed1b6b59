/** An error the client can act on (its text is the command's error response). */
export class AgentError extends Error {
  override readonly name = "AgentError";
}
