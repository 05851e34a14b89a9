#!/usr/bin/env bash
# Prints the README's set-up commands, one a line, exactly as README.md's "## Two commands"
# section writes them in its ```sh block (comment-only lines left out), so that CI (.ci/run) runs
# what a reader copies rather than a copy of it. Fails loudly (exit 1, nothing on stdout) when
# the section or its block is missing or has changed shape: CI's checks are written for two
# commands, scripts/demo.sh first and scripts/test.sh second.
#   scripts/readme_commands.sh [README]      (default: the README.md beside scripts/)
set -euo pipefail
readme=${1:-"$(dirname "$0")/../README.md"}
[ -f "$readme" ] || { echo "readme_commands: no $readme" >&2; exit 1; }

# The first fenced block after the heading, up to the next heading; prints "sh" then its lines.
block=$(awk '
  /^## / { in_section = ($0 == "## Two commands"); next }
  !in_section || done { next }
  /^```/ { if (fence) { done = 1; fence = 0 } else { fence = 1; print substr($0, 4) } next }
  fence { print }
  END { if (fence) print "readme_commands: the block is not closed" > "/dev/stderr" }
' "$readme")
shape() { echo "readme_commands: $readme: $*" >&2; echo "--- the block found:" >&2; echo "$block" >&2; exit 1; }
[ -n "$block" ] || shape 'no "## Two commands" section with a fenced block'
[ "$(head -n 1 <<<"$block")" = "sh" ] || shape 'the "Two commands" block is not a ```sh block'

# The commands: every line that is neither blank nor only a comment, as written.
commands=$(tail -n +2 <<<"$block" | grep -Ev '^[[:space:]]*(#|$)' || true)
[ "$(grep -c . <<<"$commands")" -eq 2 ] || shape "expected two commands"
first=$(sed -n 1p <<<"$commands")
second=$(sed -n 2p <<<"$commands")
[[ $first == "scripts/demo.sh"* ]] || shape "the first command is not scripts/demo.sh"
[[ $second == "scripts/test.sh"* ]] || shape "the second command is not scripts/test.sh"
printf '%s\n' "$commands"
