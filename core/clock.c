/*
 * clock.c - the core's clock and its unit of work.
 *
 * sb_now_ns() is the one clock of a run: every timestamp comes from it, so latencies from
 * different threads compare directly. On x86 with an invariant TSC that the kernel itself uses
 * as its clocksource (so it is synchronised across cores), it is the TSC scaled to nanoseconds:
 * about 10 ns a read here, against about 25 ns for clock_gettime, which matters when every task
 * is timed for a trace. The scale is measured once against CLOCK_MONOTONIC over 20 ms; its
 * error (a few ns over that span, a few parts per million) is far below anything measured.
 * Elsewhere it is CLOCK_MONOTONIC through the vDSO.
 *
 * sb_work_ns() spends CPU, not wall time: a dependent multiply chain whose speed is measured
 * once per process (best of several trials, so a preempted trial does not skew it). Under load a
 * task then takes longer in wall time exactly as real work would, and workloads never read the
 * clock to decide their cost.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "rt.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* TSC scale, written once under tsc_once and read-only afterwards (the once orders it). */
static bool use_tsc;
static uint64_t tsc0, ns0, tsc_mult; /* ns = ns0 + ((tsc - tsc0) * tsc_mult) >> 32 */
static pthread_once_t tsc_once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__)
static bool file_has(const char *path, const char *word)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	char line[4096];
	bool found = false;
	while (!found && fgets(line, sizeof line, f))
		found = strstr(line, word) != NULL;
	fclose(f);
	return found;
}

static void tsc_init(void)
{
	/* only when the kernel trusts it across cores and frequency changes */
	if (!file_has("/sys/devices/system/clocksource/clocksource0/current_clocksource", "tsc") ||
	    !file_has("/proc/cpuinfo", " constant_tsc") || !file_has("/proc/cpuinfo", " nonstop_tsc"))
		return;
	uint64_t n0 = mono_ns(), t0 = __rdtsc();
	uint64_t n1, t1;
	do {
		n1 = mono_ns();
		t1 = __rdtsc();
	} while (n1 - n0 < 20000000);
	if (t1 <= t0)
		return;
	tsc_mult = (uint64_t)(((unsigned __int128)(n1 - n0) << 32) / (t1 - t0));
	tsc0 = t1;
	ns0 = n1;
	use_tsc = tsc_mult != 0;
}
#else
static void tsc_init(void)
{
}
#endif

uint64_t sb_now_ns(void)
{
	if (sb_exec_virtual())
		return sb_exec_vt->now();
#if defined(__x86_64__)
	if (__builtin_expect(use_tsc, 1))
		return ns0 + (uint64_t)(((unsigned __int128)(__rdtsc() - tsc0) * tsc_mult) >> 32);
#endif
	return mono_ns();
}

/* Iterations of spin_iters() per microsecond, scaled by 1024. Written once under the
 * pthread_once below; read afterwards (the once gives the ordering). */
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
	pthread_once(&tsc_once, tsc_init);
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
	if (sb_exec_virtual()) {
		sb_exec_vt->work(ns);
		return;
	}
	sb_clock_calibrate();
	uint64_t iters = ns * iters_per_us_x1024 / (1000 * 1024);
	spin_iters(iters ? iters : 1);
}
