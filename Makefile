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

PKG_CFLAGS = $(shell pkg-config --cflags liburcu-cds liburcu-memb hwloc zlib 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs liburcu-cds liburcu-memb hwloc zlib 2>/dev/null) -lm

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter -Werror=implicit-function-declaration
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -pthread -g $(WARN) $(PKG_CFLAGS)

CORE_SRC := $(wildcard core/*.c)
POLICY_SRC := $(wildcard policies/*.c)
WORKLOAD_SRC := $(wildcard workloads/*.c)
LIB_SRC := $(CORE_SRC) $(POLICY_SRC) $(WORKLOAD_SRC)
HDRS := $(wildcard core/*.h policies/*.h workloads/*.h harness/*.h)

.PHONY: all deps test check claims layers unit canaries stress clang valgrind bench bench-core clean help schedbed compare ab plot sweep readme-test peers reproduce sweep-test sim-test validate-sim calibrate metg scale carry fuzz fuzz-slice

## all         build the program, build/release/schedbed (what a plain `make` does), and its library
all: deps $(B)/release/schedbed

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

# The flag lists live in variables: make splits $(call ...) arguments at commas, so a literal
# `-fsanitize=address,undefined` passed to call would reach the compiler as `-fsanitize=address`.
RELEASE_FLAGS := -O2 -flto=auto
TSAN_FLAGS := -O1 -fsanitize=thread -fno-omit-frame-pointer -Wno-tsan
ASAN_FLAGS := -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# A second compiler: clang's warnings (as errors) on every file, and the matrix through its build.
CLANG_FLAGS := -O2 -Werror
$(B)/clang/%: CC := clang

# Policies see the core's own fields of jobs and tasks under names that say so (core/sb.h).
$(foreach v,release tsan asan clang,$(eval $(B)/$(v)/policies/%.o: BASE_CFLAGS += -DSB_POLICY_SIDE))
$(eval $(call variant,release,$$(RELEASE_FLAGS)))
# -Wno-tsan: ThreadSanitizer does not model standalone fences. Every access the core's fences
# order is itself atomic (worker state, queue indices), so the sanitizer reports no false race
# for them; it simply does not check the suspend/wake liveness argument (models/ does).
$(eval $(call variant,tsan,$$(TSAN_FLAGS)))
$(eval $(call variant,asan,$$(ASAN_FLAGS)))
$(eval $(call variant,clang,$$(CLANG_FLAGS)))

# ---- the schedbed program ----
HARNESS_SRC := $(wildcard harness/*.c)
# Compiled into meta.json: where the sources are (for the cost tables), the commit they are and
# whether the tree differed from it (SOURCE_STATE), and the flags the program was built with.
SOURCE_STATE := $(B)/source-state.h
HARNESS_DEFS := -DSB_SRCDIR='"$(CURDIR)"' -DSB_SOURCE_STATE='"$(abspath $(SOURCE_STATE))"' \
	-DSB_BUILD_CFLAGS='"$(strip $(BASE_CFLAGS)) $(RELEASE_FLAGS)"'

# Asked of git at every make and rewritten only when it changes, so that meta.o (and the programs)
# are built again when the commit or the tree's cleanness moves, and only then. A changed tracked
# file or an untracked one git does not ignore makes it dirty, as the sweep runner counts
# (scripts/sbtree.py): either can change what is built.
$(SOURCE_STATE): FORCE
	@mkdir -p $(dir $@)
	@sha=$$(git -C "$(CURDIR)" rev-parse HEAD 2>/dev/null) || sha=unknown; \
	if [ "$$sha" = unknown ]; then d=-1; \
	elif [ -n "$$(git --no-optional-locks -C "$(CURDIR)" status --porcelain 2>/dev/null)" ]; then d=1; else d=0; fi; \
	printf '#define SB_SOURCE_SHA "%s"\n#define SB_SOURCE_DIRTY (%s)\n' "$$sha" "$$d" >$@.tmp; \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi
FORCE:
$(foreach v,release tsan asan clang,$(B)/$(v)/harness/meta.o): $(SOURCE_STATE)

$(B)/release/harness/%.o: harness/%.c $(HDRS) | deps
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(RELEASE_FLAGS) $(HARNESS_DEFS) -c $< -o $@

# The SimGrid executor (sim/exec_sim.cpp): C++, linked into the programs only (the library and
# the unit tests stay C and never start a simulation). Built without sanitizers: it runs
# actors on its own stacks, which the sanitizers cannot follow; the stress matrix is native.
# NOSIM=1 (with its own B=, e.g. make B=build/nosim NOSIM=1 schedbed) builds the programs without
# it (sim/exec_none.c: --executor sim is refused), for machines that only run natively and
# carry their libraries (scripts/carry.sh pack --no-sim): SimGrid loads a dozen more.
ifeq ($(NOSIM),1)
SIM_LIBS :=
SIM_OBJ := $(B)/sim/exec_none.o
else
SIM_LIBS := -lsimgrid -lstdc++
SIM_OBJ := $(B)/sim/exec_sim.o
endif
$(B)/sim/exec_sim.o: sim/exec_sim.cpp sim/cache.h core/exec.h | deps
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Wno-unused-parameter $(PKG_CFLAGS) -c $< -o $@
$(B)/sim/exec_none.o: sim/exec_none.c core/exec.h | deps
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O2 -c $< -o $@

$(B)/release/schedbed: $(patsubst %.c,$(B)/release/%.o,$(HARNESS_SRC)) $(B)/release/libschedbed.a $(SIM_OBJ)
	$(CC) $(BASE_CFLAGS) $(RELEASE_FLAGS) $^ $(PKG_LIBS) $(SIM_LIBS) -o $@

## schedbed    build the program into build/release/schedbed (then: schedbed --help, schedbed list)
schedbed: deps $(B)/release/schedbed

# The same program built with each sanitizer, for the stress matrix.
define sanitized_program
$(B)/$(1)/harness/%.o: BASE_CFLAGS += $$(HARNESS_DEFS)
$(B)/$(1)/schedbed: $$(patsubst %.c,$(B)/$(1)/%.o,$$(HARNESS_SRC)) $(B)/$(1)/libschedbed.a $$(SIM_OBJ)
	$$(CC) $$(BASE_CFLAGS) $(2) $$^ $$(PKG_LIBS) $(SIM_LIBS) -o $$@
endef
$(eval $(call sanitized_program,tsan,$$(TSAN_FLAGS)))
$(eval $(call sanitized_program,asan,$$(ASAN_FLAGS)))
$(eval $(call sanitized_program,clang,$$(CLANG_FLAGS)))

# ---- tests ----
# The suite is laid out like the tree: tests/core/, tests/policies/, tests/workloads/, tests/harness/
# (stress/ and canary/ are separate programs, built below).
TEST_DIRS := core policies workloads harness
TEST_SRC := $(foreach d,$(TEST_DIRS),$(wildcard tests/$(d)/*.c))
TEST_HDRS := $(wildcard tests/*.h $(foreach d,$(TEST_DIRS),tests/$(d)/*.h))

# Test sources are compiled without LTO: Criterion registers tests in ELF sections that
# link-time optimisation would discard as unused. The library is still linked with LTO.
$(B)/tests/%.o: tests/%.c $(TEST_HDRS) $(HDRS) | deps
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O2 -Wno-missing-field-initializers -c $< -o $@

$(B)/tests/schedbed-tests: $(patsubst tests/%.c,$(B)/tests/%.o,$(TEST_SRC)) $(B)/release/libschedbed.a
	$(CC) $(BASE_CFLAGS) -O2 -flto=auto $^ $(PKG_LIBS) -lcriterion -o $@

# tests/harness/ runs the program itself: it must exist first, and the tests must know where.
$(B)/tests/harness/%.o: BASE_CFLAGS += -DSCHEDBED_BIN='"$(abspath $(B))/release/schedbed"' -DSB_SRCDIR='"$(CURDIR)"'
$(B)/tests/schedbed-tests: | $(B)/release/schedbed

# Tests that plant a failure (an invariant broken, a starvation, a stall) let the core print its
# report as a run would; those lines are expected and say so first.
EXPECTED_NOTE := echo "note: the violated invariants, STARVATION and STALL reports and 'policy broken' lines below come from tests that plant those failures on purpose; only [FAIL] lines and a non-zero Failing count in the Synthesis line mean a failed test"

## unit        the Criterion suite alone (one line per test as it passes)
# A failure is repeated after the last line: CI shows only the tail of a long log.
unit: deps $(B)/tests/schedbed-tests
	@$(EXPECTED_NOTE)
	@log=$$(mktemp) && trap 'rm -f "$$log" "$$log.rc"' EXIT; \
	{ $(B)/tests/schedbed-tests --jobs 2 $(UNIT_ARGS); echo $$? > "$$log.rc"; } 2>&1 | tee "$$log"; \
	rc=$$(cat "$$log.rc"); [ "$$rc" = 0 ] && exit 0; \
	echo "== unit: the failures above, again:"; grep -E '^\[(----|FAIL)\]' "$$log" | grep -v '^\[----\] Criterion'; exit $$rc

# ---- sanitizer stress (a plain binary: Criterion forks and ThreadSanitizer cannot follow) ----
# The canary (tests/canary/) is built with exactly the stress binary's flags: its planted bugs
# being caught is the proof that those flags really turn the sanitizers on.
define stress_bin
$(B)/$(1)/stress: tests/stress/stress.c $(B)/$(1)/libschedbed.a
	$$(CC) $$(BASE_CFLAGS) $(2) $$^ $$(PKG_LIBS) -o $$@
$(B)/$(1)/canary: tests/canary/canary.c | deps
	@mkdir -p $$(dir $$@)
	$$(CC) $$(BASE_CFLAGS) $(2) $$< -o $$@
endef
$(eval $(call stress_bin,tsan,$$(TSAN_FLAGS)))
$(eval $(call stress_bin,asan,$$(ASAN_FLAGS)))

STRESS_ARGS ?= --threads 1,2,4,8 --chaos 7
export TSAN_OPTIONS := halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/stress/tsan.supp
export ASAN_OPTIONS := detect_leaks=1 abort_on_error=1
export UBSAN_OPTIONS := print_stacktrace=1 halt_on_error=1

## canaries    planted UB, overflow, leak and race programs that the sanitizer builds must catch (proof the sanitizers are live)
canaries: deps $(B)/tsan/canary $(B)/asan/canary
	tests/canary/run.sh asan $(B)/asan/canary
	tests/canary/run.sh tsan $(B)/tsan/canary

## stress      the canaries, the stress binary, then every policy x workload x thread count, under ThreadSanitizer and under AddressSanitizer+UBSan+LeakSanitizer
stress: deps canaries $(B)/tsan/stress $(B)/asan/stress $(B)/tsan/schedbed $(B)/asan/schedbed
	$(B)/tsan/stress $(STRESS_ARGS)
	$(B)/asan/stress $(STRESS_ARGS)
	$(PYTHON) tests/stress/matrix.py --schedbed $(B)/tsan/schedbed --chaos 11 --scale 4 $(MATRIX_ARGS)
	$(PYTHON) tests/stress/matrix.py --schedbed $(B)/asan/schedbed --chaos 12 --scale 4 $(MATRIX_ARGS)

## clang       the program built by clang with warnings as errors, then the policy x workload matrix through it (2 threads)
clang: deps $(B)/clang/schedbed
	$(PYTHON) tests/stress/matrix.py --schedbed $(B)/clang/schedbed --chaos 13 --threads 2

## valgrind    one small oltp run of the stealing policy under valgrind's memcheck (definite leaks and invalid accesses fail it)
valgrind: deps $(SCHEDBED)
	d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
	valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
		$(SCHEDBED) run --policy stealing --workload oltp --threads 2 --jobs 20 --set clients=3 --set epoch_us=1000 \
		--quiet --out "$$d/run" && echo "ok   valgrind: stealing x oltp, no invalid access, no definite leak"

## check       the edit-compile-test loop: the Criterion suite but its slowest program-level tests (make test runs them), the sanitizer canaries
CHECK_SKIP := cli/interrupts_anywhere_leave_nothing_half_made|cli/plot_run_makes_pngs|cli/sleeping_between_polls_is_no_stall|\
	cli/overloaded_runs_end_after_the_drain|cli/livelock_ends_as_starvation|cli/listed_defaults_and_ranges_are_accepted
check: deps
	$(PYTHON) scripts/layers.py
	@$(MAKE) --no-print-directory -j2 $(B)/tests/schedbed-tests $(B)/asan/canary $(B)/tsan/canary
	@$(EXPECTED_NOTE)
	$(B)/tests/schedbed-tests --jobs 2 --filter '!($(CHECK_SKIP))'
	tests/canary/run.sh asan $(B)/asan/canary
	tests/canary/run.sh tsan $(B)/tsan/canary

# make test: every build first (two compilers at a time), then each step in turn with a header
# line and the time so far; the first failing step ends it.
TEST_STEPS := layers claims unit stress model-check sweep-test sim-test fuzz-slice clang valgrind readme-test
TEST_BUILDS = $(B)/release/schedbed $(B)/tests/schedbed-tests $(foreach v,tsan asan,$(B)/$(v)/stress $(B)/$(v)/schedbed \
	$(B)/$(v)/canary) $(B)/clang/schedbed
## test        everything CI runs: builds, the Criterion suite, sanitizer canaries and stress runs, the model check, the sweep tests, the simulator tests, a fuzz slice, clang and valgrind
test: deps
	@start=$$(date +%s); \
	echo "== test: build (gcc release, ThreadSanitizer, AddressSanitizer+UBSan, clang; 2 at a time)"; \
	$(MAKE) --no-print-directory -j2 $(TEST_BUILDS) || exit 1; \
	for s in $(TEST_STEPS); do \
		echo "== test: $$s ($$(( $$(date +%s) - start )) s so far)"; \
		$(MAKE) --no-print-directory $$s UNIT_ARGS=--verbose || { echo "== test: $$s FAILED after $$(( $$(date +%s) - start )) s"; exit 1; }; \
	done; \
	echo "== test: every step passed in $$(( $$(date +%s) - start )) s"

## claims      every row of PAPER.md's claims table recomputed from results/paper/ (results/paper/claims.json): a number that no longer rounds to the quoted one, or a comparison the 95% intervals do not support, fails naming the row
claims: deps
	$(PYTHON) scripts/claims.py

## layers      the floors (core < policies, workloads < harness; no include back up, no policy reaching the core's private headers) and no cycle in core/ but task.c <-> job.c
layers:
	$(PYTHON) scripts/layers.py

## sweep-test  manifests, the local runner and collect, METG's and the scaling sweep through them, the A/B verdict (tests/sweeps/), then a real single-node Slurm running a manifest as a job array
sweep-test: deps $(B)/release/schedbed $(B)/release/patterns_tbb $(B)/release/peers_tbb $(B)/release/peers_omp
	$(PYTHON) tests/sweeps/test_sweep.py --schedbed $(B)/release/schedbed
	$(PYTHON) tests/sweeps/test_metg.py --schedbed $(B)/release/schedbed
	$(PYTHON) tests/sweeps/test_scale.py --schedbed $(B)/release/schedbed
	$(PYTHON) tests/sweeps/test_targets.py --schedbed $(B)/release/schedbed
	$(PYTHON) tests/sweeps/test_causes.py --schedbed $(B)/release/schedbed
	$(PYTHON) tests/sweeps/test_ab.py --schedbed $(B)/release/schedbed
	$(PYTHON) tests/sweeps/test_machines.py --schedbed $(B)/release/schedbed
	$(PYTHON) tests/sweeps/test_claims.py
	$(PYTHON) tests/sweeps/slurm_test.py --schedbed $(B)/release/schedbed

## readme-test every command README.md shows, run with short durations (a command the README shows and this test does not know fails it)
readme-test: deps $(B)/release/schedbed peers
	$(PYTHON) tests/readme/test_readme.py

## validate-sim  the simulator against this machine (a sweep manifest: resumable, Slurm-ready): every policy x the cells of sweeps/validate/sim.json x worker counts x 5 seeds, native then sim with this machine's cost table: results/validate-sim/<machine>-<time>/table.md
##             [VALIDATE_ARGS='--threads 1,2,4 --reps 3 --duration 0.5 --policies a,b --cells tiny,wake --out DIR'] [ALLOW_DIRTY=1]
validate-sim: deps $(B)/release/schedbed
	$(PYTHON) scripts/validate_sim.py run --schedbed $(B)/release/schedbed $(if $(ALLOW_DIRTY),--allow-dirty) $(VALIDATE_ARGS)

# The simulator's calibration: the primitives on the core's own queues and the native executor.
$(B)/release/calibrate: sim/calibrate.c $(B)/release/libschedbed.a
	$(CC) $(BASE_CFLAGS) $(RELEASE_FLAGS) $^ $(PKG_LIBS) -o $@

## calibrate   measure on this machine the costs the simulator charges and write sim/costs-MACHINE.txt (commit it; an idle machine reads true) [ALLOW_DIRTY=1]
calibrate: deps $(B)/release/schedbed $(B)/release/calibrate
	$(PYTHON) scripts/calibrate.py --schedbed $(B)/release/schedbed $(if $(ALLOW_DIRTY),--allow-dirty) $(CALIBRATE_ARGS)

## sim-test    the SimGrid executor: its cache model against a plain list, determinism, accounting at 64 simulated workers for every policy, native/sim agreement, bad input, the cost table's choice, a slice of validate-sim
sim-test: deps $(B)/release/schedbed $(B)/sim/cache_test
	$(B)/sim/cache_test
	$(PYTHON) tests/sim/test_sim.py --schedbed $(B)/release/schedbed

$(B)/sim/cache_test: tests/sim/cache_test.cpp sim/cache.h | deps
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O1 -g -Wall -Wextra -fsanitize=address,undefined $< -o $@

# ---- configuration fuzz (scripts/fuzz.py) ----
FUZZ_COUNT ?= 500
FUZZ_SEED ?= 1
FUZZ_THREADS ?= 4
## fuzz        random valid configurations from schedbed list, with and without --check and --chaos: [FUZZ_COUNT=500] [FUZZ_SEED=1]
##             [FUZZ_THREADS=4: most workers drawn; 32 on a 16-core machine]; failures as repro commands in results/fuzz-failures.txt
fuzz: deps $(B)/release/schedbed
	@mkdir -p results
	$(PYTHON) scripts/fuzz.py --schedbed $(B)/release/schedbed --count $(FUZZ_COUNT) --seed $(FUZZ_SEED) \
		--max-threads $(FUZZ_THREADS) --failures results/fuzz-failures.txt

## fuzz-slice  a fixed-seed slice of the fuzz, under a minute (part of make test)
fuzz-slice: deps $(B)/release/schedbed
	$(PYTHON) scripts/fuzz.py --schedbed $(B)/release/schedbed --count 40 --seed 1 --duration 0.3

# ---- runs and plots ----
SCHEDBED := $(B)/release/schedbed
# bench, compare and sweep run one worker per core unless THREADS or ARGS sets the count: the
# parameter's default (jogasaki's 5) on a 2-core machine would measure the kernel's time-slicing.
CORES := $(shell nproc 2>/dev/null || echo 1)
THREADS_GIVEN = $(THREADS)$(findstring thread_count,$(ARGS))$(findstring --threads,$(ARGS))$(findstring -t ,$(ARGS))
RUN_THREADS = $(or $(THREADS),$(if $(THREADS_GIVEN),,$(CORES)))
SAY_THREADS = $(if $(THREADS_GIVEN),@true,@echo "$@: THREADS=$(CORES), one worker per core (THREADS=5 for jogasaki's default)")
REPS ?= 3
RATE_PARAM ?= rate
RATES ?= 500,1000,2000,4000,8000
POLICIES ?=
STAMP = $$(date -u +%Y%m%dT%H%M%SZ)

## bench       one run and its plots: make bench POLICY=hybrid [WORKLOAD=oltp] [THREADS=n] [ARGS='--set k=v ...'] (an overloaded run, exit 3, is plotted too, then the target fails with Error 3)
bench: deps $(SCHEDBED)
	$(SAY_THREADS)
	set -o pipefail; log=$$(mktemp); trap 'rm -f "$$log"' EXIT; \
	$(SCHEDBED) run --policy $(POLICY) --workload $(WORKLOAD) $(if $(RUN_THREADS),--threads $(RUN_THREADS)) $(ARGS) | tee "$$log"; \
	rc=$$?; [ $$rc = 0 ] || [ $$rc = 3 ] || exit $$rc; \
	run=$$(sed -n 's/^results: //p' "$$log") && $(PYTHON) scripts/plot_run.py "$$run" && \
	gnuplot -e "only='cdf'" "$$run/plot.gp" && exit $$rc

## compare     every policy on WORKLOAD, same seed, alternating, REPS rounds: results/compare-<time>/ [ALLOW_DIRTY=1 marks results dirty]
compare: deps $(SCHEDBED)
	$(SAY_THREADS)
	set -e; d=results/compare-$(STAMP); \
	$(PYTHON) scripts/compare.py --run --schedbed $(SCHEDBED) --workload $(WORKLOAD) --reps $(REPS) \
		$(if $(POLICIES),--policies $(POLICIES)) $(if $(RUN_THREADS),--threads $(RUN_THREADS)) \
		$(if $(ALLOW_DIRTY),--allow-dirty) "$$d" -- \
		$(if $(findstring --duration,$(ARGS))$(findstring --jobs,$(ARGS)),,--duration 5) $(ARGS); \
	echo "compare: $$d"

## ab          A/B with a verdict: make ab A='--policy stealing' VS='--policy serial' [WORKLOAD=oltp] [ARGS=..] [AB_REPS=5]:
##             A VS A VS ..., a median with its 95% interval per metric, VS faster/slower/no difference: results/ab-<time>/
##             [A_BUILD=BIN] [VS_BUILD=BIN]: that side runs another schedbed (an earlier commit's: two builds compared)
# (B names the build directory, so the second side is VS.) A side without --policy runs POLICY,
# without --workload WORKLOAD; without --duration or --jobs every run measures 3 s.
AB_REPS ?= 5
ab: deps $(SCHEDBED)
	@test -n "$(A)" -a -n "$(VS)" || { echo "ab: give both sides, e.g. make ab A='--policy stealing' VS='--policy serial'"; exit 2; }
	$(SAY_THREADS)
	$(PYTHON) scripts/ab.py --schedbed $(SCHEDBED) --a "$(A) $(if $(findstring --policy,$(A)),,--policy $(POLICY))" \
		--b "$(VS) $(if $(findstring --policy,$(VS)),,--policy $(POLICY))" --reps $(AB_REPS) $(if $(ALLOW_DIRTY),--allow-dirty) \
		$(if $(A_BUILD),--a-build $(A_BUILD)) $(if $(VS_BUILD),--b-build $(VS_BUILD)) \
		results/ab-$(STAMP) -- $(if $(findstring --workload,$(A)$(VS)),,--workload $(WORKLOAD)) \
		$(if $(RUN_THREADS),--threads $(RUN_THREADS)) \
		$(if $(findstring --duration,$(A)$(VS)$(ARGS))$(findstring --jobs,$(A)$(VS)$(ARGS)),,--duration 3) $(ARGS)

## plot        the plots of one run: make plot RUN=results/<run-id>
plot: deps
	@test -n "$(RUN)" || { echo "plot: give the run directory, e.g. make plot RUN=results/<run-id>"; exit 2; }
	$(PYTHON) scripts/plot_run.py $(RUN)

## sweep       p99 latency against offered load: [WORKLOAD=oltp] [RATE_PARAM=rate] [RATES=500,..,8000] [POLICIES=a,b]
sweep: deps $(SCHEDBED)
	$(SAY_THREADS)
	$(PYTHON) scripts/sweep.py load --schedbed $(SCHEDBED) --workload $(WORKLOAD) --param $(RATE_PARAM) --rates $(RATES) \
		$(if $(ALLOW_DIRTY),--allow-dirty) $(if $(POLICIES),--policies $(POLICIES)) $(if $(RUN_THREADS),--threads $(RUN_THREADS)) --out results/sweep-$(STAMP) -- \
		$(if $(findstring --duration,$(ARGS))$(findstring --jobs,$(ARGS)),,--duration 3) $(ARGS)

# ---- model checking (models/README.md) ----
.PHONY: model-check
## model-check spin on models/: suspend/wake and watcher protocols verify, broken variants are refuted
model-check: deps
	CC="$(CC)" models/check.sh $(B)/models

# ---- peers and the study ----
## peers       the OpenMP and oneTBB versions of the microbenchmarks and of the patterns task graphs, for side-by-side figures
peers: deps $(B)/release/peers_omp $(B)/release/peers_tbb $(B)/release/patterns_omp $(B)/release/patterns_tbb
$(B)/release/peers_omp: peers/peers_omp.c peers/micro_peer.h | deps
	@mkdir -p $(dir $@)
	$(CC) -O2 -fopenmp $< -o $@
$(B)/release/peers_tbb: peers/peers_tbb.cpp peers/micro_peer.h | deps
	@mkdir -p $(dir $@)
	g++ -O2 -std=c++17 $< -ltbb -o $@

# The task-graph peers compile the workload's own graphs and kernels (workloads/taskgraph.c).
PATTERNS_PEER_OBJ := $(B)/peers/patterns_peer.o $(B)/peers/taskgraph.o
$(B)/peers/%.o: peers/%.c peers/patterns_peer.h workloads/taskgraph.h workloads/mix.h | deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 $(WARN) -c $< -o $@
$(B)/peers/%.o: workloads/%.c workloads/taskgraph.h workloads/mix.h | deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 $(WARN) -c $< -o $@
$(B)/release/patterns_omp: peers/patterns_omp.c $(PATTERNS_PEER_OBJ) | deps
	$(CC) -std=c11 -D_GNU_SOURCE -O2 $(WARN) -fopenmp $^ -o $@
$(B)/release/patterns_tbb: peers/patterns_tbb.cpp $(PATTERNS_PEER_OBJ) | deps
	g++ -std=c++17 -O2 -Wall -Wextra $^ -ltbb -o $@

METG_ARGS ?=
## metg        METG(50%) of every policy and the OpenMP/oneTBB peers on the task-graph patterns, through the manifest runner: results/metg-<time>/ (METG_ARGS='--patterns a,b --reps 5')
metg: deps $(SCHEDBED) $(B)/release/patterns_omp $(B)/release/patterns_tbb
	d=results/metg-$(STAMP); $(PYTHON) scripts/metg.py expand --schedbed $(SCHEDBED) --out $$d $(METG_ARGS) && \
	$(PYTHON) scripts/sweep.py run $$d --schedbed $(SCHEDBED) $(if $(ALLOW_DIRTY),--allow-dirty) && $(PYTHON) scripts/metg.py report $$d

## carry       pack the programs, their shared libraries and the commit they come from into build/carry(.tar.xz), for a
##             machine without these packages or git (scripts/carry.sh run build/carry CMD... there)
carry: deps
	scripts/carry.sh pack build/carry

SCALE_ARGS ?=
## scale       every policy (and the OpenMP/oneTBB peers) at 1, 2, 4 ... workers up to this machine's hardware threads, through
##             the manifest runner: results/scale-<time>/scale.md, scale.csv, scale-CASE.png (SCALE_ARGS='--workers 1,4,16 --reps 5')
scale: deps $(SCHEDBED) peers
	d=results/scale-$(STAMP); $(PYTHON) scripts/scale.py expand --schedbed $(SCHEDBED) --out $$d $(SCALE_ARGS) && \
	$(PYTHON) scripts/sweep.py run $$d --schedbed $(SCHEDBED) $(if $(ALLOW_DIRTY),--allow-dirty) && $(PYTHON) scripts/scale.py report $$d

EXPERIMENTS ?=
REPRODUCE_ARGS ?=
UPDATE ?=
ALLOW_DIRTY ?=
## reproduce   every experiment behind PAPER.md (sweeps/*.json) into a new results/reproduce-<time>/, compared with
##             results/paper/; refuses a tree with uncommitted changes: [EXPERIMENTS='a b']
##             [REPRODUCE_ARGS='--reps 1 --duration 1'] [UPDATE=1 replaces results/paper/] [ALLOW_DIRTY=1 marks results dirty]
##             [VS_BUILD=BIN: every run also with that schedbed, alternated; vs-build.md compares the two builds]
reproduce: deps $(SCHEDBED) peers
	$(PYTHON) scripts/experiments.py --schedbed $(SCHEDBED) $(if $(UPDATE),--update-paper) $(if $(ALLOW_DIRTY),--allow-dirty) \
		$(if $(VS_BUILD),--vs-build $(VS_BUILD)) \
		$(REPRODUCE_ARGS) $(EXPERIMENTS)

## clean       remove the build directory (results/ stays)
clean:
	rm -rf $(B)

help:
	@sed -n 's/^## //p' Makefile

# ---- the hot-path benchmark ----
BENCH_CORE_ARGS ?=
## bench-core  the hot path next to oneTBB and libgomp: chain and fib(32) at 1 and 2 workers, alternating, >= 5 runs each: results/bench-core/<time>/ [ALLOW_DIRTY=1]
bench-core: deps $(SCHEDBED) peers
	$(PYTHON) scripts/bench_core.py --schedbed $(SCHEDBED) $(if $(ALLOW_DIRTY),--allow-dirty) $(BENCH_CORE_ARGS)
