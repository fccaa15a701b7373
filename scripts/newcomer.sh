#!/usr/bin/env bash
# A newcomer's first hour, timed: clones this checkout's HEAD into a fresh
# folder and runs the README's timed commands there in order (the rows of
# its "First hour" table: the demo, the library example, the test suite,
# the Python module), each against the time the README states for it.
# Fails when a command fails or takes less than half or more than one and a
# half times its stated time. `pip` runs in a fresh virtual environment.
#
#   scripts/newcomer.sh [FOLDER]     # default: a new temporary folder
#
# Takes about as long as the table's times added up (about 20 min on two
# cores); run it on a quiet machine.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-$(mktemp -d)}"
git clone --quiet "$repo" "$work/ferrofem"
cd "$work/ferrofem"
python3 -m venv "$work/venv"

# `| `command` | 6 min 50 s … |` → "command<TAB>seconds"
rows=$(python3 - README.md <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
table = text.split("<!-- first-hour -->")[1]
for line in table.splitlines():
    m = re.match(r"\| `([^`]+)` \| (?:(\d+) min ?)?(?:(\d+) s)?", line)
    if m and (m.group(2) or m.group(3)):
        print(f"{m.group(1)}\t{int(m.group(2) or 0) * 60 + int(m.group(3) or 0)}")
EOF
)
[ -n "$rows" ] || { echo "newcomer: no timed rows in README.md's first-hour table" >&2; exit 1; }

status=0
total=0
while IFS=$'\t' read -r command stated; do
    run="$command"
    [[ "$command" == pip\ * ]] && run="$work/venv/bin/$command"
    start=$(date +%s)
    if ! bash -c "$run" >"$work/log" 2>&1; then
        tail -20 "$work/log" >&2
        echo "FAILED  $command" >&2
        exit 1
    fi
    took=$(( $(date +%s) - start ))
    total=$(( total + took ))
    verdict=ok
    if (( 2 * took < stated || 2 * took > 3 * stated )); then verdict="OUTSIDE ±50 %"; status=1; fi
    printf '%-58s %4d s (README: %4d s)  %s\n' "$command" "$took" "$stated" "$verdict"
done <<< "$rows"
"$work/venv/bin/python" -c 'import ferrofem; s = ferrofem.load_scene("drop"); s.step(5); print("python: 5 steps of drop, t =", s.time)'
echo "total ${total} s"
exit $status
