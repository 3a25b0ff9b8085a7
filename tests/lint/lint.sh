#!/bin/sh
# make lint: the house rules a machine checks (tests/lint/README.md). Run from the repository
# root after the libraries are built:
#   sh tests/lint/lint.sh BUILD_DIR CC CLANG_FORMAT
# Exits 1 naming every violation, 0 when there is none.
BUILD=${1:-build}
CC=${2:-cc}
CLANG_FORMAT=${3:-clang-format-14}
fail=0
bad() { echo "lint: $*"; fail=1; }

# The product's sources (the front ends, the libraries, the public headers); tests and the
# API server simulator (which shares no code with src/) are not the product.
SOURCES=$(git ls-files 'src/*.c' 'src/*.h' 'include/*.h' 'kubectl-wmap/*.c' 'kubectl-wmap/*.h' \
	'webhook/*.c' 'webhook/*.h' 2>/dev/null)
[ -n "$SOURCES" ] || SOURCES=$(find src include kubectl-wmap webhook -name '*.[ch]' | sort)

# 1. Every global symbol the libraries define carries the project prefix: wmap_ for the
#    public API, wmap__ for internals shared between files.
for lib in "$BUILD/libwmap.a" "$BUILD/libwmap-kube.a"; do
	if [ ! -f "$lib" ]; then
		bad "$lib: not built"
		continue
	fi
	# The sanitizers' own symbols (ASan's one-definition-rule markers __odr_asan.NAME of a
	# SANITIZE=1 build) are the compiler's, not ours.
	nm -g --defined-only "$lib" | awk 'NF == 3 { print $3 }' | grep -v '^wmap_' |
		grep -v '^__odr_asan\.wmap_' | sort -u |
	while read -r sym; do
		echo "lint: $lib: global symbol without the wmap_ prefix: $sym"
	done | grep . && fail=1
done

# 2. Each third-party library is included by its one module only.
#    header pattern, then where it may be included (extended regular expressions)
while read -r header allowed; do
	[ -n "$header" ] || continue
	for f in $SOURCES; do
		grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*<$header" "$f" /dev/null |
		while IFS= read -r hit; do
			echo "$f" | grep -qE "$allowed" ||
				echo "lint: ${hit%%:#*}: <${header}...> belongs to $allowed only"
		done
	done | grep . && fail=1
done <<'RULES'
curl/ ^src/kube/curl_lazy\.h$
(jq|jv)\.h ^src/jq\.c$
yaml\.h ^src/util/yaml\.c$
microhttpd\.h ^webhook/
gnutls/ ^webhook/tls\.c$
openssl/ ^kubectl-wmap/install_certs\.c$
RULES

# 3. Each public header compiles alone (and twice: its include guard works).
for h in $(echo "$SOURCES" | grep '^include/.*\.h$'); do
	inc=${h#include/}
	printf '#include "%s"\n#include "%s"\n' "$inc" "$inc" |
		$CC -std=c11 -pedantic -Wall -Wextra -Werror -Iinclude -fsyntax-only -x c - \
			>/tmp/wmap-lint.$$ 2>&1 ||
		{ bad "$h does not compile alone:"; sed 's/^/    /' /tmp/wmap-lint.$$ | head -5; }
done
rm -f /tmp/wmap-lint.$$

# 4. Banned functions (unbounded or unchecked): snprintf, a capped buffer or strtol instead.
BANNED='sprintf|vsprintf|strcpy|strcat|strncpy|strncat|strtok|atoi|atol|atoll|atof|gets|tmpnam'
for f in $SOURCES; do
	# comments and string literals do not count
	sed -e 's://.*$::' -e 's:/\*.*\*/::g' -e 's:"[^"]*"::g' "$f" |
		grep -nE "(^|[^A-Za-z0-9_])($BANNED)[[:space:]]*\(" |
		sed "s|^|lint: $f:|; s|\$|   (banned function)|"
done | grep . && fail=1

# 5. The formatter's configuration (.clang-format) is applied (`make format` applies it).
if command -v "$CLANG_FORMAT" >/dev/null 2>&1; then
	for f in $SOURCES; do
		"$CLANG_FORMAT" --style=file "$f" | cmp -s "$f" - ||
			echo "lint: $f: not formatted as .clang-format says (make format)"
	done | grep . && fail=1
else
	bad "$CLANG_FORMAT is not installed (apt-get install clang-format-14)"
fi

# 6. webhook/: no include or call loop, and the directions of the file map (webhook/README.md):
#    the HTTP server calls no controller, the watches start none, the status writer does not
#    read the watches, a controller calls no other. The self-test plants each violation in a
#    copy and checks that it is named.
sh tests/lint/webhook-calls.sh | grep -v '^lint: ok' | grep . && fail=1
sh tests/lint/webhook-calls-test.sh >/tmp/wmap-lint-calls.$$ 2>&1 ||
	{ bad "tests/lint/webhook-calls-test.sh: a planted violation went unnoticed:"; grep FAIL /tmp/wmap-lint-calls.$$; }
rm -f /tmp/wmap-lint-calls.$$

# 7. src/: the utilities, the core and the API client include only downwards (src/README.md):
#    src/util/ only utility headers, the core never the client, src/kube/ no core header. The
#    self-test plants each violation in a copy and checks that it is named.
sh tests/lint/src-layers.sh | grep -v '^lint: ok' | grep . && fail=1
sh tests/lint/src-layers-test.sh >/tmp/wmap-lint-layers.$$ 2>&1 ||
	{ bad "tests/lint/src-layers-test.sh: a planted violation went unnoticed:"; grep FAIL /tmp/wmap-lint-layers.$$; }
rm -f /tmp/wmap-lint-layers.$$

[ $fail = 0 ] && echo "lint: ok (prefix, third-party includes, header self-test, banned functions, format, webhook calls, src layers)"
exit $fail
