# Extracts the tessel command lines of Markdown files' ```sh blocks (doc_commands.sh runs them).
#   awk -f doc_commands.awk FILE.md...
# Prints one tab-separated record per command to run:  FILE  LINE  TEXT  COMMAND
#   TEXT     the command as the page writes it (continuations joined, the comment removed);
#   COMMAND  what to run: TEXT with its optional [...] parts expanded. A command with optional
#            parts runs twice, without them ("bare") and with every one of them, the first of
#            each "a | b" choice ("full"), so each option the page shows is run once.
# A command is a line (after NAME=VALUE assignments) starting with `tessel ` or
# `build/tools/tessel/tessel `. Such a line in a fence that is not ```sh is printed as
#   FILE  LINE  TEXT  STRAY
# for the test to fail on: a command the reader is shown must be one the test runs.

function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
function is_command(s) {
  while (s ~ /^[A-Z_][A-Z0-9_]*=[^ ]* /) sub(/^[^ ]* +/, "", s)
  return s ~ /^(build\/tools\/tessel\/)?tessel( |$)/
}
# The comment of a shell line: from a '#' that starts a word to the end (the pages quote no '#').
function uncomment(s) { sub(/(^|[ \t])#.*$/, "", s); return trim(s) }
# expand(s, full): innermost [...] first; bare drops each group, full keeps its first alternative.
function expand(s, full,    inner, alt) {
  while (match(s, /\[[^][]*\]/)) {
    inner = substr(s, RSTART + 1, RLENGTH - 2)
    alt = ""
    if (full) { alt = inner; sub(/[ \t]*\|.*$/, "", alt) }
    s = substr(s, 1, RSTART - 1) alt substr(s, RSTART + RLENGTH)
  }
  gsub(/  +/, " ", s)
  return trim(s)
}
function emit(file, line, text,    bare, full) {
  bare = expand(text, 0)
  full = expand(text, 1)
  print file "\t" line "\t" text "\t" bare
  if (full != bare) print file "\t" line "\t" text "\t" full
}

FNR == 1 { fence = 0; pending = "" }
{
  s = trim($0)
  if (s ~ /^```/) {
    if (fence) fence = 0
    else { fence = 1; lang = substr(s, 4) }
    next
  }
  if (!fence) next
  if (lang != "sh") {
    if (is_command(s)) print FILENAME "\t" FNR "\t" s "\tSTRAY"
    next
  }
  if (pending == "") { start = FNR; s = uncomment($0) } else s = pending " " uncomment($0)
  if (s ~ /\\$/) { sub(/[ \t]*\\$/, "", s); pending = s; next }
  pending = ""
  if (is_command(s)) emit(FILENAME, start, s)
}
