# schedbed - one entry point. `make help` lists the targets.
#
# Builds go to build/<variant>/: `release` (-O2 -flto, what benchmarks use), `tsan` and `asan`
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

POLICY ?= hybrid
WORKLOAD ?= oltp
THREADS ?=
ARGS ?=
RUN ?=

PKG_CFLAGS = $(shell pkg-config --cflags liburcu-cds liburcu-memb hwloc 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs liburcu-cds liburcu-memb hwloc 2>/dev/null)

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -pthread -g $(WARN) $(PKG_CFLAGS)

CORE_SRC := $(wildcard core/*.c)
POLICY_SRC := $(wildcard policies/*.c)
WORKLOAD_SRC := $(wildcard workloads/*.c)
LIB_SRC := $(CORE_SRC) $(POLICY_SRC) $(WORKLOAD_SRC)
HDRS := $(wildcard core/*.h policies/*.h workloads/*.h harness/*.h)

.PHONY: all deps test bench clean help

all: deps build/release/libschedbed.a

deps:
	@scripts/deps.sh

# ---- variants ----
define variant
build/$(1)/%.o: %.c $(HDRS) | deps
	@mkdir -p $$(dir $$@)
	$$(CC) $$(BASE_CFLAGS) $(2) -c $$< -o $$@

build/$(1)/libschedbed.a: $$(patsubst %.c,build/$(1)/%.o,$$(LIB_SRC))
	@rm -f $$@
	gcc-ar rcs $$@ $$^
endef

$(eval $(call variant,release,-O2 -flto=auto))
$(eval $(call variant,tsan,-O1 -fsanitize=thread -fno-omit-frame-pointer))
$(eval $(call variant,asan,-O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined))

clean:
	rm -rf build

help:
	@sed -n 's/^## //p' Makefile
