# Benchmarks: `make bench` builds wmap with optimisation into $(BENCH_BUILD), runs every
# benchmark of tests/bench/README.md on this machine, prints the table and writes
# $(BUILD)/bench/results.json and results.md. Included by the top-level Makefile.
#
#   make bench                   everything (about 6-8 minutes on 2 busy cores)
#   make bench BENCH_REPS=5      more repetitions of the webhook runs (median over them)
#   make bench BENCH_ONLY=scale,plugin   some benchmarks (webhook,startup,plugin,live,big,scale,admit,hostile,instructions,swap,wide,audit,audit-live,fit,workload-metrics,gang)
#   make bench BENCH_NICE=-10    every benchmark process ahead of other work (root; shared machines)
#   make bench-profile           callgrind profiles of the in-process paths (top functions)
#   make bench-smoke             every step once on small inputs with build/'s binaries, no goals (1-2 min)
#   make bench-guard             instructions per review and per component against ceilings (make check)

BENCH_BUILD ?= build-bench
BENCH_OUT   ?= $(BUILD)/bench
BENCH_REPS  ?= 3
BENCH_ONLY  ?= webhook,startup,plugin,live,big,scale,admit,hostile,instructions,swap,wide,audit,audit-live,fit,workload-metrics,gang
BENCH_NICE  ?= 0
# Debian 12 packages the benchmarks need besides the build's (make deps).
BENCH_PKGS  := nghttp2-client hyperfine time python3 openssl curl valgrind

.PHONY: bench bench-deps bench-build bench-profile bench-smoke bench-guard

bench-deps:
	@missing=""; for p in $(DEB_PKGS) $(BENCH_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $$missing; \
	fi

# An optimised build of its own, so that benchmarks never race a debug or sanitizer build
# in build/ (and results do not depend on what someone built there last).
bench-build: bench-deps
	@$(MAKE) --no-print-directory BUILD=$(BENCH_BUILD) OPT=-O2 SANITIZE= \
	  $(BENCH_BUILD)/libwmap.a $(BENCH_BUILD)/kubectl-wmap $(BENCH_BUILD)/wmap-webhook \
	  $(BENCH_BUILD)/apiserver-sim $(BENCH_BUILD)/sim-testhook $(BENCH_BUILD)/bench/wmap-bench

bench: bench-build
	python3 tests/bench/run.py --bin $(BENCH_BUILD) --out $(BENCH_OUT) --reps $(BENCH_REPS) \
	  --only $(BENCH_ONLY) --nice $(BENCH_NICE)

# Every step of make bench once, on small inputs, with the binaries of $(BUILD) (no build of
# its own, no goal judged): fails when a step breaks, so that no benchmark rots unseen. About
# 1-2 minutes on 2 cores.
bench-smoke: bench-deps all $(BUILD)/wmap-webhook $(BUILD)/apiserver-sim $(BUILD)/sim-testhook $(BUILD)/bench/wmap-bench
	python3 tests/bench/run.py --smoke --bin $(BUILD) --out $(BUILD)/bench-smoke --only $(BENCH_ONLY)

bench-profile: bench-build
	sh tests/bench/profile.sh $(BENCH_BUILD) $(BENCH_OUT)/profile

# callgrind counts of the four in-process reviews and the resolve per component, each
# against a ceiling of about twice its figure (tests/bench/instructions.sh); ~20 s.
bench-guard: $(BUILD)/bench/wmap-bench
	@sh tests/bench/instructions.sh $(BUILD)

# The benchmark driver: generated inputs and in-process timings against libwmap.a.
$(BUILD)/bench/wmap-bench: tests/bench/wmap-bench.c $(LIBWMAP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ tests/bench/wmap-bench.c $(LIBWMAP) $(CORE_LIBS)
