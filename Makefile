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

.PHONY: all deps test unit stress bench clean help

all: deps $(B)/release/libschedbed.a

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

# ---- tests ----
TEST_SRC := $(wildcard tests/*.c)

# Test sources are compiled without LTO: Criterion registers tests in ELF sections that
# link-time optimisation would discard as unused. The library is still linked with LTO.
$(B)/tests/%.o: tests/%.c tests/common.h $(HDRS) | deps
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O2 -Wno-missing-field-initializers -c $< -o $@

$(B)/tests/schedbed-tests: $(patsubst tests/%.c,$(B)/tests/%.o,$(TEST_SRC)) $(B)/release/libschedbed.a
	$(CC) $(BASE_CFLAGS) -O2 -flto=auto $^ $(PKG_LIBS) -lcriterion -o $@

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

## stress      the stress binary under ThreadSanitizer and under AddressSanitizer+LeakSanitizer
stress: deps $(B)/tsan/stress $(B)/asan/stress
	$(B)/tsan/stress $(STRESS_ARGS)
	$(B)/asan/stress $(STRESS_ARGS)

## test        everything CI runs: the Criterion suite, then the sanitizer stress runs
test: unit stress

clean:
	rm -rf $(B)

help:
	@sed -n 's/^## //p' Makefile
