#!/bin/sh
# Runs the release archives of make dist where nothing else helps them:
# - amd64: in a root filesystem holding only the archive's files and the glibc pieces the
#   binary asks for (chroot, as root), `kubectl-wmap version`, an offline describe of the
#   12-GPU JobSet and `install` (OpenSSL linked in);
# - arm64: under qemu-user-static, `kubectl-wmap version` and the same describe.
#   sh deploy/dist/test.sh DIST_DIR
set -eu
dist=$1
repo=$(cd "$(dirname "$0")/../.." && pwd)
fixture=$repo/tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/leader-workers.yaml
want="kubectl-wmap version $(sed -n 's/^VERSION *:= *//p' "$repo/Makefile")"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wmap-dist.XXXXXX")
cleanup() {
	if [ -n "${proc_mounted:-}" ]; then umount "$proc_mounted" || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL dist-test: $*" >&2; exit 1; }

if [ -f "$dist/kubectl-wmap_linux_amd64.tar.gz" ]; then
	root=$tmp/amd64
	mkdir -p "$root/opt/wmap"
	tar -xzf "$dist/kubectl-wmap_linux_amd64.tar.gz" -C "$root/opt/wmap"
	# glibc only: whatever ldd resolves outside the archive's lib/.
	for f in $(ldd "$root/opt/wmap/kubectl-wmap" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
		case $f in "$root"/*) continue ;; esac
		case $(basename "$f") in
		libc.so.*|libm.so.*|ld-linux*|libpthread.so.*|libdl.so.*) ;;
		*) fail "amd64 binary needs $f, which is neither glibc nor in the archive" ;;
		esac
		mkdir -p "$root$(dirname "$f")"
		cp -L "$f" "$root$f"
	done
	cp "$fixture" "$root/jobset.yaml"
	# /proc, as on any Linux system: the dynamic linker reads /proc/self/exe for $ORIGIN.
	mkdir -p "$root/proc"
	mount -t proc proc "$root/proc" || fail "cannot mount /proc in the test root filesystem (root needed)"
	proc_mounted=$root/proc
	got=$(chroot "$root" /opt/wmap/kubectl-wmap version) || fail "amd64 version did not run"
	[ "$got" = "$want" ] || fail "amd64 version printed '$got'"
	chroot "$root" /opt/wmap/kubectl-wmap describe -f /jobset.yaml >"$tmp/describe.out" || fail "amd64 describe failed"
	grep -q 'gpu: 12' "$tmp/describe.out" || fail "amd64 describe: no 'gpu: 12' in: $(cat "$tmp/describe.out")"
	chroot "$root" /opt/wmap/kubectl-wmap install >"$tmp/install.out" || fail "amd64 install failed"
	grep -q 'caBundle: ' "$tmp/install.out" || fail "amd64 install printed no caBundle"
	umount "$root/proc" && proc_mounted=
	echo "ok   amd64: version, describe (gpu: 12) and install in a root filesystem of $(find "$root" -type f | wc -l) files: the archive's and glibc's"
fi

if [ -f "$dist/kubectl-wmap_linux_arm64.tar.gz" ]; then
	command -v qemu-aarch64-static >/dev/null || fail "qemu-aarch64-static is not installed (make deps-dist)"
	mkdir -p "$tmp/arm64"
	tar -xzf "$dist/kubectl-wmap_linux_arm64.tar.gz" -C "$tmp/arm64"
	file_arch=$(od -An -tx1 -j18 -N2 "$tmp/arm64/kubectl-wmap" | tr -d ' ')
	[ "$file_arch" = b700 ] || fail "the arm64 archive's binary is not an AArch64 ELF (e_machine $file_arch)"
	got=$(qemu-aarch64-static "$tmp/arm64/kubectl-wmap" version) || fail "arm64 version did not run under qemu"
	[ "$got" = "$want" ] || fail "arm64 version printed '$got'"
	qemu-aarch64-static "$tmp/arm64/kubectl-wmap" describe -f "$fixture" >"$tmp/describe.out" || fail "arm64 describe failed"
	grep -q 'gpu: 12' "$tmp/describe.out" || fail "arm64 describe: no 'gpu: 12'"
	echo "ok   arm64: version and describe (gpu: 12) under qemu-aarch64-static"
fi
