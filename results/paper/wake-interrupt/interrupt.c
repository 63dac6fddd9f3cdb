/*
 * interrupt.c - what a wake-up costs the CPU it lands on, by how it gets there.
 *
 * A thread B pinned to CPU 0 sleeps and is woken once per period; it does nothing when woken but
 * sleep again. Three ways:
 *   remote   B is woken (FUTEX_WAKE) by a thread spinning on CPU 1 while a spinner S runs on
 *            CPU 0: the kernel must interrupt S's CPU to run B.
 *   timer    B sleeps in nanosleep(period) beside the spinner S: a timer interrupt wakes it.
 *   idle     as remote, but nothing else runs on CPU 0: the wake-up finds it idle.
 *   local    the waker itself spins on CPU 0 and wakes B there: B runs when the waker's
 *            FUTEX_WAKE returns to user space, no interrupt.
 * Reported per wake: B's own CPU time (CLOCK_THREAD_CPUTIME_ID), and what the thread on CPU 0
 * lost (remote and timer: S's clock gaps over 300 ns; local: the wall time of the waker's
 * FUTEX_WAKE call, B's run inside it).
 * (idle: no spinner, the last column is 0). Build: cc -O2 -pthread interrupt.c -o interrupt;
 * run: ./interrupt MODE PERIOD_US SECONDS
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static _Atomic uint32_t word;
static _Atomic int quit;
static _Atomic uint64_t b_wakes;
static uint64_t b_cpu, s_lost;
static int mode, period_us;

static uint64_t now(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void futex(int op, uint32_t v)
{
	syscall(SYS_futex, &word, op, v, NULL, NULL, 0);
}

static void *spinner(void *arg)
{
	(void)arg;
	pin(0);
	uint64_t p = now(CLOCK_MONOTONIC), lost = 0;
	while (!atomic_load(&quit)) {
		uint64_t t = now(CLOCK_MONOTONIC);
		if (t - p > 300)
			lost += t - p;
		p = t;
	}
	s_lost = lost;
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	pin(0);
	uint64_t c0 = now(CLOCK_THREAD_CPUTIME_ID);
	struct timespec d = { 0, period_us * 1000L };
	while (!atomic_load(&quit)) {
		if (mode == 1)
			nanosleep(&d, NULL);
		else
			futex(FUTEX_WAIT_PRIVATE, atomic_load(&word));
		atomic_fetch_add(&b_wakes, 1);
	}
	b_cpu = now(CLOCK_THREAD_CPUTIME_ID) - c0;
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = { "remote", "timer", "local", "idle" };
	mode = -1;
	for (int m = 0; argc == 4 && m < 4; m++)
		if (!strcmp(argv[1], modes[m]))
			mode = m;
	period_us = argc == 4 ? atoi(argv[2]) : 0;
	int secs = argc == 4 ? atoi(argv[3]) : 0;
	if (mode < 0 || period_us <= 0 || secs <= 0) {
		fprintf(stderr, "usage: interrupt remote|timer|local|idle PERIOD_US SECONDS\n");
		return 2;
	}
	pthread_t s = 0, b;
	if (mode < 2)
		pthread_create(&s, NULL, spinner, NULL);
	pthread_create(&b, NULL, sleeper, NULL);
	pin(mode == 2 ? 0 : 1);
	usleep(100000);
	uint64_t t0 = now(CLOCK_MONOTONIC), end = t0 + (uint64_t)secs * 1000000000u, p = t0, call = 0, n = 0;
	uint64_t w0 = atomic_load(&b_wakes);
	while (p < end) {
		if (mode == 1) {
			usleep(100000);
			p = now(CLOCK_MONOTONIC);
			continue;
		}
		for (uint64_t t = p + (uint64_t)period_us * 1000u; (p = now(CLOCK_MONOTONIC)) < t;)
			;
		atomic_fetch_add(&word, 1);
		futex(FUTEX_WAKE_PRIVATE, 1);
		uint64_t z = now(CLOCK_MONOTONIC);
		call += z - p;
		n++;
		p = z;
	}
	atomic_store(&quit, 1);
	atomic_fetch_add(&word, 1);
	futex(FUTEX_WAKE_PRIVATE, 1);
	if (s)
		pthread_join(s, NULL);
	pthread_join(b, NULL);
	double wakes = (double)(atomic_load(&b_wakes) - w0);
	printf("%s,%d,%.0f,%.0f,%.0f\n", modes[mode], period_us, wakes,
	       (double)b_cpu / wakes, mode == 2 ? (double)call / (double)n : mode == 3 ? 0.0 : (double)s_lost / wakes);
	return 0;
}
