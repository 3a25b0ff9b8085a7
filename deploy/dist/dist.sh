#!/bin/sh
# Release archives of kubectl-wmap (make dist): one per platform, built from this checkout.
#   sh deploy/dist/dist.sh OUT_DIR VERSION ARCH...        (ARCH: amd64, arm64)
# For each ARCH: OUT_DIR/kubectl-wmap_linux_ARCH.tar.gz holding kubectl-wmap,
# kubectl_complete-wmap, LICENSE, README.md and lib/ (libjq.so.1, libonig.so.5); then
# OUT_DIR/sha256sums.txt and OUT_DIR/wmap.yaml, the krew manifest of deploy/krew/wmap.yaml
# with this version and the archives' real checksums.
#
# Linking (measured, see deploy/dist/README.md): glibc stays dynamic (the plugin opens the
# system's libcurl.so.4 with dlopen for the live commands, which a static glibc program
# cannot do safely); libyaml, jansson and libcrypto are linked in statically from Debian's
# .a files; Debian ships libjq and libonig as shared libraries only, so those two travel in
# lib/ and the binary finds them through its RPATH $ORIGIN/lib (DT_RPATH rather than
# RUNPATH, because it also serves libjq's own need of libonig). The result needs nothing
# but glibc (2.34 or later) for the offline commands, and libcurl.so.4 for the live ones.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 OUT_DIR VERSION ARCH..." >&2; exit 2; }
out=$1 version=$2
shift 2
repo=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
	SOURCE_DATE_EPOCH=$(git -C "$repo" log -1 --format=%ct 2>/dev/null || echo 0)
fi
rm -f "$out/sha256sums.txt"

for arch in "$@"; do
	case $arch in
	amd64) triplet=x86_64-linux-gnu; cc=${CC_AMD64:-cc} ;;
	# libcurl's headers are not installed for arm64 (libcurl4-openssl-dev:arm64 is not
	# needed: libcurl is opened at run time); curl's headers are the same on every
	# architecture, so the amd64 ones are searched last.
	arm64) triplet=aarch64-linux-gnu; cc=${CC_ARM64:-aarch64-linux-gnu-gcc} ;;
	*) echo "dist.sh: unknown architecture $arch (amd64, arm64)" >&2; exit 2 ;;
	esac
	[ "$arch" = arm64 ] && [ -z "${CC_ARM64:-}" ] && cc="$cc -idirafter /usr/include/x86_64-linux-gnu"
	command -v ${cc%% *} >/dev/null || { echo "dist.sh: ${cc%% *} not found (make deps-dist)" >&2; exit 1; }
	libdir=/usr/lib/$triplet
	for f in libyaml.a libjansson.a libcrypto.a libjq.so.1 libonig.so.5; do
		[ -e "$libdir/$f" ] || { echo "dist.sh: $libdir/$f is missing (make deps-dist)" >&2; exit 1; }
	done
	build=$out/$arch
	# The Makefile builds the plugin; only the compiler, the folder and the libraries change.
	make -C "$repo" --no-print-directory BUILD="$build/build" CC="$cc" SANITIZE= CRYPTO_LINKED=1 \
		LDFLAGS='-Wl,-rpath,\$$ORIGIN/lib -Wl,--disable-new-dtags -Wl,--as-needed' \
		PLUGIN_LIBS="-ljq -l:libonig.so.5 -Wl,-Bstatic -lyaml -ljansson -lcrypto -Wl,-Bdynamic -lm -lpthread -ldl" \
		"$build/build/kubectl-wmap" >"$build.log" 2>&1 || { cat "$build.log" >&2; exit 1; }
	stage=$build/stage
	rm -rf "$stage" && mkdir -p "$stage/lib"
	cp "$build/build/kubectl-wmap" "$stage/kubectl-wmap"
	"${triplet}-strip" --strip-all "$stage/kubectl-wmap" 2>/dev/null || strip --strip-all "$stage/kubectl-wmap"
	cp "$repo/kubectl-wmap/kubectl_complete-wmap" "$repo/LICENSE" "$repo/README.md" "$stage/"
	cp -L "$libdir/libjq.so.1" "$libdir/libonig.so.5" "$stage/lib/"
	chmod 0755 "$stage/kubectl-wmap" "$stage/kubectl_complete-wmap" "$stage/lib/"*
	chmod 0644 "$stage/LICENSE" "$stage/README.md"
	archive=kubectl-wmap_linux_$arch.tar.gz
	(cd "$stage" && tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
		-cf - LICENSE README.md kubectl-wmap kubectl_complete-wmap lib) | gzip -n -9 >"$out/$archive"
	(cd "$out" && sha256sum "$archive") >>"$out/sha256sums.txt"
	echo "$archive: $(wc -c <"$out/$archive") bytes; binary $(wc -c <"$stage/kubectl-wmap") bytes; needs: $(readelf -d "$stage/kubectl-wmap" | awk '/NEEDED/ {gsub(/[][]/, "", $5); printf "%s ", $5}')"
done

# The krew manifest: the version and each platform's checksum filled in.
python3 - "$repo/deploy/krew/wmap.yaml" "$out/sha256sums.txt" "$version" >"$out/wmap.yaml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
sums = {}
for line in open(sys.argv[2]):
    digest, name = line.split()
    sums[name] = digest
version = sys.argv[3]
text = text.replace("v0.1.0", "v" + version)
def fill(m):
    uri = m.group(1)
    name = uri.rsplit("/", 1)[1]
    return 'uri: %s\n    sha256: "%s"' % (uri, sums.get(name, "0" * 64))
text = re.sub(r'uri: (\S+)\n    sha256: "[0-9a-f]{64}"', fill, text)
sys.stdout.write(text)
PY
sh "$repo/deploy/dist/check-krew.sh" "$out/wmap.yaml" "$out"
