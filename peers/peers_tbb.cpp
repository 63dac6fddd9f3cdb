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

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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
	int threads = argc == 4 ? std::atoi(argv[3]) : 1;
	if ((argc != 3 && argc != 4) || (std::strcmp(argv[1], "fib") && std::strcmp(argv[1], "chain")) || threads < 1) {
		std::fprintf(stderr, "usage: peers_tbb fib N [THREADS] | chain N [THREADS]\n");
		return 2;
	}
	tbb::global_control limit(tbb::global_control::max_allowed_parallelism, (size_t)threads);
	long n = std::atol(argv[2]), result = 0;
	double tasks = 0, dt = 0;
	/* the second of two rounds is timed: the first warms the allocator and the thread pool */
	for (int round = 0; round < 2; round++) {
		auto t0 = std::chrono::steady_clock::now();
		if (!std::strcmp(argv[1], "fib")) {
			result = fib((int)n);
			double a = 1, b = 1;
			for (long i = 2; i <= n; i++) {
				double c = a + b + 1;
				a = b;
				b = c;
			}
			tasks = b - 1;
		} else {
			tbb::task_group g;
			link(g, n);
			g.wait();
			tasks = (double)n;
			result = n;
		}
		dt = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
	}
	std::printf("%.2f %.0f %ld\n", dt / tasks, tasks, result);
	return 0;
}
