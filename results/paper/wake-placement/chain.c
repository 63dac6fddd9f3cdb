/*
 * chain.c - wake's 2-worker chain without schedbed: does a thread woken by a running thread run
 * beside it, preempt it, or wait behind it on its CPU while the other CPU is idle?
 *
 * Three threads, as in `wake` at 2 workers: the main thread sleeps 5 ms (a request thread's gap),
 * wakes A; A wakes B (the last searcher's hand-on) and keeps running for 50 us, reading the clock
 * in a loop (a gap in its reads is time it was off its CPU); B, woken, stamps the time and spins
 * 100 us (a searcher's empty rounds) before it parks again. Each round is classified by when B
 * first ran: during A's 50 us without a gap in A's reads (beside it, on the other CPU), inside
 * such a gap (it preempted A), or after A's 50 us (it waited behind A). Not a calibration (it
 * prints no cost): the evidence that the stacking the kernel trace shows comes from the chain.
 *   cc -O2 -pthread -o chain chain.c && ./chain 300
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { BESIDE, PREEMPTED, WAITED, KINDS, MAXROUNDS = 2000 };
static const char *const kind_name[KINDS] = { "ran beside A", "preempted A", "waited behind A" };

/* seq_cst throughout: a prototype's flags, not a hot path */
static _Atomic uint32_t wa, wb, round_done, quit;
static _Atomic uint64_t b_ran;
static _Atomic int a_parked, b_parked;
static double delay[KINDS][MAXROUNDS];
static int count[KINDS];

static uint64_t now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void futex_wait(_Atomic uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w)
{
	atomic_store(w, 1);
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* the word is cleared before the flag says "parked", so a waker that saw the flag cannot be lost */
static void park(_Atomic uint32_t *w, _Atomic int *parked)
{
	atomic_store(w, 0);
	atomic_store(parked, 1);
	while (!atomic_load(w))
		futex_wait(w);
	atomic_store(parked, 0);
}

/* the next round's wake-up: false once main has said to stop */
static bool next_round(_Atomic uint32_t *w, _Atomic int *parked)
{
	park(w, parked);
	return !atomic_load(&quit);
}

static void *thread_b(void *arg)
{
	(void)arg;
	while (next_round(&wb, &b_parked)) {
		uint64_t t = now();
		atomic_store(&b_ran, t);
		while (now() - t < 100000)
			;
	}
	return NULL;
}

static void *thread_a(void *arg)
{
	(void)arg;
	while (next_round(&wa, &a_parked)) {
		atomic_store(&b_ran, 0);
		uint64_t woke = now();
		futex_wake(&wb);
		uint64_t t = now(), prev = t, gap = 0, gap_end = 0, end = t + 50000;
		while ((t = now()) < end) {
			if (t - prev > gap) {
				gap = t - prev;
				gap_end = t;
			}
			prev = t;
		}
		uint64_t ran;
		while (!(ran = atomic_load(&b_ran)))
			;
		int k = ran > end ? WAITED : gap > 30000 && ran <= gap_end && ran + gap >= gap_end ? PREEMPTED : BESIDE;
		delay[k][count[k]++] = (double)(ran - woke) / 1e3;
		while (!atomic_load(&b_parked))
			;
		futex_wake(&round_done);
	}
	return NULL;
}

static int by_value(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 300;
	if (rounds < 1 || rounds > MAXROUNDS) {
		fprintf(stderr, "usage: chain [ROUNDS, 1..%d]\n", MAXROUNDS);
		return 2;
	}
	pthread_t a, b;
	pthread_create(&a, NULL, thread_a, NULL);
	pthread_create(&b, NULL, thread_b, NULL);
	for (int i = 0; i < rounds; i++) {
		while (!atomic_load(&a_parked) || !atomic_load(&b_parked))
			;
		usleep(5000);
		atomic_store(&round_done, 0);
		futex_wake(&wa);
		while (!atomic_load(&round_done))
			futex_wait(&round_done);
	}
	printf("%d chain wake-ups (A woken after a 5 ms pause wakes B):", rounds);
	for (int k = 0; k < KINDS; k++) {
		qsort(delay[k], (size_t)count[k], sizeof(double), by_value);
		printf("  %s %d (B ran %.1f us after the wake, median)", kind_name[k], count[k],
		       count[k] ? delay[k][count[k] / 2] : 0.0);
	}
	printf("\n");
	atomic_store(&quit, 1);
	while (!atomic_load(&a_parked) || !atomic_load(&b_parked))
		;
	futex_wake(&wa);
	futex_wake(&wb);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
