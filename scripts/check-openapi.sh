#!/usr/bin/env bash
# Validates openapi.yaml (the customer contract) and openapi-internal.yaml (the routes that
# are not for customers, which refers to openapi.yaml's components) as OpenAPI 3.1 documents with openapi-spec-validator (the
# Python reference validator). The Go tests in shared/httpapi check real responses
# against the same file; this checks the file itself.
#
# Uses openapi-spec-validator from PATH when it is there, else installs the pinned
# version into .cache/openapi-venv (gitignored) once.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=0.9.0
validator=$(command -v openapi-spec-validator || true)
if [ -z "$validator" ]; then
	venv=.cache/openapi-venv
	if [ ! -x "$venv/bin/openapi-spec-validator" ]; then
		python3 -m venv "$venv"
		"$venv/bin/pip" install --quiet "openapi-spec-validator==$VERSION"
	fi
	validator="$venv/bin/openapi-spec-validator"
fi

for spec in openapi.yaml openapi-internal.yaml; do
	"$validator" --schema 3.1 --validation-errors all "$spec"
done
