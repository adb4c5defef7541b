#!/usr/bin/env bash
# Generates the clients of openapi.yaml, the customer contract, and proves they are usable:
#   - the Go client (sdk/go/client.gen.go) with oapi-codegen, pinned, built from its Go
#     module once into .cache/bin; then `go vet` and `go test` in sdk/go (its own module),
#     with this machine's Go and with Go 1.22, the oldest the SDK supports;
#   - the TypeScript types (sdk/typescript/src/schema.ts) with openapi-typescript, and
#     `tsc --strict` over them and the SDK in sdk/typescript, then its build and `npm pack`;
#     all pinned in sdk/typescript's package.json and package-lock.json
#     (scripts/install-sdk-typescript.sh).
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

# openapi-typescript, typescript and the SDK's packages, from npm at the versions the lock
# pins.
dest="$(bash scripts/install-sdk-typescript.sh)"
bin="$dest/node_modules/.bin"

# Generate into a scratch folder, then compare with (or copy over) the checked-in files.
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
(cd sdk/go && "$ocg" -config oapi-codegen.yaml -o "$out/client.gen.go" ../../openapi.yaml)
# The generated file's package comment ("provides primitives to interact with the openapi
# HTTP API") would come first in `go doc`, before the SDK's own (sdk/go/doc.go): keep its
# "Code generated" line only, as a file comment.
sed -i -e '1,2{/^\/\/ Package /d;/^\/\/$/d}' -e 's|^\(// Code generated .* DO NOT EDIT\.\)$|\1\n|' "$out/client.gen.go"
# --default-non-nullable false: a field with a default (SessionCreate's media and mode) is
# optional in the types, as it is in the contract; openapi-typescript would otherwise make
# it required, in requests too. No response field has a default.
ots=("$bin/openapi-typescript" openapi.yaml --default-non-nullable false --output "$out/schema.ts")
"${ots[@]}" >/dev/null 2>&1 || "${ots[@]}"

stale=()
for pair in "client.gen.go:sdk/go/client.gen.go" "schema.ts:sdk/typescript/src/schema.ts"; do
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

# Both compile, strictly, and the typed uses of the Go client pass: the Go SDK with this
# machine's Go and with the oldest release its go directive promises customers (the
# toolchain comes from the Go module proxy once, into the module cache).
SDK_OLDEST_GO=go1.22.12
(cd sdk/go && go vet ./... && go test -count=1 ./...)
(cd sdk/go && GOTOOLCHAIN="$SDK_OLDEST_GO" go vet ./... && GOTOOLCHAIN="$SDK_OLDEST_GO" go test -count=1 ./...)
# tsc runs on a copy inside .cache/sdk-typescript, so that imports resolve to the
# node_modules installed there.
work="$(mktemp -d "$dest/check.XXXXXX")"
trap 'rm -rf "$out" "$work"' EXIT
cp -r sdk/typescript/tsconfig.json sdk/typescript/src sdk/typescript/test "$work/"
"$bin/tsc" --project "$work/tsconfig.json"
# The package builds (ES modules, CommonJS, declarations) and packs.
bash scripts/install-sdk-typescript.sh --pack >/dev/null
echo "check-sdk: the Go client and the TypeScript types match openapi.yaml and compile; the TypeScript package packs"
