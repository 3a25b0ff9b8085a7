#!/bin/sh
# The three layers of src/ (src/README.md) include only downwards. Run from the repository
# root:
#   sh tests/lint/src-layers.sh     checks; names every violation, exits 1 on any
# A utility header is include/wmap/NAME.h where src/util/NAME.c exists (the layer's public
# headers); the client's headers are wmap/kube.h and wmap/kube/*.h; every other wmap/ header
# and every header at the root of src/ is the core's. The checks (quoted includes only;
# system and third-party headers are lint.sh's rule 2):
#   - src/util/ and the utility headers include only utility headers (and src/util/ files);
#   - the core (src/*.c, src/*.h and its public headers) never includes the client
#     (wmap/kube.h, wmap/kube/..., or a file of src/kube/);
#   - src/kube/ and the client's headers include no core header: only utility headers, the
#     client's own headers and the files of src/kube/.
# SRC_DIR=dir INCLUDE_DIR=dir check another tree (tests/lint/src-layers-test.sh plants each
# violation in a copy).
SRC=${SRC_DIR:-src}
INC=${INCLUDE_DIR:-include}
fail=0

utility=$(for f in "$SRC"/util/*.c; do
	n=$(basename "$f" .c)
	[ -f "$INC/wmap/$n.h" ] && echo "wmap/$n.h"
done)

# includes FILE...: "file:line: name" for each #include "name"
includes() {
	for f in "$@"; do
		[ -f "$f" ] || continue
		sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p; t; s/.*//p' "$f" |
			awk -v f="$f" 'NF { print f ":" NR ": " $0 }'
	done
}

# check LAYER WHY FILE...: each include must be allowed by allowed_LAYER (a shell function
# taking the including file and the included name)
check() {
	layer=$1 why=$2
	shift 2
	includes "$@" | while IFS= read -r hit; do
		name=${hit##*: }
		file=${hit%%:*}
		"allowed_$layer" "$file" "$name" || echo "lint: ${hit%: *}: includes \"$name\": $why"
	done
}

is_utility() { echo "$utility" | grep -qxF "$1"; }
is_client() { case $1 in wmap/kube.h | wmap/kube/*) return 0 ;; esac; return 1; }
# a file beside the including one (src/kube/kube_int.h beside src/kube/kube.c)
is_beside() { case $2 in */*) return 1 ;; esac; [ -f "$(dirname "$1")/$2" ]; }

allowed_util() { is_utility "$2" || is_beside "$1" "$2"; }
allowed_core() { ! is_client "$2" && case $2 in kube/* | */kube/*) false ;; *) true ;; esac; }
allowed_kube() { is_utility "$2" || is_client "$2" || is_beside "$1" "$2"; }

util_headers=$(for h in $utility; do echo "$INC/$h"; done)
client_headers="$INC/wmap/kube.h $(ls "$INC"/wmap/kube/*.h 2>/dev/null)"
core_headers=$(ls "$INC"/wmap/*.h | grep -vxF "$util_headers" | grep -v '/wmap/kube\.h$')

{
	check util "src/util/ and the utility headers include only utility headers (src/README.md, layers)" \
		"$SRC"/util/*.c "$SRC"/util/*.h $util_headers
	check core "the core never includes the API client (src/README.md, layers)" \
		"$SRC"/*.c "$SRC"/*.h $core_headers
	check kube "src/kube/ includes no core header, only utility headers and its own (src/README.md, layers)" \
		"$SRC"/kube/*.c "$SRC"/kube/*.h $client_headers
} >"${TMPDIR:-/tmp}/wmap-src-layers.$$"
grep . "${TMPDIR:-/tmp}/wmap-src-layers.$$" && fail=1
rm -f "${TMPDIR:-/tmp}/wmap-src-layers.$$"

[ $fail = 0 ] && echo "lint: ok (src/: utilities, core and API client include only downwards; $(echo $utility | wc -w) utility headers)"
exit $fail
