# wmap: one plain Makefile. `make demo` and `make check` do all the set-up on Debian 12.
#
#   make            libwmap.a, libwmap-kube.a and kubectl-wmap into $(BUILD)/
#   make deps       install the Debian packages that are missing (apt-get; sudo when not root)
#   make demo       deps + build + describe the bundled sample workloads offline
#   make try        the whole add-on against the API server simulator: a short tour, then stops
#   make check      deps + build + every test (unit, golden, compatibility, catalog vs CRDs, end-to-end)
#   make check SANITIZE=1   the same under ASan and UBSan (separate build folder)
#   make lint       the house rules (tests/lint/README.md); part of make check
#   make format     applies .clang-format to the sources (clang-format 14)
#   make valgrind   unit tests and plugin commands under valgrind
#   make image      the wmap-webhook OCI image (root, buildah); make image-test runs it from its files
#   make install PREFIX=/usr/local

BUILD    ?= build
PREFIX   ?= /usr/local
CC       ?= cc
VERSION  := 0.1.0
SHARED   ?= ../shared

ifeq ($(SANITIZE),1)
BUILD    := $(BUILD)-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif

WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter -Wno-format-truncation
ifneq ($(filter true 1,$(CI) $(WERROR)),)
WARN     += -Werror
endif
OPT      ?= -O2
CFLAGS   += -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(OPT) -g $(WARN) $(SANFLAGS) \
            -Iinclude -MMD -MP -DWMAP_VERSION='"$(VERSION)"'
LDFLAGS  += $(SANFLAGS)

# libcurl is not linked: src/kube/curl_lazy.c opens it when a live command first needs it.
CORE_LIBS := -ljq -lonig -ljansson -lyaml -lm -lpthread -ldl

# Debian 12 packages the build and the tests need (checked one by one by `make deps`).
DEB_PKGS := gcc make pkg-config libyaml-dev libjansson-dev libjq-dev libonig-dev \
            libcurl4-openssl-dev libmicrohttpd-dev libgnutls28-dev libssl-dev \
            libcriterion-dev openssl jq curl python3 python3-yaml clang-format-14 tmux buildah

# Three layers (src/README.md): the utilities (src/util/) and the resolver core (src/) make
# libwmap.a; the Kubernetes API client (src/kube/) makes libwmap-kube.a, linked only by the
# programs that talk to a cluster (before libwmap.a, whose utilities it uses).
CORE_SRC  := $(wildcard src/*.c src/util/*.c)
KUBE_SRC  := $(wildcard src/kube/*.c)
# Objects live under $(BUILD)/obj so that no folder is named like a binary (kubectl-wmap).
CORE_OBJ  := $(CORE_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/catalog_data.o
KUBE_OBJ  := $(KUBE_SRC:%.c=$(BUILD)/obj/%.o)
PLUGIN_SRC := $(wildcard kubectl-wmap/*.c)
PLUGIN_OBJ := $(PLUGIN_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_SRC  := $(wildcard tests/unit/*.c)
UNIT_OBJ  := $(UNIT_SRC:%.c=$(BUILD)/obj/%.o)
COMPAT_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/compat/*.c) tests/unit/helpers.c)
CATALOG   := $(sort $(wildcard catalog/*.yaml))

CONFORMANCE := $(BUILD)/conformance
LIBWMAP   := $(BUILD)/libwmap.a
LIBKUBE   := $(BUILD)/libwmap-kube.a
PLUGIN    := $(BUILD)/kubectl-wmap
UNIT      := $(BUILD)/unit-tests
COMPAT    := $(BUILD)/compat-tests

.PHONY: all deps e2e-deps demo try check unit compat golden conformance catalog-crds e2e install uninstall clean valgrind lint format
.DEFAULT_GOAL := all

all: $(LIBWMAP) $(LIBKUBE) $(PLUGIN)

deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $$missing; \
	fi

# What only the end-to-end tests use: Debian's prometheus (prometheus and promtool, for
# webhook-workload-metrics). Not fatal: without it that scenario says it is skipped.
E2E_DEB_PKGS := prometheus
e2e-deps:
	@missing=""; for p in $(E2E_DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing for the e2e tests:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  { $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $$missing; } || \
	    echo "e2e-deps: could not install$$missing; the scenarios that need it will be skipped"; \
	fi

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# The catalog is embedded into the binaries: each YAML file becomes a C string.
$(BUILD)/catalog_data.c: $(CATALOG) catalog/embed.sh
	@mkdir -p $(dir $@)
	sh catalog/embed.sh $(CATALOG) > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/catalog_data.o: $(BUILD)/catalog_data.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(LIBWMAP): $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIBKUBE): $(KUBE_OBJ)
	@rm -f $@
	ar rcs $@ $^

# deploy/'s manifests are embedded into the plugin for `kubectl wmap install` (deploy/embed.sh).
DEPLOY_FILES := $(sort $(wildcard deploy/base/*.yaml)) deploy/overlays/cert-manager/certificates.yaml
$(BUILD)/deploy_data.c: $(DEPLOY_FILES) deploy/embed.sh
	@mkdir -p $(dir $@)
	sh deploy/embed.sh $(DEPLOY_FILES) > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/deploy_data.o: $(BUILD)/deploy_data.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# libcrypto is not linked either: install's certificates (kubectl-wmap/install_certs.c) open it
# on first use (src/kube/crypto_lazy.c). make dist links it statically instead (deploy/dist/dist.sh
# sets PLUGIN_LIBS and CRYPTO_LINKED=1, which calls it directly).
PLUGIN_LIBS ?= $(CORE_LIBS)
ifeq ($(CRYPTO_LINKED),1)
CFLAGS += -DWMAP_CRYPTO_LINKED
endif
$(PLUGIN): $(PLUGIN_OBJ) $(BUILD)/obj/deploy_data.o $(LIBKUBE) $(LIBWMAP)
	$(CC) $(LDFLAGS) -o $@ $(PLUGIN_OBJ) $(BUILD)/obj/deploy_data.o $(LIBKUBE) $(LIBWMAP) $(PLUGIN_LIBS)

$(UNIT): $(UNIT_OBJ) $(LIBKUBE) $(LIBWMAP)
	$(CC) $(LDFLAGS) -o $@ $(UNIT_OBJ) $(LIBKUBE) $(LIBWMAP) $(CORE_LIBS) -lcriterion

$(COMPAT): $(COMPAT_OBJ) $(LIBWMAP)
	$(CC) $(LDFLAGS) -o $@ $(COMPAT_OBJ) $(LIBWMAP) $(CORE_LIBS) -lcriterion

$(CONFORMANCE): $(BUILD)/obj/tests/conformance/compare.o $(LIBWMAP)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBWMAP) $(CORE_LIBS)

demo: deps
	@$(MAKE) --no-print-directory all
	@sh tests/demo.sh $(PLUGIN)

# The simulator, wmap-webhook against it and a scripted tour (tests/try.sh); everything it
# starts is stopped at the end. Its targets come from the included makefiles below.
try: deps
	@$(MAKE) --no-print-directory all $(BUILD)/apiserver-sim $(BUILD)/wmap-webhook
	@SIM=$(abspath $(BUILD)/apiserver-sim) WEBHOOK=$(abspath $(BUILD)/wmap-webhook) \
	  PLUGIN=$(abspath $(PLUGIN)) bash tests/try.sh

# Unit tests run from the repository root; they read tests/fixtures and catalog/.
unit: $(UNIT)
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp $(UNIT) --jobs 2

# Compatibility with upstream's own definitions and recordings, in $(SHARED)/interop. A clone
# without it skips them with one line; `make check SHARED=/some/empty/dir` shows that path.
compat: $(COMPAT)
	@if [ -d "$(SHARED)/interop" ]; then \
	  WMAP_SHARED=$(SHARED) LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp $(COMPAT) --jobs 2; \
	else \
	  echo "compat: skipped: upstream's definitions and recordings are not here ($(SHARED)/interop is absent; set SHARED=DIR)"; \
	fi

golden: $(PLUGIN)
	sh tests/golden/run.sh $(PLUGIN)

# Our catalog next to upstream's on upstream's objects (skipped, exit 77, without $(SHARED)/interop).
conformance: $(CONFORMANCE)
	@$(CONFORMANCE) $(SHARED) $(BUILD)/conformance.md; rc=$$?; [ $$rc = 0 ] || [ $$rc = 77 ]

# Every catalog definition against its framework's real CRD, and a planted error that must
# fail (tests/catalog-crds/; skipped without $(SHARED)/interop/crds).
catalog-crds: $(PLUGIN)
	@python3 tests/catalog-crds/check.py $(PLUGIN) $(SHARED)
	@sh tests/catalog-crds/planted.sh $(PLUGIN) $(SHARED)

check: deps e2e-deps
	@$(MAKE) --no-print-directory all $(UNIT) $(COMPAT) $(CONFORMANCE)
	@$(MAKE) --no-print-directory lint unit compat golden conformance catalog-crds bench-guard e2e check-image

# Symbols (nm), third-party includes, header self-test, banned functions, format.
CLANG_FORMAT ?= clang-format-14
lint: $(LIBWMAP) $(LIBKUBE)
	@sh tests/lint/lint.sh $(BUILD) "$(CC)" $(CLANG_FORMAT)

# Rewrites the product's sources in place as .clang-format says.
format:
	$(CLANG_FORMAT) -i --style=file $$(git ls-files 'src/*.c' 'src/*.h' 'include/*.h' \
	  'kubectl-wmap/*.c' 'kubectl-wmap/*.h' 'webhook/*.c' 'webhook/*.h')

valgrind: all $(UNIT)
	valgrind --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite $(UNIT) --jobs 1
	sh tests/golden/run.sh "valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite $(PLUGIN)"

install: $(PLUGIN)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(PLUGIN) $(DESTDIR)$(PREFIX)/bin/kubectl-wmap
	install -m 0755 kubectl-wmap/kubectl_complete-wmap $(DESTDIR)$(PREFIX)/bin/kubectl_complete-wmap

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/kubectl-wmap $(DESTDIR)$(PREFIX)/bin/kubectl_complete-wmap

clean:
	rm -rf build build-san

# The webhook (webhook/), the API server simulator and the end-to-end harness (tests/).
-include webhook/webhook.mk
# Benchmarks (make bench) and hardening (make fuzz, allocation-failure and hostile-client tests).
-include tests/bench/bench.mk
-include tests/fuzz/fuzz.mk
-include tests/apiserver-sim/sim.mk
# The container image (make image, make image-test) and the release archives (make dist).
-include deploy/image/image.mk
-include deploy/dist/dist.mk
e2e::

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
