# Hardening: libFuzzer targets, allocation-failure sweeps and hostile-client tests.
# Included by the top-level Makefile (uses its $(BUILD), $(CFLAGS), $(LIBWMAP), $(CORE_LIBS)).
#
#   make fuzz [FUZZ_SECONDS=60]   every fuzz target for FUZZ_SECONDS each (clang, libFuzzer,
#                                 ASan+UBSan; core sources rebuilt into build-fuzz/)
#   make fuzz-smoke               the same for ~10 s each (part of make check)
#   make fuzz-merge               a campaign's new inputs, minimised, into tests/fuzz/found/ (commit them)
#   make fuzz-<target>            one target (yaml, definition, admission, patch, quantity, policy, json,
#                                 kubeconfig, kube_status, exec_credential, kube_list, policy_objects,
#                                 watch_event)
#   make allocfail                the allocation-failure sweep (tests/unit/test_allocfail.c)
#   make hostile                  hostile and broken clients against build/wmap-webhook

FUZZ_BUILD   ?= build-fuzz
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 10
FUZZ_FLAGS   ?=
FUZZ_TARGETS := yaml definition admission patch quantity policy kubeconfig json kube_status \
                exec_credential kube_list policy_objects watch_event
FUZZ_DEB     := clang libclang-rt-14-dev

FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS  := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -O1 -g -Wall -Wno-unused-parameter \
                -Iinclude -Itests/fuzz -DWMAP_VERSION='"$(VERSION)"' -MMD -MP \
                -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION $(FUZZ_SAN)
# The client too: fuzz-kubeconfig reads kubeconfig documents.
FUZZ_CORE_OBJ := $(CORE_SRC:%.c=$(FUZZ_BUILD)/obj/%.o) $(KUBE_SRC:%.c=$(FUZZ_BUILD)/obj/%.o) \
                 $(FUZZ_BUILD)/obj/catalog_data.o
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz-%)
# Where libFuzzer writes new inputs (the checked-in corpus under tests/fuzz/corpus stays
# read-only) and crashes.
FUZZ_WORK    := $(FUZZ_BUILD)/work
FUZZ_ENV     := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 \
                LSAN_OPTIONS=suppressions=$(abspath tests/fuzz/lsan.supp):print_suppressions=0 \
                UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

.PHONY: fuzz fuzz-smoke fuzz-deps fuzz-build fuzz-merge allocfail hostile $(FUZZ_TARGETS:%=fuzz-%) \
        $(FUZZ_TARGETS:%=fuzz-smoke-%) $(FUZZ_TARGETS:%=fuzz-merge-%)

fuzz-deps: deps
	@missing=""; for p in $(FUZZ_DEB); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $$missing; \
	fi

# Core objects: coverage instrumentation and sanitizers, nothing else changed.
$(FUZZ_BUILD)/obj/src/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/catalog_data.c: $(CATALOG) catalog/embed.sh
	@mkdir -p $(dir $@)
	sh catalog/embed.sh $(CATALOG) > $@.tmp && mv $@.tmp $@

$(FUZZ_BUILD)/obj/catalog_data.o: $(FUZZ_BUILD)/catalog_data.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_BUILD)/obj/tests/fuzz/%.o: tests/fuzz/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/fuzz-%: $(FUZZ_BUILD)/obj/tests/fuzz/fuzz_%.o $(FUZZ_BUILD)/obj/tests/fuzz/jsonpatch.o $(FUZZ_CORE_OBJ)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(CORE_LIBS)

# Keep the objects: make would delete them as intermediates of the pattern rules.
.SECONDARY: $(FUZZ_CORE_OBJ) $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/obj/tests/fuzz/fuzz_%.o) \
            $(FUZZ_BUILD)/obj/tests/fuzz/jsonpatch.o

fuzz-build: fuzz-deps
	@$(MAKE) --no-print-directory $(FUZZ_BINS)

# One run of a target: corpus in $(FUZZ_WORK)/<t> (seeded from tests/fuzz/corpus/<t>, the
# inputs earlier campaigns found in tests/fuzz/found/<t> and the reproducers of fixed bugs in
# tests/fuzz/regress/<t>), crashes as $(FUZZ_WORK)/<t>-crash-*. Exits non-zero on a finding.
# $(3), when set, is a prefix for the fuzzer's command (the campaigns' /usr/bin/time).
define fuzz_run
	@mkdir -p $(FUZZ_WORK)/$(1)
	@echo "fuzz $(1): $(2) s"
	@$(FUZZ_ENV) $(3) $(FUZZ_BUILD)/fuzz-$(1) -max_total_time=$(2) -timeout=10 -rss_limit_mb=2048 \
	  -max_len=65536 -print_final_stats=1 $(FUZZ_FLAGS) \
	  $(if $(wildcard tests/fuzz/dict/$(1).dict),-dict=tests/fuzz/dict/$(1).dict) \
	  -artifact_prefix=$(FUZZ_WORK)/$(1)- $(FUZZ_WORK)/$(1) tests/fuzz/corpus/$(1) \
	  $(wildcard tests/fuzz/found/$(1)) $(wildcard tests/fuzz/regress/$(1)) \
	  > $(FUZZ_WORK)/$(1).log 2>&1 \
	  || { tail -n 60 $(FUZZ_WORK)/$(1).log; echo "FAIL fuzz $(1): see $(FUZZ_WORK)/$(1).log"; exit 1; }
	@grep -h '^stat::number_of_executed_units\|^#.*DONE' $(FUZZ_WORK)/$(1).log | tail -n 1 | sed 's/^/  /'
endef

# A campaign (make fuzz, make fuzz-<t>) adds its CPU time to tests/fuzz/cpu-time.tsv and the
# cumulative table of tests/fuzz/README.md (tests/fuzz/campaign.py); the smoke runs of make
# check do not. FUZZ_RECORD=0 leaves both alone.
FUZZ_RECORD ?= 1
$(FUZZ_TARGETS:%=fuzz-%): fuzz-%: fuzz-build
	$(call fuzz_run,$*,$(FUZZ_SECONDS),/usr/bin/time -f '%U %S' -o $(FUZZ_WORK)/$*.time)
	@if [ "$(FUZZ_RECORD)" = 1 ]; then python3 tests/fuzz/campaign.py record $* $(FUZZ_WORK)/$*.time $(FUZZ_WORK)/$*.log; fi

# After a campaign: the inputs of $(FUZZ_WORK)/<t> that add coverage beyond the seeds,
# minimised by libFuzzer's -merge=1, into tests/fuzz/found/<t> (at most 120 files and 256 KB
# per target, smallest first), to be committed, so that the next campaign starts from there.
$(FUZZ_TARGETS:%=fuzz-merge-%): fuzz-merge-%: fuzz-build
	@rm -rf $(FUZZ_WORK)/$*.merged && mkdir -p $(FUZZ_WORK)/$*.merged $(FUZZ_WORK)/$*
	@$(FUZZ_ENV) $(FUZZ_BUILD)/fuzz-$* -merge=1 -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
	  $(FUZZ_WORK)/$*.merged tests/fuzz/corpus/$* $(wildcard tests/fuzz/found/$*) $(FUZZ_WORK)/$* \
	  > $(FUZZ_WORK)/$*.merge.log 2>&1 \
	  || { tail -n 30 $(FUZZ_WORK)/$*.merge.log; echo "FAIL fuzz-merge $*"; exit 1; }
	@python3 tests/fuzz/campaign.py keep $* $(FUZZ_WORK)/$*.merged

fuzz-merge: $(FUZZ_TARGETS:%=fuzz-merge-%)
	@python3 tests/fuzz/campaign.py table

$(FUZZ_TARGETS:%=fuzz-smoke-%): fuzz-smoke-%: fuzz-build
	$(call fuzz_run,$*,$(FUZZ_SMOKE_SECONDS))

fuzz: $(FUZZ_TARGETS:%=fuzz-%)

fuzz-smoke: $(FUZZ_TARGETS:%=fuzz-smoke-%)

# Allocation failures: the Criterion tests of tests/unit/test_allocfail.c run inside
# unit-tests with a jansson-level hook; this binary adds tests/fuzz/allocfail_interpose.c,
# which fails libwmap's own malloc/calloc/realloc/strdup (and libyaml's) as well. Under
# SANITIZE=1 the interposer would fight ASan's allocator, so only the jansson hook runs.
ALLOCFAIL := $(BUILD)/allocfail-tests
ifeq ($(SANITIZE),1)
ALLOCFAIL_OBJ := $(BUILD)/obj/tests/unit/test_allocfail.o $(BUILD)/obj/tests/unit/helpers.o
else
ALLOCFAIL_OBJ := $(BUILD)/obj/tests/unit/test_allocfail.o $(BUILD)/obj/tests/unit/helpers.o \
                 $(BUILD)/obj/tests/fuzz/allocfail_interpose.o
endif

$(ALLOCFAIL): $(ALLOCFAIL_OBJ) $(LIBWMAP)
	$(CC) $(LDFLAGS) -o $@ $(ALLOCFAIL_OBJ) $(LIBWMAP) $(CORE_LIBS) -lcriterion -ldl

allocfail: $(ALLOCFAIL)
	WMAP_SHARED=$(SHARED) $(ALLOCFAIL) --jobs 2

# ASan and UBSan make the server about 3x slower: the 100 ms answer limit scales with it.
hostile: $(WEBHOOK)
	HOSTILE_LIMIT_MS=$(if $(filter 1,$(SANITIZE)),400,100) python3 tests/hostile/hostile.py $(WEBHOOK)

# The fuzz build (build-fuzz/) is ASan+UBSan whatever SANITIZE says: make check SANITIZE=1
# would only run the same smoke again, so it says so and skips it.
e2e:: $(if $(wildcard tests/unit/test_allocfail.c),allocfail) \
      $(if $(wildcard tests/hostile/hostile.py),hostile) \
      $(if $(filter 1,$(SANITIZE)),fuzz-smoke-skip,fuzz-smoke)

.PHONY: fuzz-smoke-skip
fuzz-smoke-skip:
	@echo "fuzz-smoke: skipped under SANITIZE=1 (build-fuzz/ is the same ASan+UBSan build that make check runs)"

-include $(shell find $(FUZZ_BUILD) -name '*.d' 2>/dev/null)
