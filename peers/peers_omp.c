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

#include "micro_peer.h"

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

int main(int argc, char **argv)
{
	struct micro_args a;
	if (micro_parse(argc, argv, &a))
		return 2;
	omp_set_dynamic(0);
	omp_set_num_threads(a.threads);
	long result = 0;
	double tasks = 0, dt = 0;
	/* the second of two rounds is timed: the first warms the allocator and the thread pool */
	for (int round = 0; round < 2; round++) {
		double t0 = micro_now_ns();
		if (a.fib) {
#pragma omp parallel
#pragma omp single
			result = fib((int)a.n);
			tasks = micro_fib_tasks(a.n);
		} else {
#pragma omp parallel
#pragma omp single
#pragma omp taskgroup
			link(a.n);
			tasks = (double)a.n;
			result = a.n;
		}
		dt = micro_now_ns() - t0;
	}
	micro_report(dt, tasks, result);
	return 0;
}
