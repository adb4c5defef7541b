#!/usr/bin/env bash
# Checks commit messages against the house rule: a subject of at most 72 characters in the
# form `area: what changed`, a blank line before any body. Measurements belong in
# docs/performance.md and the why in the body, so a long subject is the usual sign of both
# in the wrong place.
#
#   scripts/check-commits.sh             every commit since the rule began (make check, lint)
#   scripts/check-commits.sh REV..REV    the commits of a range
#   scripts/check-commits.sh --msg FILE  one message, as git's commit-msg hook passes it:
#                                        ln -s ../../scripts/check-commits.sh .git/hooks/commit-msg
#                                        (the hook form is detected by its one file argument)
#
# History before the rule is left as it is: rewriting published commits would change every
# hash a note or a document cites.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

# The last commit before the rule; every commit after it is checked.
since=5a6fba6abeb4969fb6dfb3e13b568c854bc3909e
max=72

fail=0
# check SUBJECT SECOND_LINE WHAT: prints a line for each rule the message breaks.
check() {
  local subject="$1" second="$2" what="$3"
  case "$subject" in
    "Merge "*) return 0 ;; # git's own merge subjects
  esac
  if [ "${#subject}" -gt "$max" ]; then
    echo "$what: subject is ${#subject} characters (at most $max): $subject"
    fail=1
  fi
  if ! [[ "$subject" =~ ^[A-Za-z0-9][A-Za-z0-9_./{},\ -]*:\ [^\ ] ]]; then
    echo "$what: subject is not 'area: what changed': $subject"
    fail=1
  fi
  if [ -n "$second" ]; then
    echo "$what: the line after the subject must be blank"
    fail=1
  fi
}

msgfile=""
if [ "${1:-}" = "--msg" ]; then
  msgfile="${2:?--msg needs a file}"
elif [ $# -eq 1 ] && [ -f "$1" ]; then
  msgfile="$1"
fi

if [ -n "$msgfile" ]; then
  # git's hook gets the message with its comment lines still in it.
  msg="$(grep -v '^#' "$msgfile" || true)"
  check "$(sed -n 1p <<<"$msg")" "$(sed -n 2p <<<"$msg")" "commit message"
  exit "$fail"
fi

range="${1:-}"
if [ -z "$range" ]; then
  if git cat-file -e "$since^{commit}" 2>/dev/null; then
    range="$since..HEAD"
  else
    range="HEAD^!" # a shallow clone without the start of the rule: the newest commit
  fi
fi

n=0
while IFS= read -r sha; do
  [ -n "$sha" ] || continue
  n=$((n + 1))
  check "$(git log -1 --format=%s "$sha")" "$(git log -1 --format=%B "$sha" | sed -n 2p)" "${sha:0:10}"
done < <(git rev-list --no-merges "$range")

[ "$fail" -eq 0 ] && echo "check-commits: $n commits in $range follow the rule"
exit "$fail"
