/*
 * peers_omp.c - the same fork-join and chain microbenchmarks as schedbed's forkjoin and micro
 * workloads, written with OpenMP tasks (libgomp), to put schedbed's per-task cost next to a
 * production runtime's. One thread by default, so that the figure is the cost of a spawn and a
 * run, not of parallelism; THREADS runs the same computation on that many (the speedup).
 *
 * Usage: peers_omp fib N [THREADS] | chain N [THREADS]
 * prints "<ns per task> <tasks> <result>"
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long fib(int n)
{
	if (n < 2)
		return n;
	long x, y;
#pragma omp task shared(x) firstprivate(n)
	x = fib(n - 1);
#pragma omp task shared(y) firstprivate(n)
	y = fib(n - 2);
#pragma omp taskwait
	return x + y;
}

static void link(long left)
{
	if (left > 0) {
#pragma omp task firstprivate(left)
		link(left - 1);
	}
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int threads = argc == 4 ? atoi(argv[3]) : 1;
	if ((argc != 3 && argc != 4) || (strcmp(argv[1], "fib") && strcmp(argv[1], "chain")) || threads < 1) {
		fprintf(stderr, "usage: peers_omp fib N [THREADS] | chain N [THREADS]\n");
		return 2;
	}
	omp_set_dynamic(0);
	omp_set_num_threads(threads);
	long n = atol(argv[2]), result = 0;
	double tasks = 0, dt = 0;
	/* the second of two rounds is timed: the first warms the allocator and the thread pool */
	for (int round = 0; round < 2; round++) {
		double t0 = now();
		if (!strcmp(argv[1], "fib")) {
#pragma omp parallel
#pragma omp single
			result = fib((int)n);
			/* every call but the root is a task */
			double a = 1, b = 1;
			for (long i = 2; i <= n; i++) {
				double c = a + b + 1;
				a = b;
				b = c;
			}
			tasks = b - 1;
		} else {
#pragma omp parallel
#pragma omp single
#pragma omp taskgroup
			link(n);
			tasks = (double)n;
			result = n;
		}
		dt = now() - t0;
	}
	printf("%.2f %.0f %ld\n", dt / tasks, tasks, result);
	return 0;
}
