# Release archives of kubectl-wmap (deploy/dist/README.md). Included by the top-level Makefile.
#
#   make deps-dist   the arm64 cross compiler, arm64 libraries and qemu-user-static (root)
#   make dist        build/dist/: kubectl-wmap_linux_{amd64,arm64}.tar.gz, sha256sums.txt,
#                    wmap.yaml (krew, real checksums, checked), then runs each archive
#                    (amd64 in a bare root filesystem, arm64 under qemu)

DIST_DIR   := build/dist
DIST_ARCHS ?= amd64 arm64
# Not libonig-dev:arm64: it cannot be installed beside libonig-dev (amd64), which apt would
# remove, breaking the native build; libonig5:arm64 (a dependency of libjq-dev:arm64) is
# enough, linked by its file name (-l:libonig.so.5).
DIST_PKGS  := gcc-aarch64-linux-gnu qemu-user-static libc6:arm64 libyaml-dev:arm64 \
              libjansson-dev:arm64 libjq-dev:arm64 libonig5:arm64 libssl-dev:arm64

.PHONY: dist deps-dist

deps-dist:
	@if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	dpkg --print-foreign-architectures | grep -qx arm64 || { $$SUDO dpkg --add-architecture arm64 && $$SUDO apt-get update -q; }; \
	missing=""; for p in $(DIST_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $$missing; fi

dist: deps-dist
	sh deploy/dist/dist.sh $(DIST_DIR) $(VERSION) $(DIST_ARCHS)
	sh deploy/dist/test.sh $(DIST_DIR)
