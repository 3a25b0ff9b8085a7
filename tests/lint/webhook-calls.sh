#!/bin/sh
# Who calls whom among webhook/*.c, and the directions the parts keep (webhook/README.md,
# "File map"). Run from the repository root:
#   sh tests/lint/webhook-calls.sh          checks; names every violation, exits 1 on any
#   sh tests/lint/webhook-calls.sh --graph  prints the graph (file -> file: symbols) first
# A file calls another when it names a wh_ symbol (function or controller) the other defines
# at the start of a line. The checks:
#   - webhook/*.c include no webhook file but webhook.h, which includes none;
#   - no loop: the graph sorts topologically (tsort);
#   - the HTTP server (server.c) calls only inforce.c, metrics.c, log.c and tls.c;
#   - the watches (cluster.c) call only inforce.c, metrics.c and log.c: they start nothing;
#   - the status writer (status.c) calls only leader.c, inforce.c, metrics.c and log.c: it
#     does not read the watches;
#   - a controller (a file defining a `const wh_controller`) calls no other controller, and
#     neither the watches, the server nor main.c.
# WEBHOOK_DIR=dir checks another tree (the planted-violation test in tests/lint/README.md).
DIR=${WEBHOOK_DIR:-webhook}
fail=0
bad() { echo "lint: $*"; fail=1; }
tmp=${TMPDIR:-/tmp}/wmap-webhook-calls.$$
trap 'rm -f "$tmp".*' EXIT

# 1. Includes: one internal header, included by every file and including no other.
for f in "$DIR"/*.c "$DIR"/*.h; do
	grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
		grep -v '"webhook\.h"' | grep -v '"wmap/' |
		sed "s|^|lint: $f:|; s|\$|   (webhook/ files include webhook.h and wmap/ headers only)|"
done | grep . && fail=1
grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"webhook\.h"' "$DIR"/webhook.h |
	sed "s|^|lint: $DIR/webhook.h:|; s|\$|   (includes itself)|" | grep . && fail=1

# 2. Definitions: "symbol file" for every non-static wh_ function or controller defined at
#    the start of a line.
for f in "$DIR"/*.c; do
	awk -v file="$(basename "$f")" '
		match($0, /^const wh_controller wh_[a-z0-9_]+ =/) {
			print substr($0, 21, RLENGTH - 22), file; next
		}
		/^static/ || /^[ \t]/ || /;[ \t]*$/ { next }
		match($0, /(^|[ *])wh_[a-z0-9_]+\(/) {
			s = substr($0, RSTART, RLENGTH); sub(/^[ *]/, "", s); sub(/\($/, "", s)
			print s, file
		}' "$f"
done | sort -u >"$tmp.defs"

# 3. References: "from to symbol" for every wh_ symbol a file names that another defines
#    (comments and string literals do not count).
for f in "$DIR"/*.c; do
	sed -e 's:/\*.*\*/::g' -e 's:"[^"]*"::g' "$f" |
		awk '/\/\*/ { c = 1 } !c { print } /\*\// { c = 0 }' |
		grep -oE '(^|[^A-Za-z0-9_])wh_[a-z0-9_]+' | sed "s/^[^w]*/$(basename "$f") /"
done | sort -u | awk 'NR == FNR { def[$1] = $2; next }
	($2 in def) && def[$2] != $1 { print $1, def[$2], $2 }' "$tmp.defs" - >"$tmp.refs"

if [ "${1:-}" = "--graph" ]; then
	awk '{ k = $1 " -> " $2; s[k] = s[k] " " $3 } END { for (k in s) print k ":" s[k] }' \
		"$tmp.refs" | sort
fi

# 4. No loop.
awk '{ print $1, $2 }' "$tmp.refs" | sort -u >"$tmp.edges"
if ! tsort "$tmp.edges" >/dev/null 2>"$tmp.loop"; then
	bad "$DIR: the files call each other in a loop:"
	sed 's/^/    /' "$tmp.loop"
fi

# 5. Directions: "file allowed-callees" (extended regular expression of file names).
controllers=$(grep -l '^const wh_controller ' "$DIR"/*.c 2>/dev/null | xargs -n1 basename 2>/dev/null)
while read -r from allowed why; do
	grep "^$from " "$tmp.refs" | while read -r _ to sym; do
		echo "$to" | grep -qxE "$allowed" ||
			echo "lint: $DIR/$from calls $DIR/$to ($sym): $why"
	done
done >"$tmp.dir" <<'RULES'
server.c inforce\.c|metrics\.c|log\.c|tls\.c the HTTP server reads the state in force and writes metrics; it calls no controller
cluster.c inforce\.c|metrics\.c|log\.c the watches publish the state in force; they start and kick no controller (main.c does)
status.c leader\.c|inforce\.c|metrics\.c|log\.c the status writer takes its input from the state in force, never from the watches
RULES
for c in $controllers; do
	grep "^$c " "$tmp.refs" | while read -r _ to sym; do
		case " $(echo $controllers) cluster.c server.c main.c " in
		*" $to "*) echo "lint: $DIR/$c calls $DIR/$to ($sym): a controller calls no other part but the state in force, the leader, metrics, the log and its own helpers" ;;
		esac
	done
done >>"$tmp.dir"
grep . "$tmp.dir" && fail=1

[ $fail = 0 ] && echo "lint: ok (webhook/: $(wc -l <"$tmp.edges") calls between files, no loop, directions kept)"
exit $fail
