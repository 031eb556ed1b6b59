// parley needs what pi 1.6 needs: Node 22.19 or newer (pi's libraries use its APIs). Checked before
// anything else loads, so an older Node gets one sentence instead of a stack trace from deep inside.
"use strict";

const required = [22, 19, 0];

/** The sentence to print when `version` (e.g. "20.20.2") is too old for parley, else undefined. */
function nodeVersionProblem(version) {
  const parts = String(version).replace(/^v/, "").split(".").map(Number);
  for (let i = 0; i < required.length; i++) {
    const have = parts[i] ?? 0;
    if (!Number.isFinite(have)) break;
    if (have > required[i]) return undefined;
    if (have < required[i]) {
      return `parley needs Node.js ${required.slice(0, 2).join(".")} or newer, and this is Node.js ${version}: install a newer Node.js and run parley again.`;
    }
  }
  return undefined;
}

module.exports = { nodeVersionProblem };
