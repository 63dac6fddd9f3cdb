/*
 * clock.c - the core's clock and its unit of work.
 *
 * sb_now_ns() is CLOCK_MONOTONIC through the vDSO: every timestamp in a run comes from here,
 * so latencies from different threads compare directly. sb_work_ns() spends CPU, not wall
 * time: a dependent multiply chain whose speed is measured once per process (best of several
 * trials, so a preempted trial does not skew it). Under load a task then takes longer in wall
 * time exactly as real work would, and workloads never read the clock to decide their cost.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "rt.h"

uint64_t sb_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Iterations of spin_iters() per microsecond, scaled by 1024. Written once under the
 * pthread_once below; read relaxed afterwards (the once gives the ordering). */
static uint64_t iters_per_us_x1024;
static pthread_once_t calibrated = PTHREAD_ONCE_INIT;

static uint64_t __attribute__((noinline)) spin_iters(uint64_t n)
{
	uint64_t x = n | 1;
	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ __volatile__("" : "+r"(x));
	}
	return x;
}

static void calibrate(void)
{
	const uint64_t n = 200000;
	uint64_t best = UINT64_MAX;
	for (int trial = 0; trial < 7; trial++) {
		uint64_t t0 = sb_now_ns();
		spin_iters(n);
		uint64_t dt = sb_now_ns() - t0;
		if (dt < best)
			best = dt;
	}
	if (best == 0)
		best = 1;
	iters_per_us_x1024 = n * 1000 * 1024 / best;
	if (!iters_per_us_x1024)
		iters_per_us_x1024 = 1;
}

void sb_clock_calibrate(void)
{
	pthread_once(&calibrated, calibrate);
}

void sb_work_ns(uint64_t ns)
{
	if (!ns)
		return;
	sb_clock_calibrate();
	uint64_t iters = ns * iters_per_us_x1024 / (1000 * 1024);
	spin_iters(iters ? iters : 1);
}
