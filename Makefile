# schedbed - one entry point. `make help` lists the targets.
#
# Builds go to $(B)/<variant>/ (B=build unless set): `release` (-O2 -flto, what benchmarks use), `tsan` and `asan`
# (sanitizer builds of the stress binary). Every target that compiles or runs depends on
# `deps`, which installs missing Debian packages, so `make bench` and `make test` work as the
# first command on a fresh machine.

SHELL := /bin/bash
CC ?= gcc
ifeq ($(origin CC),default)
CC := gcc
endif
PYTHON := /usr/bin/python3
export MPLBACKEND := Agg

B ?= build
POLICY ?= hybrid
WORKLOAD ?= oltp
THREADS ?=
ARGS ?=
RUN ?=

PKG_CFLAGS = $(shell pkg-config --cflags liburcu-cds liburcu-memb hwloc 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs liburcu-cds liburcu-memb hwloc 2>/dev/null) -lm

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -pthread -g $(WARN) $(PKG_CFLAGS)

CORE_SRC := $(wildcard core/*.c)
POLICY_SRC := $(wildcard policies/*.c)
WORKLOAD_SRC := $(wildcard workloads/*.c)
LIB_SRC := $(CORE_SRC) $(POLICY_SRC) $(WORKLOAD_SRC)
HDRS := $(wildcard core/*.h policies/*.h workloads/*.h harness/*.h)

.PHONY: all deps test unit stress bench bench-core clean help schedbed compare plot sweep peers reproduce sweep-test fuzz fuzz-slice

## all         build the library (make schedbed for the program)
all: deps $(B)/release/libschedbed.a

## deps        install the Debian packages the project needs (only those missing; every target runs it)
deps:
	@scripts/deps.sh

# ---- variants ----
define variant
$(B)/$(1)/%.o: %.c $(HDRS) | deps
	@mkdir -p $$(dir $$@)
	$$(CC) $$(BASE_CFLAGS) $(2) -c $$< -o $$@

$(B)/$(1)/libschedbed.a: $$(patsubst %.c,$(B)/$(1)/%.o,$$(LIB_SRC))
	@rm -f $$@
	gcc-ar rcs $$@ $$^
endef

$(eval $(call variant,release,-O2 -flto=auto))
# -Wno-tsan: ThreadSanitizer does not model standalone fences. Every access the core's fences
# order is itself atomic (worker state, queue indices), so the sanitizer reports no false race
# for them; it simply does not check the suspend/wake liveness argument (models/ does).
$(eval $(call variant,tsan,-O1 -fsanitize=thread -fno-omit-frame-pointer -Wno-tsan))
$(eval $(call variant,asan,-O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined))

# ---- the schedbed program ----
HARNESS_SRC := $(wildcard harness/*.c)
# Compiled into meta.json: where the sources are (for git) and the flags the program was built with.
HARNESS_DEFS := -DSB_SRCDIR='"$(CURDIR)"' -DSB_BUILD_CFLAGS='"$(strip $(BASE_CFLAGS)) -O2 -flto=auto"'

$(B)/release/harness/%.o: harness/%.c $(HDRS) | deps
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O2 -flto=auto $(HARNESS_DEFS) -c $< -o $@

$(B)/release/schedbed: $(patsubst %.c,$(B)/release/%.o,$(HARNESS_SRC)) $(B)/release/libschedbed.a
	$(CC) $(BASE_CFLAGS) -O2 -flto=auto $^ $(PKG_LIBS) -o $@

## schedbed    build the program into build/release/schedbed (then: schedbed --help, schedbed list)
schedbed: deps $(B)/release/schedbed

# The same program built with each sanitizer, for the stress matrix.
define sanitized_program
$(B)/$(1)/harness/%.o: BASE_CFLAGS += $$(HARNESS_DEFS)
$(B)/$(1)/schedbed: $$(patsubst %.c,$(B)/$(1)/%.o,$$(HARNESS_SRC)) $(B)/$(1)/libschedbed.a
	$$(CC) $$(BASE_CFLAGS) $(2) $$^ $$(PKG_LIBS) -o $$@
endef
$(eval $(call sanitized_program,tsan,-O1 -fsanitize=thread -fno-omit-frame-pointer -Wno-tsan))
$(eval $(call sanitized_program,asan,-O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined))

# ---- tests ----
TEST_SRC := $(wildcard tests/*.c)

# Test sources are compiled without LTO: Criterion registers tests in ELF sections that
# link-time optimisation would discard as unused. The library is still linked with LTO.
$(B)/tests/%.o: tests/%.c tests/common.h $(HDRS) | deps
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O2 -Wno-missing-field-initializers -c $< -o $@

$(B)/tests/schedbed-tests: $(patsubst tests/%.c,$(B)/tests/%.o,$(TEST_SRC)) $(B)/release/libschedbed.a
	$(CC) $(BASE_CFLAGS) -O2 -flto=auto $^ $(PKG_LIBS) -lcriterion -o $@

# tests/test_cli.c runs the program itself: it must exist first, and the test must know where.
$(B)/tests/test_cli.o: BASE_CFLAGS += -DSCHEDBED_BIN='"$(abspath $(B))/release/schedbed"' -DSB_SRCDIR='"$(CURDIR)"'
$(B)/tests/schedbed-tests: | $(B)/release/schedbed

## unit        the Criterion suite alone
unit: deps $(B)/tests/schedbed-tests
	$(B)/tests/schedbed-tests --jobs 2

# ---- sanitizer stress (a plain binary: Criterion forks and ThreadSanitizer cannot follow) ----
define stress_bin
$(B)/$(1)/stress: tests/stress/stress.c $(B)/$(1)/libschedbed.a
	$$(CC) $$(BASE_CFLAGS) $(2) $$^ $$(PKG_LIBS) -o $$@
endef
$(eval $(call stress_bin,tsan,-O1 -fsanitize=thread -fno-omit-frame-pointer -Wno-tsan))
$(eval $(call stress_bin,asan,-O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined))

STRESS_ARGS ?= --threads 1,2,4,8 --chaos 7
export TSAN_OPTIONS := halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/stress/tsan.supp
export ASAN_OPTIONS := detect_leaks=1 abort_on_error=1
export UBSAN_OPTIONS := print_stacktrace=1 halt_on_error=1

## stress      the stress binary, then every policy x workload x thread count, under ThreadSanitizer and under AddressSanitizer+LeakSanitizer
stress: deps $(B)/tsan/stress $(B)/asan/stress $(B)/tsan/schedbed $(B)/asan/schedbed
	$(B)/tsan/stress $(STRESS_ARGS)
	$(B)/asan/stress $(STRESS_ARGS)
	$(PYTHON) tests/stress/matrix.py --schedbed $(B)/tsan/schedbed --chaos 11 --scale 4 $(MATRIX_ARGS)
	$(PYTHON) tests/stress/matrix.py --schedbed $(B)/asan/schedbed --chaos 12 --scale 4 $(MATRIX_ARGS)

## sweep-test  manifests, the local runner and collect (tests/sweeps/), then a real single-node Slurm running a manifest as a job array
sweep-test: deps $(B)/release/schedbed
	$(PYTHON) tests/sweeps/test_sweep.py --schedbed $(B)/release/schedbed
	$(PYTHON) tests/sweeps/slurm_test.py --schedbed $(B)/release/schedbed

## test        everything CI runs: the Criterion suite, the sanitizer stress runs, the model check, the sweep tests, a fuzz slice
test: unit stress model-check sweep-test fuzz-slice

# ---- configuration fuzz (scripts/fuzz.py) ----
FUZZ_COUNT ?= 500
FUZZ_SEED ?= 1
## fuzz        random valid configurations from schedbed list, with and without --check and --chaos: [FUZZ_COUNT=500] [FUZZ_SEED=1]; failures as repro commands in results/fuzz-failures.txt
fuzz: deps $(B)/release/schedbed
	@mkdir -p results
	$(PYTHON) scripts/fuzz.py --schedbed $(B)/release/schedbed --count $(FUZZ_COUNT) --seed $(FUZZ_SEED) \
		--failures results/fuzz-failures.txt

## fuzz-slice  a fixed-seed slice of the fuzz, under a minute (part of make test)
fuzz-slice: deps $(B)/release/schedbed
	$(PYTHON) scripts/fuzz.py --schedbed $(B)/release/schedbed --count 40 --seed 1 --duration 0.3

# ---- runs and plots ----
SCHEDBED := $(B)/release/schedbed
REPS ?= 3
RATE_PARAM ?= rate
RATES ?= 500,1000,2000,4000,8000
POLICIES ?=
STAMP = $$(date -u +%Y%m%dT%H%M%SZ)

## bench       one run and its plots: make bench POLICY=hybrid [WORKLOAD=oltp] [THREADS=n] [ARGS='--set k=v ...']
bench: deps $(SCHEDBED)
	set -o pipefail; log=$$(mktemp); trap 'rm -f "$$log"' EXIT; \
	$(SCHEDBED) run --policy $(POLICY) --workload $(WORKLOAD) $(if $(THREADS),--threads $(THREADS)) $(ARGS) | tee "$$log"; \
	$(PYTHON) scripts/plot_run.py "$$(sed -n 's/^results: //p' "$$log")"

## compare     every policy on WORKLOAD, same seed, alternating, REPS rounds: results/compare-<time>/
compare: deps $(SCHEDBED)
	set -e; d=results/compare-$(STAMP); \
	$(PYTHON) scripts/compare.py --run --schedbed $(SCHEDBED) --workload $(WORKLOAD) --reps $(REPS) \
		$(if $(POLICIES),--policies $(POLICIES)) $(if $(THREADS),--threads $(THREADS)) "$$d" -- \
		$(if $(findstring --duration,$(ARGS))$(findstring --jobs,$(ARGS)),,--duration 5) $(ARGS); \
	gnuplot -e "dir='$$d'" scripts/compare.gp; \
	echo "compare: $$d"

## plot        the plots of one run: make plot RUN=results/<run-id>
plot: deps
	@test -n "$(RUN)" || { echo "plot: give the run directory, e.g. make plot RUN=results/<run-id>"; exit 2; }
	$(PYTHON) scripts/plot_run.py $(RUN)

## sweep       p99 latency against offered load: [WORKLOAD=oltp] [RATE_PARAM=rate] [RATES=500,..,8000] [POLICIES=a,b]
sweep: deps $(SCHEDBED)
	$(PYTHON) scripts/sweep.py load --schedbed $(SCHEDBED) --workload $(WORKLOAD) --param $(RATE_PARAM) --rates $(RATES) \
		$(if $(POLICIES),--policies $(POLICIES)) $(if $(THREADS),--threads $(THREADS)) --out results/sweep-$(STAMP) -- \
		$(if $(findstring --duration,$(ARGS))$(findstring --jobs,$(ARGS)),,--duration 3) $(ARGS)

# ---- model checking (models/README.md) ----
.PHONY: model-check
## model-check spin on models/: suspend/wake and watcher protocols verify, broken variants are refuted
model-check: deps
	CC="$(CC)" models/check.sh $(B)/models

# ---- peers and the study ----
## peers       the OpenMP and oneTBB versions of the microbenchmarks, for side-by-side figures
peers: deps $(B)/release/peers_omp $(B)/release/peers_tbb
$(B)/release/peers_omp: peers/peers_omp.c | deps
	@mkdir -p $(dir $@)
	$(CC) -O2 -fopenmp $< -o $@
$(B)/release/peers_tbb: peers/peers_tbb.cpp | deps
	@mkdir -p $(dir $@)
	g++ -O2 -std=c++17 $< -ltbb -o $@

EXPERIMENTS ?=
REPRODUCE_ARGS ?=
UPDATE ?=
## reproduce   every experiment behind PAPER.md (sweeps/*.json; about half an hour) into a new results/reproduce-<time>/,
##             compared with results/paper/: [EXPERIMENTS='a b'] [REPRODUCE_ARGS='--reps 1 --duration 1'] [UPDATE=1 replaces results/paper/]
reproduce: deps $(SCHEDBED) peers
	$(PYTHON) scripts/experiments.py --schedbed $(SCHEDBED) $(if $(UPDATE),--update-paper) $(REPRODUCE_ARGS) $(EXPERIMENTS)

## clean       remove the build directory (results/ stays)
clean:
	rm -rf $(B)

help:
	@sed -n 's/^## //p' Makefile

# ---- the hot-path benchmark ----
BENCH_CORE_ARGS ?=
## bench-core  the hot path next to oneTBB and libgomp: chain and fib(32) at 1 and 2 workers, alternating, >= 5 runs each: results/bench-core/<time>/
bench-core: deps $(SCHEDBED) peers
	$(PYTHON) scripts/bench_core.py --schedbed $(SCHEDBED) $(BENCH_CORE_ARGS)
