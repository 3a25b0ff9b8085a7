#!/bin/sh
# The size figures of issue 17, for the product's sources (src/, include/, kubectl-wmap/,
# webhook/; the tests are not the product). Run from the repository root:
#   sh tests/lint/sizes.sh [LIMIT]
# Prints every function longer than LIMIT lines (default 80; from its name's line to its
# closing brace, as Universal Ctags reports them), longest first, every file over 800 lines,
# and the counts. It reports; it never fails (the figures are tracked, not enforced).
LIMIT=${1:-80}
SOURCES=$(git ls-files 'src/*.c' 'include/*.h' 'kubectl-wmap/*.c' 'webhook/*.c' 2>/dev/null)
[ -n "$SOURCES" ] || SOURCES=$(find src include kubectl-wmap webhook -name '*.[ch]' | sort)
command -v ctags >/dev/null 2>&1 || { echo "sizes: ctags (universal-ctags) is not installed"; exit 0; }
# shellcheck disable=SC2086
ctags -x --_xformat='%N %F %n %{end}' --kinds-C=f --language-force=C -o - $SOURCES |
	awk -v limit="$LIMIT" '
	{ n++; len = $4 - $3 + 1; if (len > limit) { over++; printf "%5d  %s:%d  %s\n", len, $2, $3, $1 } }
	END { printf "functions over %d lines: %d of %d\n", limit, over, n > "/dev/stderr" }' |
	sort -rn
wc -l $SOURCES | awk '$2 != "total" && $1 > 800 { n++; printf "%5d  %s (file)\n", $1, $2 }
	END { printf "files over 800 lines: %d\n", n > "/dev/stderr" }' | sort -rn
