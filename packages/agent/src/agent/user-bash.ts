/**
 * The `bash` RPC command: runs a shell command for the user (not the model), streams its output,
 * and records it so the next prompt's context includes it. (To be completed.)
 */
export interface BashResult {
  output: string;
  exitCode: number | undefined;
  cancelled: boolean;
  truncated: boolean;
  fullOutputPath?: string;
}

export class UserBash {
  async run(_command: string, _options: { onDelta: (delta: string) => void; excludeFromContext?: boolean }): Promise<BashResult> {
    throw new Error("bash is not implemented yet");
  }
  abort(): void {}
}
