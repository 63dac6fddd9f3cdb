/*
 * micro_peer.h - what the two microbenchmark peers (peers_omp.c, peers_tbb.cpp) share: the command
 * line, the clock and the count of spawned tasks, so that both report the same figure for the same
 * computation and only the runtime calls differ. C and C++ alike (header-only: each peer is one
 * translation unit built by its own compiler).
 *
 * Usage of a peer: PROG fib N [THREADS] | chain N [THREADS]; prints "<ns per task> <tasks> <result>".
 */
#ifndef MICRO_PEER_H
#define MICRO_PEER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct micro_args {
	int fib;        /* 1: fib N, 0: a chain of N tasks */
	long n;
	int threads;    /* 1 unless given: the figure is then the cost of a spawn and a run */
};

/* 0 and *a filled, or 2 (the exit status) after a usage line on stderr. */
static inline int micro_parse(int argc, char **argv, struct micro_args *a)
{
	a->threads = argc == 4 ? atoi(argv[3]) : 1;
	if ((argc != 3 && argc != 4) || (strcmp(argv[1], "fib") && strcmp(argv[1], "chain")) || a->threads < 1) {
		fprintf(stderr, "usage: %s fib N [THREADS] | chain N [THREADS]\n", argv[0]);
		return 2;
	}
	a->fib = !strcmp(argv[1], "fib");
	a->n = atol(argv[2]);
	return 0;
}

/* Tasks a fib(n) spawns with one task per call but the root: calls(n) = calls(n-1) + calls(n-2) + 1. */
static inline double micro_fib_tasks(long n)
{
	double a = 1, b = 1;
	for (long i = 2; i <= n; i++) {
		double c = a + b + 1;
		a = b;
		b = c;
	}
	return b - 1;
}

static inline double micro_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline void micro_report(double ns, double tasks, long result)
{
	printf("%.2f %.0f %ld\n", ns / tasks, tasks, result);
}

#endif
