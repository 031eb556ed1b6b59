/**
 * The last line of "no child outlives parley": a SIGKILL, an OOM kill or a V8 crash runs none of
 * parley's exit handlers, and Node cannot ask the kernel to signal its children when it dies
 * (PR_SET_PDEATHSIG is per child and needs code between fork and exec; a subreaper only helps
 * the ancestor of the orphans, not a sibling). So a small watchdog does it from outside:
 *
 * - Started on the first child parley spawns (never at start-up), as `/bin/sh` (a few hundred KB,
 *   not a second Node), in a session of its own (a signal to parley's group spares it) and
 *   ignoring the usual signals; it holds the read end of a pipe whose only writer is parley.
 * - Every child parley spawns carries an environment tag unique to this parley (the technique of
 *   Jenkins' ProcessTreeKiller): descendants inherit it, so it finds them all, background jobs and
 *   `setsid` ones whose parent has exited included, even a child spawned a moment before parley
 *   died whose pid it was never told. parley also tells it, on the pipe, the process groups and
 *   pids it tracks (`+id` / `-id`), for children that clear their environment.
 * - When the pipe reaches EOF (parley has ended, whichever way), it sends SIGTERM to all of them,
 *   gives them up to 2 s, then SIGKILLs what is left (twice, for what forked meanwhile) and exits.
 *   After a normal exit parley has already killed its children, so it finds nothing and exits at once.
 *   Last, it removes the folder of parley's output files, if it was told one (`=path`).
 *
 * Linux reads the tags from /proc; elsewhere only the told groups and pids are ended; on Windows
 * there is no watchdog.
 */
import type { ChildProcess } from "node:child_process";
import { nodeChildProcess, nodeNet } from "./lazy-node.js";

export const CHILD_TAG_VARIABLE = "PARLEY_CHILD_TAG";

/** Where the watchdog finds its script: its command line stays short (`ps` shows `sh -c eval… parley-watchdog TAG`). */
const SCRIPT_VARIABLE = "PARLEY_WATCHDOG_SCRIPT";

// Targets are kill(1) operands: a pid, or -pgid for a group.
const SCRIPT = `
unset ${SCRIPT_VARIABLE}
trap '' HUP INT QUIT TERM PIPE
tag="${CHILD_TAG_VARIABLE}=$1"
targets=
while IFS= read -r line; do
  case $line in
    +*) targets="$targets \${line#+}" ;;
    -*) kept=; for t in $targets; do [ "$t" = "\${line#-}" ] || kept="$kept $t"; done; targets=$kept ;;
    =*) remove=\${line#=} ;;
  esac
done
tagged() { grep -lzxF -e "$tag" /proc/[0-9]*/environ 2>/dev/null | sed -n 's,^/proc/\\([0-9]*\\)/environ$,\\1,p'; }
signal_all() { for t in $targets $(tagged); do kill -s "$1" -- "$t" 2>/dev/null; done; }
any_alive() { for t in $targets $(tagged); do kill -s 0 -- "$t" 2>/dev/null && return 0; done; return 1; }
signal_all TERM
waited=0
while [ $waited -lt 20 ] && any_alive; do sleep 0.1; waited=$((waited + 1)); done
signal_all KILL
signal_all KILL
[ -n "$remove" ] && rm -rf -- "$remove"
`;

let watchdog: ChildProcess | undefined;
let tag: string | undefined;

/** This parley's tag: random, so that another parley's children (or a reused pid) never match. */
function childTag(): string {
  tag ??= `${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  return tag;
}

/**
 * The environment a child of parley gets: `env` with this parley's tag. Starts the watchdog (once):
 * call it before spawning.
 */
export function guardedEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  startWatchdog();
  return { ...env, [CHILD_TAG_VARIABLE]: childTag() };
}

function startWatchdog(): void {
  if (watchdog || process.platform === "win32") return;
  // Its own environment has no tag (nor parley's, if parley runs under another parley): it must not find itself.
  const env: NodeJS.ProcessEnv = { ...process.env, [SCRIPT_VARIABLE]: SCRIPT };
  delete env[CHILD_TAG_VARIABLE];
  try {
    watchdog = nodeChildProcess().spawn("/bin/sh", ["-c", `eval "$${SCRIPT_VARIABLE}"`, "parley-watchdog", childTag()], {
      detached: true,
      env,
      stdio: ["pipe", "ignore", "ignore"],
    });
  } catch {
    return; // no /bin/sh: parley's own exit handlers remain
  }
  // It must not keep parley alive, nor its failure take parley down.
  watchdog.on("error", () => {});
  watchdog.unref();
  const pipe = watchdog.stdin;
  pipe?.on("error", () => {});
  if (pipe instanceof nodeNet().Socket) pipe.unref();
}

/** Tells the watchdog (if it runs) to end `pid` (or the group it leads) should parley die. */
export function watchdogTrack(pid: number, group: boolean): void {
  watchdog?.stdin?.write(`+${group ? -pid : pid}\n`);
}

/** Tells the watchdog `pid` (or its group) is over: the number may be reused. */
export function watchdogForget(pid: number, group: boolean): void {
  watchdog?.stdin?.write(`-${group ? -pid : pid}\n`);
}

/**
 * Has the watchdog remove `folder` (parley's output files, see output-files.ts) once parley has
 * ended and its children are gone; starts the watchdog if it is not running.
 */
export function watchdogRemoveAtEnd(folder: string): void {
  startWatchdog();
  if (!folder.includes("\n")) watchdog?.stdin?.write(`=${folder}\n`);
}

/** The watchdog's pid, for tests: undefined until the first child was spawned. */
export function watchdogPid(): number | undefined {
  return watchdog?.pid;
}
