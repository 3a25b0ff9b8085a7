#!/bin/sh
# Builds the wmap-webhook OCI image from scratch with buildah, without a container daemon.
#   sh deploy/image/build.sh WEBHOOK_BINARY OUT_DIR VERSION
# Writes OUT_DIR/wmap-webhook-VERSION.oci.tar (OCI layout archive) and
# OUT_DIR/wmap-webhook-VERSION.docker.tar (docker-archive), and prints the image's digest.
#
# The image holds the binary (a stripped copy of the one the tests run), every shared library
# it loads at start AND those of libcurl.so.4, which src/kube/curl_lazy.c opens with dlopen
# (ldd of the binary does not list them), the CA certificates, /etc/passwd and /etc/group with
# user and group 65532, and /etc/nsswitch.conf. Nothing else: no shell, no package manager.
#
# Reproducible: every file's time, the layer's and the image's creation time come from
# SOURCE_DATE_EPOCH (default: the time of the last commit), so two builds of one commit give
# one digest. Needs root (buildah's vfs storage, chroot isolation); the storage lives under
# OUT_DIR/storage and is removed afterwards.
set -eu
if [ $# -ne 3 ]; then
	echo "usage: $0 WEBHOOK_BINARY OUT_DIR VERSION" >&2
	exit 2
fi
bin=$1 out=$2 version=$3
here=$(cd "$(dirname "$0")" && pwd)
[ -x "$bin" ] || { echo "build.sh: $bin: not an executable (make $bin first)" >&2; exit 1; }
command -v buildah >/dev/null || { echo "build.sh: buildah is not installed (make deps)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "build.sh: buildah's vfs storage and chroot isolation need root" >&2; exit 1; }

if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
	SOURCE_DATE_EPOCH=$(git -C "$here" log -1 --format=%ct 2>/dev/null || echo 0)
fi
export SOURCE_DATE_EPOCH

mkdir -p "$out"
out=$(cd "$out" && pwd)
ctx=$out/context
rootfs=$ctx/rootfs
rm -rf "$ctx" "$out/storage" "$out/run"
mkdir -p "$rootfs/etc/ssl/certs" "$rootfs/usr/local/bin" "$rootfs/tmp"

# The library closure: what the dynamic linker loads at start, and libcurl.so.4 with its own
# closure (ldd is transitive). Each file is copied (symlinks resolved) to the path the
# linker found it at; the program interpreter keeps its absolute path.
curl_so=$(ldconfig -p | awk '/libcurl\.so\.4 .*x86-64|libcurl\.so\.4 \(libc6,AArch64/ {print $NF; exit}')
[ -n "$curl_so" ] || { echo "build.sh: libcurl.so.4 not found (apt-get install libcurl4)" >&2; exit 1; }
libs=$( { ldd "$bin"; echo "x => $curl_so (0)"; ldd "$curl_so"; } |
	awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | sort -u)
for f in $libs; do
	mkdir -p "$rootfs$(dirname "$f")"
	cp -L "$f" "$rootfs$f"
	chmod 0755 "$rootfs$f"
done
echo "$libs" | sed 's/^/  lib /' >"$out/closure.txt"

cp "$bin" "$rootfs/usr/local/bin/wmap-webhook"
strip --strip-all "$rootfs/usr/local/bin/wmap-webhook"
chmod 0755 "$rootfs/usr/local/bin/wmap-webhook"
cp -L /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/:/sbin/nologin\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$rootfs/etc/group"
# getaddrinfo and getpwuid through the lookups built into glibc (no libnss_* needed).
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$rootfs/etc/nsswitch.conf"
chmod 1777 "$rootfs/tmp"
find "$rootfs" -type d -exec chmod 0755 {} + ; chmod 1777 "$rootfs/tmp"
find "$rootfs/etc" -type f -exec chmod 0644 {} +

sed "s/@VERSION@/$version/g" "$here/Containerfile" >"$ctx/Containerfile"

B="buildah --root $out/storage --runroot $out/run --storage-driver vfs"
name=localhost/wmap-webhook:$version
$B bud --quiet --isolation chroot --timestamp "$SOURCE_DATE_EPOCH" --identity-label=false \
	--omit-history --layers=false -f "$ctx/Containerfile" -t "$name" "$ctx" >/dev/null
rm -f "$out/wmap-webhook-$version.oci.tar" "$out/wmap-webhook-$version.docker.tar"
$B push --quiet "$name" "oci-archive:$out/wmap-webhook-$version.oci.tar:$version" 
$B push --quiet "$name" "docker-archive:$out/wmap-webhook-$version.docker.tar:ghcr.io/wmap-project/wmap-webhook:$version"
$B rmi --all >/dev/null 2>&1 || true
rm -rf "$out/storage" "$out/run" "$ctx"

# buildah writes the OCI archive's own tar entries with the current time: repack it with
# sorted entries and SOURCE_DATE_EPOCH so that the archive file, not only the image digest,
# is the same from one build to the next.
oci=$out/wmap-webhook-$version.oci.tar
rm -rf "$out/oci" && mkdir "$out/oci"
tar -xf "$oci" -C "$out/oci"
tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
	--format=posix --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
	-cf "$oci.tmp" -C "$out/oci" oci-layout index.json blobs
mv "$oci.tmp" "$oci"
rm -rf "$out/oci"

# The image's digest: the sha256 of its manifest (index.json -> manifests[0]).
tar -xOf "$out/wmap-webhook-$version.oci.tar" index.json | python3 -c 'import json,sys; print(json.load(sys.stdin)["manifests"][0]["digest"])'
