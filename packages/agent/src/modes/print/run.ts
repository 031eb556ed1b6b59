/**
 * pi's one-shot modes: `-p` prints the last reply's text, `--mode json` writes the session header
 * and every event. As in pi, the extensions load first; then piped stdin and the `@file`
 * arguments make the first prompt; the run ends when the prompts have.
 */
import type { ImageContent } from "@parley/protocol";
import type { ModeContext } from "../../core/mode-context.js";
import { takeOverStdout } from "../../transport/protocol-stdout.js";
import { writeStderr } from "../../transport/stderr.js";
import { planPrompts, readPipedInput } from "./initial-message.js";
import { PrintFrontDoor, type PrintOutput } from "./print-mode.js";

/** pi's exit status for a start-up error (an `@file` it cannot read is one). */
const STARTUP_ERROR_STATUS = 1;

export interface PrintRunOptions {
  output: PrintOutput;
  /** The command line's messages, each a prompt in turn (the first joined with stdin and the files). */
  messages: readonly string[];
  /** `@file` arguments, read from `launchCwd` (the folder parley was started in). */
  fileArgs: readonly string[];
  launchCwd: string;
}

export async function runPrint(context: ModeContext, options: PrintRunOptions): Promise<void> {
  const { lifetime } = context;
  // The protocol's stdout: the reply's text (print) or the events (json) are all that goes there.
  const stdout = takeOverStdout().output;
  if (options.output === "text") stdout.on("error", lifetime.outputClosed);
  const front = new PrintFrontDoor(context.core, {
    output: options.output,
    log: context.log,
    writeText: (text) => new Promise<void>((resolve) => stdout.write(text, () => resolve())),
    onOutputClosed: lifetime.outputClosed,
  });
  await context.startAgent(front);
  const piped = await readPipedInput(context.stdin.stream);
  let files: { text: string; images: ImageContent[] } | undefined;
  if (options.fileArgs.length > 0) {
    const { FileArgumentError, readFileArguments } = await import("./file-arguments.js");
    try {
      files = await readFileArguments(options.fileArgs, options.launchCwd);
    } catch (error) {
      if (!(error instanceof FileArgumentError)) throw error;
      writeStderr(`Error: ${error.message}\n`);
      process.exit(STARTUP_ERROR_STATUS);
    }
  }
  const plan = planPrompts({ stdin: piped, fileText: files?.text, images: files?.images, messages: options.messages });
  lifetime.serve(front);
  lifetime.finish(await front.run(plan));
}
