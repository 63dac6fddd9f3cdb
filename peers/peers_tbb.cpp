/*
 * peers_tbb.cpp - the same fork-join and chain microbenchmarks with oneTBB's task_group, to put
 * schedbed's per-task cost next to a production runtime's. One thread by default
 * (tbb::global_control max_allowed_parallelism=1); THREADS allows that many.
 *
 * Usage: peers_tbb fib N [THREADS] | chain N [THREADS]
 * prints "<ns per task> <tasks> <result>"
 */
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_group.h>

#include "micro_peer.h"

static long fib(int n)
{
	if (n < 2)
		return n;
	long x = 0, y = 0;
	tbb::task_group g;
	g.run([&] { x = fib(n - 1); });
	g.run([&] { y = fib(n - 2); });
	g.wait();
	return x + y;
}

static void link(tbb::task_group &g, long left)
{
	if (left > 0)
		g.run([&g, left] { link(g, left - 1); });
}

int main(int argc, char **argv)
{
	struct micro_args a;
	if (micro_parse(argc, argv, &a))
		return 2;
	tbb::global_control limit(tbb::global_control::max_allowed_parallelism, (size_t)a.threads);
	long result = 0;
	double tasks = 0, dt = 0;
	/* the second of two rounds is timed: the first warms the allocator and the thread pool */
	for (int round = 0; round < 2; round++) {
		double t0 = micro_now_ns();
		if (a.fib) {
			result = fib((int)a.n);
			tasks = micro_fib_tasks(a.n);
		} else {
			tbb::task_group g;
			link(g, a.n);
			g.wait();
			tasks = (double)a.n;
			result = a.n;
		}
		dt = micro_now_ns() - t0;
	}
	micro_report(dt, tasks, result);
	return 0;
}
