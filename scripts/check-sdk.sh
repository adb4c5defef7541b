#!/usr/bin/env bash
# Generates the clients of openapi.yaml, the customer contract, and proves they are usable:
#   - the Go client (sdk/go/client.gen.go) with oapi-codegen, pinned, built from its Go
#     module once into .cache/bin; then `go vet` and `go test` in sdk/go (its own module);
#   - the TypeScript types (sdk/typescript/src/schema.d.ts) with openapi-typescript, and
#     `tsc --strict` over them and the typed uses in sdk/typescript/src; both pinned in
#     sdk/typescript's package.json and package-lock.json, installed with `npm ci` into
#     .cache/sdk-typescript (integrity-checked, no install scripts).
# By default it fails when a checked-in generated file differs from what the contract
# generates (run by `make lint`); with --write it rewrites them instead.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
write=false
if [ "${1:-}" = "--write" ]; then write=true; fi

OAPI_CODEGEN_VERSION=v2.8.2

# oapi-codegen, from the Go module proxy at the pinned version.
ocg="$root/.cache/bin/oapi-codegen-$OAPI_CODEGEN_VERSION"
if [ ! -x "$ocg" ]; then
  mkdir -p "$root/.cache/bin"
  gobin="$(mktemp -d)"
  echo "check-sdk: building oapi-codegen $OAPI_CODEGEN_VERSION (first run only)" >&2
  GOBIN="$gobin" GOFLAGS=-mod=mod go install "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@$OAPI_CODEGEN_VERSION"
  mv "$gobin/oapi-codegen" "$ocg"
  rm -rf "$gobin"
fi

# openapi-typescript and typescript, from npm at the versions the lock pins (node and npm
# from Debian when missing, as scripts/install-browser.sh installs them for `make deps`).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "check-sdk: installing nodejs npm" >&2
  $sudo apt-get update >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends nodejs npm >&2
fi
src="$root/sdk/typescript"
dest="$root/.cache/sdk-typescript"
mkdir -p "$dest"
exec 9>"$dest.lock"
flock 9
want="$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [ ! -f "$dest/.installed" ] || [ "$(cat "$dest/.installed")" != "$want" ] || [ ! -d "$dest/node_modules" ]; then
  echo "check-sdk: npm ci into .cache/sdk-typescript" >&2
  rm -f "$dest/.installed"
  cp "$src/package.json" "$src/package-lock.json" "$dest/"
  (cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  echo "$want" >"$dest/.installed"
fi
exec 9>&-
bin="$dest/node_modules/.bin"

# Generate into a scratch folder, then compare with (or copy over) the checked-in files.
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
(cd sdk/go && "$ocg" -config oapi-codegen.yaml -o "$out/client.gen.go" ../../openapi.yaml)
"$bin/openapi-typescript" openapi.yaml --output "$out/schema.d.ts" >/dev/null 2>&1 ||
  "$bin/openapi-typescript" openapi.yaml --output "$out/schema.d.ts"

stale=()
for pair in "client.gen.go:sdk/go/client.gen.go" "schema.d.ts:sdk/typescript/src/schema.d.ts"; do
  gen="$out/${pair%%:*}"
  dst="${pair#*:}"
  if $write; then
    cp "$gen" "$dst"
  elif ! cmp -s "$gen" "$dst"; then
    diff -u "$dst" "$gen" | head -40 >&2 || true
    stale+=("$dst")
  fi
done
if [ "${#stale[@]}" -gt 0 ]; then
  echo "check-sdk: ${stale[*]} differ from what openapi.yaml generates; run: bash scripts/check-sdk.sh --write" >&2
  exit 1
fi

# Both compile, strictly, and the typed uses of the Go client pass.
(cd sdk/go && go vet ./... && go test -count=1 ./...)
"$bin/tsc" --project sdk/typescript/tsconfig.json
echo "check-sdk: the Go client and the TypeScript types match openapi.yaml and compile"
