/**
 * A command-line error (a flag, or a mode's own flag check): the CLI says it once, with where to
 * look, and exits with pi's start-up status. A leaf, so a mode's checks raise it without reaching
 * up to the CLI.
 */
export class UsageError extends Error {
  override readonly name = "UsageError";
}
