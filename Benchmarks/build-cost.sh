#!/usr/bin/env bash
# What the product costs a user to build and to ship, side by side with Alamofire (issue 23, item 7): cold debug
# and release build wall time of the three product libraries (HTTP, HTTPAuth, HTTPConnection) against Alamofire's
# one, their source lines, and the release machine code, each per source line, with PASS or FAIL against the
# budget (per source line ≤ 1.25× Alamofire's).
#
#   Benchmarks/build-cost.sh [--rounds N] [--only debug|release] [--keep DIR] [--ours DIR] ALAMOFIRE-DIR
#
#   ALAMOFIRE-DIR  a checkout of Alamofire (5.12 when the budget was set), never committed here: for example
#                  `git clone --branch 5.12.0 https://github.com/Alamofire/Alamofire /tmp/alamofire`.
#   --rounds N     rounds (3 by default). Each round builds both packages cold (fresh scratch folders) in debug
#                  and in release, alternating which goes first from one round to the next.
#   --only CONFIG  time only debug or only release builds (release is needed for the text sizes).
#   --keep DIR     keep the last round's scratch folders in DIR (ours/ and alamofire/) for a closer look:
#                  `size -A`, `nm --size-sort` on DIR/ours/release/HTTP.build/*.o.
#   --ours DIR     measure the product package in DIR instead of the one this script belongs to (for example a
#                  worktree at an older commit, to measure a change before and after).
#
# Both packages are copied first (Package.swift, Sources and Tests of ours; all of Alamofire), so that editing
# either while it runs changes nothing. The machine is shared and its speed varies, so only ratios measured in the
# same round are compared; the report gives their median and their spread (min–max), and the load average at the
# start and the end.
#
# What is measured:
# - Build time: wall time of `swift build -c CONFIG --target T` from an empty scratch folder, ours as two
#   invocations (`--target HTTPAuth`, which builds HTTP with it, then `--target HTTPConnection`), Alamofire as
#   one (`--target Alamofire`). Each invocation includes SwiftPM's planning, about a second.
# - Source lines: non-blank lines that are not only a comment, in Sources/HTTP, Sources/HTTPAuth and
#   Sources/HTTPConnection (*.swift; not the Demo, not DocC articles) against Alamofire's Source/.
# - Release text: the release object files' sizes from `size` (Berkeley format): `text` is everything
#   read-only that is loaded (machine code, constants, Swift metadata, unwind tables) and is the budgeted figure;
#   the `.text` section alone (machine code) is shown beside it.
set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
OURS=$(dirname -- "$SCRIPT_DIR")
ROUNDS=3
ONLY=""
KEEP=""
AF=""
BUDGET=1.25

while (($#)); do
    case $1 in
    --rounds) ROUNDS=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --keep) KEEP=$2; shift 2 ;;
    --ours) OURS=$(cd -- "$2" && pwd -P); shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "build-cost.sh: unknown option $1" >&2; exit 2 ;;
    *) AF=$(cd -- "$1" && pwd -P); shift ;;
    esac
done
if [[ -z $AF || ! -f $AF/Package.swift || ! -d $AF/Source ]]; then
    echo "build-cost.sh: give the folder of an Alamofire checkout (with Package.swift and Source/)" >&2
    exit 2
fi
case $ONLY in "" | debug | release) ;; *) echo "build-cost.sh: --only debug or --only release" >&2; exit 2 ;; esac
CONFIGS=(debug release)
[[ -n $ONLY ]] && CONFIGS=("$ONLY")

WORK=$(mktemp -d "${TMPDIR:-/tmp}/build-cost.XXXXXX")
trap 'rm -rf -- "$WORK"' EXIT

# Both packages are built from copies taken now, so that editing either while the rounds run changes nothing.
mkdir -p "$WORK/src/ours" "$WORK/src/alamofire"
cp -a "$OURS/Package.swift" "$OURS/Sources" "$OURS/Tests" "$WORK/src/ours/"
cp -a "$AF/." "$WORK/src/alamofire/"
rm -rf -- "$WORK/src/alamofire/.build"
OURS_SRC=$WORK/src/ours
AF_SRC=$WORK/src/alamofire

# Non-blank lines that are not only a comment (`//…`, or inside `/* … */`).
count_lines() {
    find "$@" -name '*.swift' -print0 | xargs -0 cat | awk '
        { line = $0; sub(/^[ \t]+/, "", line); sub(/[ \t\r]+$/, "", line) }
        inBlock { if (index(line, "*/")) { inBlock = 0; rest = substr(line, index(line, "*/") + 2); if (rest ~ /[^ \t]/) n++ } ; next }
        line == "" { next }
        line ~ /^\/\// { next }
        line ~ /^\/\*/ { if (!index(substr(line, 3), "*/")) inBlock = 1; next }
        { n++ }
        END { print n + 0 }'
}

OURS_LINES=$(count_lines "$OURS_SRC/Sources/HTTP" "$OURS_SRC/Sources/HTTPAuth" "$OURS_SRC/Sources/HTTPConnection")
AF_LINES=$(count_lines "$AF_SRC/Source")

now() { date +%s.%N; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# build SIDE CONFIG SCRATCH: prints the wall time in seconds of a cold build.
build() {
    local side=$1 config=$2 scratch=$3 start end log=$WORK/$1-$2.log
    rm -rf -- "$scratch"
    start=$(now)
    if [[ $side == ours ]]; then
        swift build --package-path "$OURS_SRC" --scratch-path "$scratch" -c "$config" --target HTTPAuth >"$log" 2>&1 &&
            swift build --package-path "$OURS_SRC" --scratch-path "$scratch" -c "$config" --target HTTPConnection \
                >>"$log" 2>&1
    else
        swift build --package-path "$AF_SRC" --scratch-path "$scratch" -c "$config" --target Alamofire >"$log" 2>&1
    fi || { echo "build-cost.sh: the $side $config build failed:" >&2; tail -30 "$log" >&2; exit 1; }
    end=$(now)
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f\n", b - a }'
}

# text_size SCRATCH TARGET...: "berkeley-text dot-text" summed over the release object files of the targets.
text_size() {
    local scratch=$1; shift
    local objects=()
    for target; do objects+=("$scratch"/release/"$target".build/*.o); done
    local berkeley dottext
    berkeley=$(size "${objects[@]}" | awk 'NR > 1 { s += $1 } END { print s + 0 }')
    dottext=$(size -A "${objects[@]}" | awk '$1 == ".text" { s += $2 } END { print s + 0 }')
    echo "$berkeley $dottext"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
minmax() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f–%.2f", lo, hi }'; }

echo "Build cost: $OURS against $AF ($(git -C "$AF" describe --tags 2>/dev/null || echo "Alamofire"))"
echo "Swift: $(swift --version 2>&1 | head -1)"
echo "Source lines: ours $OURS_LINES, Alamofire $AF_LINES (ours / Alamofire = $(awk -v a="$OURS_LINES" -v b="$AF_LINES" 'BEGIN { printf "%.2f", a / b }'))"
echo "Load average at start: $(loadavg); $ROUNDS round(s)"
echo

declare -A RATIOS TIMES_OURS TIMES_AF
for ((round = 1; round <= ROUNDS; round++)); do
    for config in "${CONFIGS[@]}"; do
        if ((round % 2)); then order=(ours alamofire); else order=(alamofire ours); fi
        for side in "${order[@]}"; do
            t=$(build "$side" "$config" "$WORK/$side")
            if [[ $side == ours ]]; then t_ours=$t; else t_af=$t; fi
            [[ $config == release && -n $KEEP ]] && { mkdir -p "$KEEP"; rm -rf -- "${KEEP:?}/$side"; cp -a "$WORK/$side" "$KEEP/$side"; }
            if [[ $config == release ]]; then
                if [[ $side == ours ]]; then TEXT_OURS=$(text_size "$WORK/$side" HTTP HTTPAuth HTTPConnection)
                else TEXT_AF=$(text_size "$WORK/$side" Alamofire); fi
            fi
        done
        r=$(awk -v a="$t_ours" -v b="$t_af" 'BEGIN { printf "%.3f", a / b }')
        RATIOS[$config]+="$r "
        TIMES_OURS[$config]+="$t_ours "
        TIMES_AF[$config]+="$t_af "
        printf 'round %d %-7s ours %6.1f s  Alamofire %6.1f s  ratio %.2f  (load %s)\n' \
            "$round" "$config" "$t_ours" "$t_af" "$r" "$(loadavg)"
    done
done
echo

LINE_RATIO=$(awk -v a="$OURS_LINES" -v b="$AF_LINES" 'BEGIN { print a / b }')
STATUS=0
verdict() { awk -v x="$1" -v b="$BUDGET" 'BEGIN { print (x <= b) ? "PASS" : "FAIL" }'; }

printf '%-26s %12s %12s %14s %18s %s\n' "figure" "ours" "Alamofire" "ratio" "per line (spread)" "budget ≤ $BUDGET×"
for config in "${CONFIGS[@]}"; do
    read -ra rs <<<"${RATIOS[$config]}"
    read -ra tos <<<"${TIMES_OURS[$config]}"
    read -ra tas <<<"${TIMES_AF[$config]}"
    med=$(printf '%s\n' "${rs[@]}" | median)
    spread=$(printf '%s\n' "${rs[@]}" | awk -v l="$LINE_RATIO" '{ print $1 / l }' | minmax)
    per=$(awk -v m="$med" -v l="$LINE_RATIO" 'BEGIN { printf "%.2f", m / l }')
    v=$(verdict "$per")
    [[ $v == FAIL ]] && STATUS=1
    printf '%-26s %10.1f s %10.1f s %14.2f %18s %s\n' "$config build (median)" \
        "$(printf '%s\n' "${tos[@]}" | median)" "$(printf '%s\n' "${tas[@]}" | median)" "$med" "$per ($spread)" "$v"
done
if [[ -n ${TEXT_OURS:-} ]]; then
    read -r bo to <<<"$TEXT_OURS"
    read -r ba ta <<<"$TEXT_AF"
    for pair in "release text (size):$bo:$ba:budget" "release .text section:$to:$ta:"; do
        IFS=: read -r name o a budgeted <<<"$pair"
        r=$(awk -v a="$o" -v b="$a" 'BEGIN { printf "%.2f", a / b }')
        per=$(awk -v r="$r" -v l="$LINE_RATIO" 'BEGIN { printf "%.2f", r / l }')
        if [[ -n $budgeted ]]; then v=$(verdict "$per"); [[ $v == FAIL ]] && STATUS=1; else v="(shown)"; fi
        printf '%-26s %10.2f MB %7.2f MB %14s %18s %s\n' "$name" \
            "$(awk -v x="$o" 'BEGIN { print x / 1e6 }')" "$(awk -v x="$a" 'BEGIN { print x / 1e6 }')" "$r" "$per" "$v"
    done
fi
echo
echo "Load average at end: $(loadavg)"
exit $STATUS
