/*
 * program.h - what the harness tests (cli.c, outputs.c) need beyond tests/common.h: the path of the
 * schedbed program they run and of the source tree, both passed by the Makefile.
 */
#ifndef TESTS_HARNESS_PROGRAM_H
#define TESTS_HARNESS_PROGRAM_H

#include "../common.h"

#ifndef SCHEDBED_BIN
#error "the Makefile passes -DSCHEDBED_BIN=<path of the schedbed program>"
#endif
#ifndef SB_SRCDIR
#error "the Makefile passes -DSB_SRCDIR=<source tree>"
#endif

#endif
