#!/usr/bin/env bash
# Prints how many of the module's exported names have no user outside their package
# (scripts/unusedexports has the rules; -v lists them). No threshold yet: the figure is
# printed by make lint so it can only be watched going down.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./scripts/unusedexports "$@"
