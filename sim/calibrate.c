/*
 * calibrate.c - measures on this machine the primitive costs the simulator charges (core/exec.h's
 * enum sb_cost), on the core's own queues and the native executor's primitives, and prints one
 * "NAME NS" line per cost. scripts/calibrate.py adds each policy's per-task overhead (whole
 * native runs) and writes the cost file; `make calibrate` runs both.
 *
 * Every figure is the smallest of ROUNDS rounds, each the mean over many operations: another
 * process that takes the core, or the partner thread's, only ever adds time, so the fastest round
 * is the one closest to the operation's own cost on a busy machine. Timed with the native clock
 * (sb_exec_now via sb_now_ns). Costs that need two threads (a cache-line transfer, wake-up to
 * running) take a round trip between two threads and halve it; on a machine with one socket the
 * transfer to another socket cannot be measured, and is not printed (the caller keeps an
 * estimate and says so).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <urcu/urcu-memb.h>

#include "../core/exec.h"
#include "../core/queue.h"

#define ROUNDS 31
#define OPS 4096 /* queue operations per round: a deque and a fifo segment or two, all in cache */
#define PINGS 2000 /* round trips per round for the two-thread costs */

static struct sb_task tasks[OPS];

static double least(const double *v, int n)
{
	double m = v[0];
	for (int i = 1; i < n; i++)
		m = v[i] < m ? v[i] : m;
	return m;
}

/* ---- one thread: the queues, a spin iteration, a yield ---- */

struct qcosts {
	double push, pop, pop_empty, steal, steal_empty;
};

static struct qcosts queue_costs(void)
{
	double push[ROUNDS], pop[ROUNDS], empty[ROUNDS], steal[ROUNDS], sempty[ROUNDS];
	struct sb_deque d;
	if (sb_deque_init(&d, 14)) {
		fprintf(stderr, "calibrate: out of memory\n");
		exit(1);
	}
	for (int r = 0; r < ROUNDS; r++) {
		bool published = false;
		uint64_t t0 = sb_now_ns();
		for (int i = 0; i < OPS; i++)
			sb_deque_push(&d, &tasks[i], false);
		uint64_t t1 = sb_now_ns();
		for (int i = 0; i < OPS; i++)
			if (!sb_deque_pop(&d, &published))
				abort();
		uint64_t t2 = sb_now_ns();
		for (int i = 0; i < OPS; i++)
			if (sb_deque_pop(&d, &published))
				abort();
		uint64_t t3 = sb_now_ns();
		/* a thief's view: every task published (eager), then taken from the shared end */
		for (int i = 0; i < OPS; i++)
			sb_deque_push(&d, &tasks[i], true);
		uint64_t t4 = sb_now_ns();
		for (int i = 0; i < OPS; i++)
			if (!sb_deque_take(&d))
				abort();
		uint64_t t5 = sb_now_ns();
		for (int i = 0; i < OPS; i++)
			if (sb_deque_take(&d))
				abort();
		uint64_t t6 = sb_now_ns();
		push[r] = (double)(t1 - t0) / OPS;
		pop[r] = (double)(t2 - t1) / OPS;
		empty[r] = (double)(t3 - t2) / OPS;
		steal[r] = (double)(t5 - t4) / OPS;
		sempty[r] = (double)(t6 - t5) / OPS;
	}
	sb_deque_fini(&d);
	return (struct qcosts){ least(push, ROUNDS), least(pop, ROUNDS), least(empty, ROUNDS), least(steal, ROUNDS),
				least(sempty, ROUNDS) };
}

static double relax_cost(void)
{
	double v[ROUNDS];
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t0 = sb_now_ns();
		for (int i = 0; i < 100 * OPS; i++)
			sb_cpu_relax();
		v[r] = (double)(sb_now_ns() - t0) / (100 * OPS);
	}
	return least(v, ROUNDS);
}

static double yield_cost(void)
{
	double v[ROUNDS];
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t0 = sb_now_ns();
		for (int i = 0; i < OPS; i++)
			sb_exec_yield();
		v[r] = (double)(sb_now_ns() - t0) / OPS;
	}
	return least(v, ROUNDS);
}

/* ---- two threads: a cache line bounced between them; a park and its wake-up ---- */

static _Atomic uint32_t ball __attribute__((aligned(64)));
static SB_ATOMIC_U32 word[2] __attribute__((aligned(64)));
static _Atomic uint64_t wake_ns; /* the partner's total time inside its wake calls */

/* Line: each thread waits for its parity and increments, so every increment moves the line. */
static void *line_partner(void *arg)
{
	uint32_t n = (uint32_t)(uintptr_t)arg;
	for (uint32_t v = 1; v < n; v += 2) {
		/* acquire/release: the ball is the only data; pairs with the other thread's store */
		while (atomic_load_explicit(&ball, memory_order_acquire) != v)
			sb_cpu_relax();
		atomic_store_explicit(&ball, v + 1, memory_order_release);
	}
	return NULL;
}

/* Short rounds, many of them: the two threads must share the two cores undisturbed for a whole
 * round, which on a busy machine happens only for short stretches. */
#define LINE_ROUNDS 201
#define LINE_PINGS 200

static double line_cost(void)
{
	double v[LINE_ROUNDS];
	for (int r = 0; r < LINE_ROUNDS; r++) {
		struct sb_xthread th;
		uint64_t t0 = 0;
		/* relaxed: no thread reads it before the start below publishes it */
		atomic_store_explicit(&ball, 0, memory_order_relaxed);
		if (sb_exec_thread_start(&th, "line", line_partner, (void *)(uintptr_t)(2 * LINE_PINGS + 2)))
			abort();
		/* one round trip first, so that the clock starts once the partner runs */
		uint32_t x = 1;
		for (;; x += 2) {
			/* release/acquire: as in line_partner */
			atomic_store_explicit(&ball, x, memory_order_release);
			while (atomic_load_explicit(&ball, memory_order_acquire) != x + 1)
				sb_cpu_relax();
			if (x == 1)
				t0 = sb_now_ns();
			if (x + 1 == 2 * LINE_PINGS + 2)
				break;
		}
		uint64_t t1 = sb_now_ns();
		sb_exec_thread_join(&th);
		v[r] = (double)(t1 - t0) / (2 * LINE_PINGS); /* two transfers per round trip */
	}
	return least(v, LINE_ROUNDS);
}

/* Park/wake: thread i parks on word[i] until it reads 1; the other sets it, notes the time and
 * wakes it. wake: the waker's call; park: from that call to the sleeper running again. Every
 * hand-off's park is also kept (thread i writes only lat[i]), for park's percentiles: the mean of
 * the fastest round is the cost on a quiet core, the percentiles are how far a park strays from it
 * (a halted virtual CPU, a neighbour on the core), which a latency tail is made of. */
#define HANDOFFS (ROUNDS * (PINGS / 4)) /* parks per thread over all rounds */
static _Atomic uint64_t sent_at, park_ns, partner_cpu;
static double lat[2][HANDOFFS];
static int nlat[2];

static void hand_over(int to)
{
	/* relaxed: ordered before the word's release store below, read after its acquire load */
	atomic_store_explicit(&sent_at, sb_now_ns(), memory_order_relaxed);
	/* release: pairs with the acquire load in wait_turn */
	atomic_store_explicit(&word[to], 1, memory_order_release);
	uint64_t t0 = sb_now_ns();
	sb_exec_unpark(&word[to], 1);
	/* relaxed: a sum read after the join */
	atomic_fetch_add_explicit(&wake_ns, sb_now_ns() - t0, memory_order_relaxed);
}

static void wait_turn(int me)
{
	/* acquire: pairs with the release store in hand_over */
	while (!atomic_load_explicit(&word[me], memory_order_acquire))
		sb_exec_park(&word[me], 0, 0);
	/* relaxed: sent_at was stored before the word (see hand_over); the sum is read after the join */
	uint64_t dt = sb_now_ns() - atomic_load_explicit(&sent_at, memory_order_relaxed);
	atomic_fetch_add_explicit(&park_ns, dt, memory_order_relaxed);
	if (nlat[me] < HANDOFFS)
		lat[me][nlat[me]++] = (double)dt; /* read after the join */
	/* relaxed: only this thread reads its word until it hands over, which orders it */
	atomic_store_explicit(&word[me], 0, memory_order_relaxed);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *park_partner(void *arg)
{
	uint64_t c0 = thread_cpu_ns();
	for (int i = 0; i < PINGS / 4; i++) {
		wait_turn(1);
		hand_over(0);
	}
	/* relaxed: read after the join */
	atomic_store_explicit(&partner_cpu, thread_cpu_ns() - c0, memory_order_relaxed);
	return NULL;
}

/* wake, park, and park_cpu: the CPU the two threads' parks cost themselves (their CPU time over
 * the round less their wake calls, per park: the futex wait, the switches away and back, and the
 * hand-off's few clock reads), every round's (pc), since the rounds split by where the two
 * threads ran: on one CPU (about 0.2 us a park on the AMD EPYC host) or on two (1.2 to 3.8 us),
 * in proportions that change from one calibration to the next (calibrate.py chooses). */
static void park_costs(double *wake, double *park, double pc[ROUNDS])
{
	double w[ROUNDS], p[ROUNDS];
	for (int r = 0; r < ROUNDS; r++) {
		struct sb_xthread th;
		/* relaxed: published by the thread start */
		atomic_store_explicit(&wake_ns, 0, memory_order_relaxed);
		atomic_store_explicit(&park_ns, 0, memory_order_relaxed);
		if (sb_exec_thread_start(&th, "park", park_partner, NULL))
			abort();
		uint64_t c0 = thread_cpu_ns();
		for (int i = 0; i < PINGS / 4; i++) {
			hand_over(1);
			wait_turn(0);
		}
		uint64_t cpu = thread_cpu_ns() - c0;
		sb_exec_thread_join(&th);
		double handoffs = 2.0 * (PINGS / 4);
		/* relaxed: the join ordered the partner's additions */
		uint64_t woke = atomic_load_explicit(&wake_ns, memory_order_relaxed);
		w[r] = (double)woke / handoffs;
		p[r] = (double)atomic_load_explicit(&park_ns, memory_order_relaxed) / handoffs;
		cpu += atomic_load_explicit(&partner_cpu, memory_order_relaxed);
		pc[r] = cpu > woke ? (double)(cpu - woke) / handoffs : 0;
	}
	*wake = least(w, ROUNDS);
	*park = least(p, ROUNDS);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The 10th, 50th, 90th, 99th and 99.9th percentiles of v[0..n) (nearest rank) into q[0..4]; sorts v. */
static void percentiles(double *v, int n, double q[5])
{
	qsort(v, (size_t)n, sizeof *v, by_value);
	static const double at[5] = { 0.10, 0.50, 0.90, 0.99, 0.999 };
	for (int k = 0; k < 5; k++) {
		int r = (int)(at[k] * n + 0.999999); /* nearest rank, 1-based */
		q[k] = n ? v[(r < 1 ? 1 : r > n ? n : r) - 1] : 0;
	}
}

/* park's percentiles over every hand-off of park_costs */
static void park_percentiles(double q[5])
{
	static double all[2 * HANDOFFS];
	int n = 0;
	for (int t = 0; t < 2; t++)
		for (int i = 0; i < nlat[t]; i++)
			all[n++] = lat[t][i];
	percentiles(all, n, q);
}

/* ---- timed sleeps, and parks that last ---- */

/* A hand-off measures a park of microseconds between two running threads. A workload's worker
 * often sleeps a millisecond or more, and its way back depends on what the machine did meanwhile:
 * measured on the 2-core host, a sleeper woken by a thread that kept running the whole time took
 * 70-90 us at the median once it had slept 150 us or more (10 us below that), while one woken by
 * a thread that had just come back from a timed sleep took 3 to 5 us with a tail of milliseconds.
 * And a timed sleep returns late (timer slack, a halted CPU): 90 to 125 us there. The simulator
 * draws from these, by the sleep's length and the waker's (sim/exec_sim.cpp). */
#define LONG_PARKS 1000
#define KNEE_PARKS 200

static SB_ATOMIC_U32 lp_word __attribute__((aligned(64)));
static _Atomic uint64_t lp_sent;
static double lp_lat[LONG_PARKS];

static void *long_partner(void *arg)
{
	int n = (int)(intptr_t)arg;
	for (int i = 0; i < n; i++) {
		/* acquire: pairs with the release store in long_parks */
		while (!atomic_load_explicit(&lp_word, memory_order_acquire))
			sb_exec_park(&lp_word, 0, 0);
		/* relaxed: stored before the word's release store, read after its acquire load */
		lp_lat[i] = (double)(sb_now_ns() - atomic_load_explicit(&lp_sent, memory_order_relaxed));
		/* release: pairs with the waker's acquire load; lp_lat[i] is read after the join */
		atomic_store_explicit(&lp_word, 0, memory_order_release);
	}
	return NULL;
}

static void spin_ns(uint64_t ns)
{
	uint64_t t0 = sb_now_ns();
	while (sb_now_ns() - t0 < ns)
		sb_cpu_relax();
}

/* n parks of the partner, each after this thread spent ns spinning (busy) or in a timed sleep,
 * then woke it: the time from the wake call to the partner running, in lp_lat[0..n). */
static void long_parks(uint64_t ns, bool busy, int n)
{
	struct sb_xthread th;
	/* relaxed: published by the thread start */
	atomic_store_explicit(&lp_word, 0, memory_order_relaxed);
	if (sb_exec_thread_start(&th, "longpark", long_partner, (void *)(intptr_t)n))
		abort();
	for (int i = 0; i < n; i++) {
		if (busy)
			spin_ns(ns);
		else
			sb_exec_sleep_ns(ns);
		/* relaxed, then release: as in hand_over */
		atomic_store_explicit(&lp_sent, sb_now_ns(), memory_order_relaxed);
		atomic_store_explicit(&lp_word, 1, memory_order_release);
		sb_exec_unpark(&lp_word, 1);
		/* acquire: pairs with the partner's release store: it ran before the next round */
		while (atomic_load_explicit(&lp_word, memory_order_acquire))
			sb_cpu_relax();
	}
	sb_exec_thread_join(&th);
}

static double median_of(double *v, int n)
{
	double q[5];
	percentiles(v, n, q);
	return q[1];
}

/* park_long_after: the first of a series of sleep lengths at which a park woken by a running thread
 * takes at least twice its median at the shortest; park_busy_* and park_idle_*: the percentiles
 * of a 1 ms park woken by a running thread and by one just back from a 1 ms timed sleep. */
static void long_park_costs(double *after, double busy[5], double idle[5])
{
	static const uint64_t len[] = { 25000, 50000, 100000, 150000, 200000, 300000, 500000, 1000000 };
	enum { NLEN = sizeof len / sizeof len[0] };
	double base = 0;
	*after = 1e6; /* no knee: long parks from 1 ms on, the length the two groups are measured at */
	for (int k = 0; k < NLEN; k++) {
		long_parks(len[k], true, KNEE_PARKS);
		double m = median_of(lp_lat, KNEE_PARKS);
		fprintf(stderr, "calibrate: park after %llu us, waker running: median %.1f us\n",
			(unsigned long long)(len[k] / 1000), m / 1000);
		if (k == 0)
			base = m;
		else if (m >= 2 * base && *after >= 1e6) {
			*after = (double)len[k];
			break;
		}
	}
	long_parks(1000000, true, LONG_PARKS);
	percentiles(lp_lat, LONG_PARKS, busy);
	long_parks(1000000, false, LONG_PARKS);
	percentiles(lp_lat, LONG_PARKS, idle);
}

/* How late a timed sleep of ns returns: percentiles over LONG_PARKS sleeps. */
static void over_costs(uint64_t ns, double q[5])
{
	static double v[LONG_PARKS];
	for (int i = 0; i < LONG_PARKS; i++) {
		uint64_t t0 = sb_now_ns();
		sb_exec_sleep_ns(ns);
		v[i] = (double)(sb_now_ns() - t0 - ns);
	}
	percentiles(v, LONG_PARKS, q);
}

static void print_group(const char *name, const double q[5])
{
	static const char *const at[5] = { "p10", "p50", "p90", "p99", "p999" };
	for (int k = 0; k < 5; k++)
		printf("%s_%s %.1f\n", name, at[k], q[k]);
}

/* ---- where a woken thread runs: beside its waker, or on its CPU ahead of it ---- */

/* The chain of a request (wake at 2 workers): a thread back from a timed sleep wakes A; A, having
 * run R us since, wakes B, and both sweep (spin) STACK_SPIN before A waits for B. Seen on the
 * 2-core host (results/paper/wake-placement/): B often runs on A's CPU inside A's wake call, A
 * then waiting for its own CPU though the other one is idle, in a share that depends on R (on that
 * host under 0.3 below 2 us, 0.8 to 0.9 from 2 to 100 us, 0.1 to 0.2 from 200 us) and on where the
 * threads ran before: with A waiting instead of sweeping after its wake call the share from 2 to
 * 100 us was 0.3 to 0.4. wake_stack_<R>us: the share of rounds in which B ran on the CPU A woke it
 * from before A's wake call returned, for each R of SB_WAKE_STACK_US (core/exec.h), the rounds of
 * all R shuffled together so the machine's drift spreads over all of them. */
#define STACK_ROUNDS 60 /* per run length */
#define STACK_SPIN 50000 /* A's and B's sweeps, ns: a searcher's empty rounds */

static SB_ATOMIC_U32 sw_a, sw_b, sw_done;
static _Atomic uint64_t sa_run, sb_run, sb_at;
static _Atomic int sb_cpu;
static _Atomic bool s_quit;

static void stack_wait(SB_ATOMIC_U32 *w)
{
	/* acquire: pairs with stack_post's release store */
	while (!atomic_load_explicit(w, memory_order_acquire))
		sb_exec_park(w, 0, 0);
	atomic_store_explicit(w, 0, memory_order_relaxed); /* only this thread reads it until the next post */
}

/* a thread's next round: false once the calibrating thread has said to stop */
static bool stack_round(SB_ATOMIC_U32 *w)
{
	stack_wait(w);
	/* relaxed: s_quit was stored before the post this thread's acquire saw */
	return !atomic_load_explicit(&s_quit, memory_order_relaxed);
}

static void stack_post(SB_ATOMIC_U32 *w)
{
	atomic_store_explicit(w, 1, memory_order_release);
	sb_exec_unpark(w, 1);
}

static void *stack_b(void *arg)
{
	(void)arg;
	while (stack_round(&sw_b)) {
		/* relaxed: read by A after the post below (its acquire) */
		atomic_store_explicit(&sb_cpu, sched_getcpu(), memory_order_relaxed);
		atomic_store_explicit(&sb_at, sb_now_ns(), memory_order_relaxed);
		/* relaxed: stored before the post this thread's acquire saw */
		spin_ns(atomic_load_explicit(&sb_run, memory_order_relaxed));
		stack_post(&sw_a);
	}
	return NULL;
}

/* A: woken by the calibrating thread, runs, wakes B, waits for B's post; the result in sw_done's
 * word: 2 stacked, 1 not */
static void *stack_a(void *arg)
{
	(void)arg;
	while (stack_round(&sw_a)) {
		/* relaxed: stored before the post this thread's acquire saw */
		spin_ns(atomic_load_explicit(&sa_run, memory_order_relaxed));
		int cpu = sched_getcpu();
		stack_post(&sw_b);
		uint64_t back = sb_now_ns();
		/* A runs on as B does (the two searchers of a chain, each sweeping), then waits for B */
		spin_ns(STACK_SPIN);
		stack_wait(&sw_a);
		/* relaxed: B stored them before its post (acquired in stack_wait) */
		bool stacked = atomic_load_explicit(&sb_cpu, memory_order_relaxed) == cpu &&
			       atomic_load_explicit(&sb_at, memory_order_relaxed) < back;
		atomic_store_explicit(&sw_done, stacked ? 2 : 1, memory_order_release); /* pairs with the poll */
	}
	return NULL;
}

/* One round: a request thread's gap, then A (woken by this thread, back from that timer) runs
 * run_ns and wakes B. True if B ran on A's CPU ahead of it. */
static bool stack_once(uint64_t run_ns)
{
	sb_exec_sleep_ns(1000000); /* a request thread's gap: A's waker is back from a timer */
	atomic_store_explicit(&sw_done, 0, memory_order_relaxed); /* A stores it only after the post */
	atomic_store_explicit(&sa_run, run_ns, memory_order_relaxed); /* ordered by the post */
	stack_post(&sw_a);
	uint32_t r;
	/* acquire: pairs with A's release store of its result */
	while (!(r = atomic_load_explicit(&sw_done, memory_order_acquire)))
		sb_exec_sleep_ns(100000);
	return r == 2;
}

/* wake_stack_duty_<D> (core/exec.h): A runs DUTY_WAKER us each round and B, the wakee, runs so long
 * that it is busy D% of the time; the rounds of one D in a block, after DUTY_WARM rounds that let the
 * kernel's average of B (32 ms half-life) settle at D. The R runs' B spins STACK_SPIN a round; its
 * round's other time (the gap, A's run, the wake-ups) is measured first and B's run for D is
 * D / (100 - D) of it. On the 2-core host a B at 4.5% was stacked in 93 to 100 of 100 rounds, at
 * 15% in 1 to 30, at 60% in none: where a wakee that lately ran long goes, the kernel does not
 * put it ahead of its waker. */
#define DUTY_ROUNDS 80
#define DUTY_WARM 30
#define DUTY_WAKER 20000 /* ns: where the R runs' share is high */
static void wake_stack_duty(double share[SB_NR_WAKE_DUTY])
{
	static const int pc[SB_NR_WAKE_DUTY] = SB_WAKE_DUTY_PC;
	atomic_store_explicit(&sb_run, STACK_SPIN, memory_order_relaxed); /* ordered by the posts */
	uint64_t t0 = sb_now_ns();
	for (int i = 0; i < DUTY_WARM; i++)
		stack_once(DUTY_WAKER);
	double other = (double)(sb_now_ns() - t0) / DUTY_WARM - STACK_SPIN;
	for (int k = 0; k < SB_NR_WAKE_DUTY; k++) {
		double run = other * pc[k] / (100.0 - pc[k]);
		atomic_store_explicit(&sb_run, (uint64_t)run, memory_order_relaxed); /* ordered by the posts */
		int stacked = 0;
		for (int i = 0; i < DUTY_WARM; i++)
			stack_once(DUTY_WAKER);
		uint64_t t1 = sb_now_ns();
		for (int i = 0; i < DUTY_ROUNDS; i++)
			stacked += stack_once(DUTY_WAKER);
		double round = (double)(sb_now_ns() - t1) / DUTY_ROUNDS;
		share[k] = (double)stacked / DUTY_ROUNDS;
		fprintf(stderr, "calibrate: a wakee busy %d%% (%.0f of %.0f us a round) ran ahead of its waker: %d of %d\n",
			pc[k], run / 1000, round / 1000, stacked, DUTY_ROUNDS);
	}
	atomic_store_explicit(&sb_run, STACK_SPIN, memory_order_relaxed);
}

/* wake_stack_<R>us into share[] and wake_stack_duty_<D> into duty[]; false where a thread cannot
 * tell its CPU */
static bool wake_stack_costs(double share[SB_NR_WAKE_STACK], double duty[SB_NR_WAKE_DUTY])
{
	static const int run_us[SB_NR_WAKE_STACK] = SB_WAKE_STACK_US;
	enum { NSTACK = SB_NR_WAKE_STACK };
	if (sched_getcpu() < 0)
		return false;
	struct sb_xthread a, b;
	atomic_store_explicit(&s_quit, false, memory_order_relaxed); /* published by the thread start */
	atomic_store_explicit(&sb_run, STACK_SPIN, memory_order_relaxed); /* likewise */
	if (sb_exec_thread_start(&a, "stack_a", stack_a, NULL) || sb_exec_thread_start(&b, "stack_b", stack_b, NULL))
		abort();
	int stacked[NSTACK] = { 0 }, order[STACK_ROUNDS * NSTACK];
	for (int i = 0; i < STACK_ROUNDS * NSTACK; i++)
		order[i] = i % NSTACK;
	/* shuffled, not in turn: where B ran last (where the kernel looks first) follows the round
	 * before, and in turn each length would always follow the same one */
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int i = STACK_ROUNDS * NSTACK - 1; i > 0; i--) {
		x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
		int j = (int)((x * 0x2545f4914f6cdd1dull >> 33) % (uint64_t)(i + 1)), t = order[i];
		order[i] = order[j], order[j] = t;
	}
	for (int i = 0; i < STACK_ROUNDS * NSTACK; i++)
		stacked[order[i]] += stack_once((uint64_t)run_us[order[i]] * 1000);
	for (int k = 0; k < NSTACK; k++) {
		share[k] = (double)stacked[k] / STACK_ROUNDS;
		fprintf(stderr, "calibrate: a wakee ran ahead of its waker on its CPU after the waker ran %d us: %d of %d\n",
			run_us[k], stacked[k], STACK_ROUNDS);
	}
	wake_stack_duty(duty);
	atomic_store_explicit(&s_quit, true, memory_order_relaxed); /* ordered by the posts */
	stack_post(&sw_a);
	stack_post(&sw_b);
	sb_exec_thread_join(&a);
	sb_exec_thread_join(&b);
	return true;
}

/* ---- the OS scheduler's time slice ---- */

/* Two threads spinning on one CPU take turns; each notes the stretches it ran without a gap of
 * more than SLICE_GAP ns in its clock readings (a tick or an interrupt is shorter; a turn of the
 * other thread is a slice). slice: the median stretch. Plain pthreads pinned to the calling
 * thread's CPU: this measures the OS, not the executor. */
#define SLICE_GAP 50000
#define SLICE_RUNS 512
#define SLICE_NS 1000000000ull

/* 0 when the calling thread now runs on cpu alone */
static int pin_to(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

struct slice_rec {
	int cpu;
	int n;
	double run[SLICE_RUNS];
};

static void *slice_spinner(void *arg)
{
	struct slice_rec *r = arg;
	if (pin_to(r->cpu))
		return NULL; /* not pinned: no turns to see, n stays 0 */
	uint64_t start = sb_now_ns(), last = start, end = start + SLICE_NS;
	while (last < end) {
		uint64_t t = sb_now_ns();
		if (t - last > SLICE_GAP) {
			if (r->n < SLICE_RUNS)
				r->run[r->n++] = (double)(last - start);
			start = t;
		}
		last = t;
	}
	return NULL;
}

/* 0 when the two threads could not be put on one CPU or never took turns */
static double slice_cost(void)
{
	static struct slice_rec rec[2];
	int cpu = sched_getcpu();
	pthread_t th[2];
	for (int i = 0; i < 2; i++) {
		rec[i].cpu = cpu < 0 ? 0 : cpu;
		if (pthread_create(&th[i], NULL, slice_spinner, &rec[i]))
			abort();
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	/* the first stretch of each began at its start, not at a turn: left out */
	static double all[2 * SLICE_RUNS];
	int n = 0;
	for (int i = 0; i < 2; i++)
		for (int k = 1; k < rec[i].n; k++)
			all[n++] = rec[i].run[k];
	if (n < 10)
		return 0;
	double q[5];
	percentiles(all, n, q);
	fprintf(stderr, "calibrate: two spinners on one CPU: %d turns, median %.0f us (p10 %.0f, p90 %.0f)\n", n,
		q[1] / 1000, q[0] / 1000, q[2] / 1000);
	return q[1];
}

/* ---- a wake-up on a CPU another thread holds ---- */

/* Plain pthreads: a sleeper pinned to CPU 0 beside a holder there, woken from CPU 1 (the calling
 * thread, pinned there), so that the kernel must interrupt CPU 0 to run it. Measured on the 2-core
 * Intel host (results/paper/wake-interrupt/): such a wake-up cost the woken thread 21 to 31 us of
 * CPU against 1.7 to 2.5 us when its waker, on its CPU, let it run as the wake call returned. */
#define HELD_WAKES 2000 /* wake-ups per wake_interrupt round */
#define HELD_ROUNDS 5
#define HELD_GAP 200000 /* ns between two of them: the sleeper is back asleep long before */
#define PREEMPT_ROUNDS 80
#define PREEMPT_WARM 30
#define PREEMPT_HOLDER 15 /* the holder's duty, percent, for wake_preempt_<R> */
/* ns the holder runs a round (its period gives its duty); the wakee is woken a quarter in, so
 * that the wake-up's own delay (about wake_interrupt) ends well inside the burst */
#define PREEMPT_BURST 200000

static SB_ATOMIC_U32 held_sleeper, held_holder;
static _Atomic uint64_t held_start, held_end, held_ran, held_cpu_ns, held_wakes, held_wakee_run;
static _Atomic int held_mode; /* 0 stop, 1 spin (wake_interrupt's holder), 2 a burst a round (wake_preempt's) */

/* The wakee: back from each wake-up it notes when it ran, adds its own CPU so far, and sleeps. */
static void *held_wakee(void *arg)
{
	(void)arg;
	pin_to(0);
	uint64_t c0 = thread_cpu_ns();
	/* relaxed: the mode is set before the post that wakes it (stack_post's release) */
	while (atomic_load_explicit(&held_mode, memory_order_relaxed)) {
		stack_wait(&held_sleeper);
		atomic_store_explicit(&held_ran, sb_now_ns(), memory_order_release); /* pairs with the caller's poll */
		spin_ns(atomic_load_explicit(&held_wakee_run, memory_order_relaxed)); /* set before the post */
		atomic_fetch_add_explicit(&held_wakes, 1, memory_order_relaxed); /* read after the join */
		atomic_store_explicit(&held_cpu_ns, thread_cpu_ns() - c0, memory_order_relaxed); /* likewise */
	}
	return NULL;
}

/* The holder: mode 1 spins until told to stop; mode 2 runs PREEMPT_BURST each time it is woken. */
static void *held_holder_fn(void *arg)
{
	(void)arg;
	pin_to(0);
	for (int m; (m = atomic_load_explicit(&held_mode, memory_order_relaxed));) {
		if (m == 1)
			continue;
		stack_wait(&held_holder);
		if (!atomic_load_explicit(&held_mode, memory_order_relaxed))
			break;
		uint64_t t = sb_now_ns();
		atomic_store_explicit(&held_start, t, memory_order_release); /* pairs with the caller's poll */
		spin_ns(PREEMPT_BURST);
		atomic_store_explicit(&held_end, sb_now_ns(), memory_order_release); /* likewise */
	}
	return NULL;
}

/* PREEMPT_WARM + PREEMPT_ROUNDS rounds of period_ns: the holder is woken and runs PREEMPT_BURST,
 * the wakee is woken a quarter into it; the rounds after the warm ones in which the wakee ran
 * before the burst ended */
static int preempt_rounds(uint64_t period_ns)
{
	int ran_first = 0;
	for (int i = 0; i < PREEMPT_WARM + PREEMPT_ROUNDS; i++) {
		uint64_t t0 = sb_now_ns();
		/* relaxed: stack_post's release orders them before the round's stores by the others */
		atomic_store_explicit(&held_start, 0, memory_order_relaxed);
		atomic_store_explicit(&held_end, 0, memory_order_relaxed);
		atomic_store_explicit(&held_ran, 0, memory_order_relaxed);
		stack_post(&held_holder);
		uint64_t start, end, ran;
		/* acquire: pairs with the holder's and the wakee's release stores */
		while (!(start = atomic_load_explicit(&held_start, memory_order_acquire)))
			;
		while (sb_now_ns() < start + PREEMPT_BURST / 4)
			;
		stack_post(&held_sleeper);
		while (!(end = atomic_load_explicit(&held_end, memory_order_acquire)) ||
		       !(ran = atomic_load_explicit(&held_ran, memory_order_acquire)))
			;
		ran_first += i >= PREEMPT_WARM && ran < end;
		while (sb_now_ns() < t0 + period_ns)
			;
	}
	return ran_first;
}

/* wake_interrupt: the sleeper's CPU per wake-up beside a spinning holder, the median of
 * HELD_ROUNDS rounds (a round's wake-ups at HELD_GAP); wake_preempt_<R>: of PREEMPT_ROUNDS
 * wake-ups inside the holder's burst, the holder busy PREEMPT_HOLDER% of the time and the wakee R%
 * as much (PREEMPT_WARM rounds first let the kernel's averages settle), the share in which the
 * wakee ran before the burst ended. Also reported: R = 0 with holders busy 5% and 60%. False
 * where two CPUs cannot be had. */
static bool held_costs(double *interrupt, double preempt[SB_NR_WAKE_PREEMPT])
{
	static const int pc[SB_NR_WAKE_PREEMPT] = SB_WAKE_PREEMPT_PC;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || pin_to(1))
		return false;
	pthread_t w, h;
	atomic_store_explicit(&held_mode, 1, memory_order_relaxed); /* published by the thread starts */
	if (pthread_create(&w, NULL, held_wakee, NULL) || pthread_create(&h, NULL, held_holder_fn, NULL))
		abort();
	sb_exec_sleep_ns(50000000);
	double per[HELD_ROUNDS];
	for (int r = 0; r < HELD_ROUNDS; r++) {
		/* relaxed: the wakee's; a round later they have moved by its wake-ups in the round */
		uint64_t c0 = atomic_load_explicit(&held_cpu_ns, memory_order_relaxed);
		uint64_t n0 = atomic_load_explicit(&held_wakes, memory_order_relaxed);
		for (int i = 0; i < HELD_WAKES; i++) {
			spin_ns(HELD_GAP);
			stack_post(&held_sleeper);
		}
		spin_ns(HELD_GAP);
		uint64_t n = atomic_load_explicit(&held_wakes, memory_order_relaxed) - n0;
		per[r] = n ? (double)(atomic_load_explicit(&held_cpu_ns, memory_order_relaxed) - c0) / (double)n : 0;
	}
	*interrupt = median_of(per, HELD_ROUNDS);
	fprintf(stderr, "calibrate: a wake-up onto a CPU another thread spins on cost the woken thread %.1f us of CPU\n",
		*interrupt / 1000);
	atomic_store_explicit(&held_mode, 2, memory_order_relaxed); /* the holder sees it between two spins */
	sb_exec_sleep_ns(10000000);
	for (int k = 0; k < SB_NR_WAKE_PREEMPT; k++) {
		/* ordered before the wakee's next run by the posts */
		atomic_store_explicit(&held_wakee_run, (uint64_t)PREEMPT_BURST * (uint64_t)pc[k] / 100, memory_order_relaxed);
		int ran_first = preempt_rounds((uint64_t)PREEMPT_BURST * 100 / PREEMPT_HOLDER);
		preempt[k] = (double)ran_first / PREEMPT_ROUNDS;
		fprintf(stderr, "calibrate: a wakee busy %d%% as much as a holder busy %d%% ran before its burst ended: %d of %d\n",
			pc[k], PREEMPT_HOLDER, ran_first, PREEMPT_ROUNDS);
	}
	atomic_store_explicit(&held_wakee_run, 0, memory_order_relaxed);
	for (int d = 5; d <= 60; d += 55)
		fprintf(stderr, "calibrate: an idle wakee ran before a holder busy %d%% ended its burst: %d of %d\n", d,
			preempt_rounds((uint64_t)PREEMPT_BURST * 100 / (uint64_t)d), PREEMPT_ROUNDS);
	atomic_store_explicit(&held_mode, 0, memory_order_relaxed); /* ordered by the posts */
	stack_post(&held_holder);
	stack_post(&held_sleeper);
	pthread_join(h, NULL);
	pthread_join(w, NULL);
	return true;
}

/* ---- what the machine takes from a running thread ---- */

/* One thread per online CPU, pinned, spins for NOISE_NS reading the clock; a gap of NOISE_GAP ns
 * or more between two reads is time the thread did not have (an interrupt, the kernel's or the
 * hypervisor's work, another process). All threads at once, as a run's workers spin or work on
 * every CPU. noise_every: the threads' time less their gaps, over the gaps; noise_p*: the gaps'
 * lengths. The simulator takes that much from each stretch of CPU time (sim/exec_sim.cpp). */
#define NOISE_NS 1000000000ull
#define NOISE_GAP 2000
#define NOISE_MAX 65536

struct noise_rec {
	int cpu;
	int n;
	uint64_t lost, span;
	double gap[NOISE_MAX];
};

static void *noise_spinner(void *arg)
{
	struct noise_rec *r = arg;
	(void)pin_to(r->cpu); /* unpinned, it still sees the gaps */
	uint64_t start = sb_now_ns(), last = start, end = start + NOISE_NS;
	while (last < end) {
		uint64_t t = sb_now_ns();
		if (t - last >= NOISE_GAP && r->n < NOISE_MAX) {
			r->gap[r->n++] = (double)(t - last);
			r->lost += t - last;
		}
		last = t;
	}
	r->span = last - start;
	return NULL;
}

/* false when no gap was seen (then the table has no noise) */
static bool noise_costs(double *every, double q[5])
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	ncpu = ncpu < 1 ? 1 : ncpu > 256 ? 256 : ncpu;
	struct noise_rec *rec = calloc((size_t)ncpu, sizeof *rec);
	pthread_t *th = calloc((size_t)ncpu, sizeof *th);
	if (!rec || !th)
		abort();
	for (long i = 0; i < ncpu; i++) {
		rec[i].cpu = (int)i;
		if (pthread_create(&th[i], NULL, noise_spinner, &rec[i]))
			abort();
	}
	uint64_t lost = 0, span = 0;
	int n = 0;
	for (long i = 0; i < ncpu; i++) {
		pthread_join(th[i], NULL);
		lost += rec[i].lost;
		span += rec[i].span;
		n += rec[i].n;
	}
	double *all = malloc((size_t)(n ? n : 1) * sizeof *all);
	if (!all)
		abort();
	int k = 0;
	for (long i = 0; i < ncpu; i++)
		for (int j = 0; j < rec[i].n; j++)
			all[k++] = rec[i].gap[j];
	if (n)
		percentiles(all, n, q);
	*every = n ? (double)(span - lost) / n : 0;
	fprintf(stderr, "calibrate: %ld spinning threads lost %.2f%% of their time in %d gaps of %d ns or more "
		"(median %.1f us, p99 %.1f us)\n", ncpu, span ? 100.0 * (double)lost / (double)span : 0.0, n,
		NOISE_GAP, n ? q[1] / 1000 : 0.0, n ? q[3] / 1000 : 0.0);
	free(all);
	free(th);
	free(rec);
	return n > 0;
}

/* ---- a task whose memory lies far back in the caches ---- */

/* ns per step of walks around a ring of n tasks linked through node.next in a shuffled order (a
 * free list, or a queue's tasks as a program leaves them in memory: in address order the
 * prefetcher would hide every miss), one figure per walk into ns[0 .. walks-1]. Each step loads
 * the task the last one named, so a miss is paid whole: a worker taking a cold task waits for it
 * before it can run it, and an atomic update of a cold join waits for the line. Between two
 * visits of a task the walk touches the n - 1 others: a step's time is the latency at a reuse
 * distance of n. */
static void chain_walk(struct sb_task *ts, uint32_t *order, size_t n, int walks, double *ns)
{
	uint64_t x = 0x9e3779b97f4a7c15ull; /* Fisher-Yates, xorshift from a constant */
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	for (size_t i = n - 1; i > 0; i--) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t j = (size_t)(x % (i + 1));
		uint32_t s = order[i];
		order[i] = order[j], order[j] = s;
	}
	for (size_t i = 0; i < n; i++)
		atomic_store_explicit(&ts[order[i]].node.next, &ts[order[(i + 1) % n]].node, memory_order_relaxed);
	/* at least 2^21 steps, and twice round the ring: the first lap brings it in */
	size_t steps = 2 * n > ((size_t)1 << 21) ? 2 * n : (size_t)1 << 21;
	for (int r = 0; r < walks; r++) {
		struct sb_node *p = &ts[order[0]].node;
		uint64_t t0 = sb_now_ns();
		for (size_t i = 0; i < steps; i++)
			p = atomic_load_explicit(&p->next, memory_order_relaxed);
		ns[r] = (double)(sb_now_ns() - t0) / (double)steps;
		if (!p)
			abort(); /* a ring has no end; and the walk is not optimised away */
	}
}

/* cold_K for K = COLD_LO + 1 .. COLD_HI (core/exec.h): the walk at 2^K tasks less the walk at
 * 2^COLD_L1 (in the L1 cache), never below 0. The median of every walk, COLD_SWEEPS sweeps over the
 * sizes of COLD_WALKS walks each, and not the fastest as for the primitives: how much of the
 * last-level cache a virtual machine gets moves with what its neighbours do, from one second to
 * the next (2^16 tasks: 29 to 104 ns a step on the 2-core host), and a run's tasks come back at
 * the share it usually has, not at the best one. */
enum { COLD_L1 = 6, COLD_LO = 8, COLD_HI = 22, COLD_SWEEPS = 5, COLD_WALKS = 3 };
static void cold_costs(double cold[COLD_HI + 1])
{
	struct sb_task *ts = calloc((size_t)1 << COLD_HI, sizeof *ts);
	uint32_t *order = malloc(sizeof *order << COLD_HI);
	if (!ts || !order) {
		fprintf(stderr, "calibrate: out of memory\n");
		exit(1);
	}
	enum { N = COLD_SWEEPS * COLD_WALKS };
	static double t[COLD_HI + 1][N];
	for (int r = 0; r < COLD_SWEEPS; r++)
		for (int k = COLD_L1; k <= COLD_HI; k++)
			if (k == COLD_L1 || k > COLD_LO)
				chain_walk(ts, order, (size_t)1 << k, COLD_WALKS, &t[k][r * COLD_WALKS]);
	double hot = 0;
	for (int k = COLD_L1; k <= COLD_HI; k++) {
		if (k > COLD_L1 && k <= COLD_LO)
			continue;
		double *v = t[k];
		for (int i = 1; i < N; i++) /* insertion sort: fifteen values */
			for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
				double y = v[j];
				v[j] = v[j - 1], v[j - 1] = y;
			}
		double m = v[N / 2];
		fprintf(stderr, "calibrate: a chain of 2^%d tasks: %.1f ns a step (walks %.1f to %.1f)\n", k, m, v[0],
			v[N - 1]);
		if (k == COLD_L1)
			hot = m;
		else
			cold[k] = m > hot ? m - hot : 0;
	}
	free(order);
	free(ts);
}

int main(void)
{
	urcu_memb_register_thread();
	struct qcosts q = queue_costs();
	double wake, park, park_cpu[ROUNDS];
	park_costs(&wake, &park, park_cpu);
	printf("push %.1f\npop %.1f\npop_empty %.1f\nsteal %.1f\nsteal_empty %.1f\n", q.push, q.pop, q.pop_empty,
	       q.steal, q.steal_empty);
	for (int r = 0; r < ROUNDS; r++)
		printf("park_cpu_round %.1f\n", park_cpu[r]);
	printf("wake %.1f\npark %.1f\nrelax %.1f\nyield %.1f\nline %.1f\n", wake, park, relax_cost(), yield_cost(),
	       line_cost());
	double cold[COLD_HI + 1];
	cold_costs(cold);
	for (int k = COLD_LO + 1; k <= COLD_HI; k++)
		printf("cold_%d %.1f\n", k, cold[k]);
	double pq[5], long_after, busy[5], idle[5], o100[5], o1ms[5];
	park_percentiles(pq);
	print_group("park", pq);
	long_park_costs(&long_after, busy, idle);
	printf("park_long_after %.0f\n", long_after);
	print_group("park_busy", busy);
	print_group("park_idle", idle);
	over_costs(100000, o100);
	over_costs(1000000, o1ms);
	print_group("over_100us", o100);
	print_group("over_1ms", o1ms);
	double stack[SB_NR_WAKE_STACK], duty[SB_NR_WAKE_DUTY];
	if (wake_stack_costs(stack, duty)) {
		for (int k = 0; k < SB_NR_WAKE_STACK; k++)
			printf("%s %.3f\n", sb_cost_names[SB_COST_WAKE_STACK_0US + k], stack[k]);
		for (int k = 0; k < SB_NR_WAKE_DUTY; k++)
			printf("%s %.3f\n", sb_cost_names[SB_COST_WAKE_STACK_DUTY_5 + k], duty[k]);
	} else
		fprintf(stderr, "calibrate: sched_getcpu is not available: no wake_stack\n");
	double every, nq[5];
	if (noise_costs(&every, nq)) {
		printf("noise_every %.0f\n", every);
		print_group("noise", nq);
	}
	double interrupt, preempt[SB_NR_WAKE_PREEMPT];
	if (held_costs(&interrupt, preempt)) {
		printf("wake_interrupt %.0f\n", interrupt);
		for (int k = 0; k < SB_NR_WAKE_PREEMPT; k++)
			printf("%s %.3f\n", sb_cost_names[SB_COST_WAKE_PREEMPT_0 + k], preempt[k]);
	} else
		fprintf(stderr, "calibrate: fewer than two CPUs to pin to: no wake_interrupt, no wake_preempt\n");
	double slice = slice_cost();
	if (slice > 0)
		printf("slice %.0f\n", slice);
	else
		fprintf(stderr, "calibrate: two spinners on one CPU never took turns (not pinned?): no slice\n");
	urcu_memb_unregister_thread();
	return 0;
}
