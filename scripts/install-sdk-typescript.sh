#!/usr/bin/env bash
# Installs the TypeScript SDK's packages (openapi-fetch; openapi-typescript, typescript and
# @types/node to build and check it) at the exact versions sdk/typescript's package.json
# and package-lock.json pin, with `npm ci` (integrity-checked, no install scripts) into
# .cache/sdk-typescript, and prints that folder. Node and npm come from Debian when
# missing. Idempotent and quick when everything is there.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
src="$root/sdk/typescript"
dest="$root/.cache/sdk-typescript"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "install-sdk-typescript: installing nodejs npm" >&2
  $sudo apt-get update >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends nodejs npm >&2
fi
mkdir -p "$dest"
exec 9>"$dest.lock"
flock 9
want="$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [ ! -f "$dest/.installed" ] || [ "$(cat "$dest/.installed")" != "$want" ] || [ ! -d "$dest/node_modules" ]; then
  echo "install-sdk-typescript: npm ci into .cache/sdk-typescript" >&2
  rm -f "$dest/.installed"
  cp "$src/package.json" "$src/package-lock.json" "$dest/"
  (cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  echo "$want" >"$dest/.installed"
fi
echo "$dest"
