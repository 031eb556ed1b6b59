/**
 * Command checking for start-up-sensitive code: the generated validators (no TypeBox) decide;
 * only a command that fails gets the detailed explanation, which loads TypeBox on demand.
 */
import { inspectEnvelope } from "./command-envelope.js";
import { COMMAND_CHECKS } from "./generated/command-checks.js";
import type { CommandType, RpcCommand } from "./schema/command-records.js";

export type QuickCheck =
  | { ok: true; command: RpcCommand }
  | { ok: false; id?: string | number; command: string; error: string }
  /** The shape is wrong: `explain()` resolves with the same error text `checkCommand` gives. */
  | { ok: false; id?: string | number; command: CommandType; explain: () => Promise<string> };

export function quickCheckCommand(value: unknown): QuickCheck {
  const envelope = inspectEnvelope(value);
  if (!envelope.ok) return envelope;
  const { type, withId } = envelope;
  const check = Object.hasOwn(COMMAND_CHECKS, type) ? COMMAND_CHECKS[type] : undefined;
  if (!check) return { ok: false, ...withId, command: type, error: `Unknown command: ${type}` };
  if (check(value)) return { ok: true, command: value as RpcCommand };
  return {
    ok: false,
    ...withId,
    command: type as CommandType,
    explain: async () => {
      const { checkCommand } = await import("./validate.js");
      const full = checkCommand(value);
      return full.ok ? `Invalid ${type} command` : full.error;
    },
  };
}

/** Starts loading the detailed validator in the background, so a first bad command waits less. */
export function preloadCommandExplanations(): void {
  void import("./validate.js").catch(() => {});
}
