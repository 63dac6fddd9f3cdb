/*
 * idle.c - suspension and the wake protocol (core/idle.c): no lost parallelism, no lost wake-up.
 *
 * On every registered policy: work submitted to suspended workers still runs (no lost wake-up,
 * with a suspend timeout far longer than the watchdog), at the end of this file.
 *
 * The wake protocol uses every worker (issue 9):
 *
 * Two workers that may suspend (busy_worker=false) and would sleep a minute unless woken
 * (worker_suspend_timeout=60 s). Both are parked before each job starts, so the job reaches one
 * worker and the other works only if the wake protocol wakes it: a worker spawning onto its own
 * queue, a request thread pushing onto an awake worker's queue, yields and resumes must all wake
 * a sleeper to steal when nobody is searching. Each job is ~200 ms of busy work in small tasks.
 *
 * The first unit each worker runs waits (up to 30 s) until the other worker is inside its own
 * first unit too and a sampler thread has seen them both there with tasks queued. So the
 * outcome does not depend on how the kernel shares the cores: however long a woken worker waits
 * for one, the job cannot finish without it, and with a lost wake-up the sleeper never comes.
 * Asserted per worker, from its counters and from the sampler:
 *   - it was woken (its woken counter rose: both were parked, and a parked worker leaves its
 *     suspension only when woken or after the 60 s timeout) and ran tasks of the job;
 *   - the rendezvous was met (with a lost wake the first unit gives up after 30 s);
 *   - it was not suspended in every sample taken while tasks were queued (with a lost wake the
 *     sleeper is; the rendezvous' sample has neither suspended).
 * Nothing here is timed: the deadline only ends a broken run, and the samples only tell
 * suspended from not while work waits. With the first edition's wake rule (a spawn onto one's
 * own queue, or a push onto an awake worker's, wakes nobody; no searcher chain) every case fails.
 */
#include <pthread.h>
#include <time.h>

#include "../common.h"

#define WK_DEPTH 12                 /* fork-join tree: 4096 leaves */
#define WK_LEAVES (1u << WK_DEPTH)
#define WK_LEAF_NS 50000            /* 4096 x 50 us = 205 ms of work */
#define WK_FLAT 4096                /* tasks a request thread spawns */
#define WK_YR_TASKS 64              /* yield/resume: tasks ... */
#define WK_YR_SLICES 8              /* ... of this many slices, a yield between two */
#define WK_YR_SLICE_NS 400000       /* 64 x 8 x 400 us = 205 ms */
#define WK_MEET_NS 30000000000ull   /* the rendezvous gives up after 30 s: a lost wake-up */

static struct {
	_Atomic uint64_t units[2];      /* leaves or slices run, per worker */
	_Atomic int stop;
	_Atomic unsigned samples;       /* sampler: samples with tasks queued ... */
	_Atomic unsigned asleep[2];     /* ... in which worker i was suspended */
	_Atomic int inside[2];          /* worker i is in its first unit, waiting for the other */
	_Atomic int met;                /* the sampler saw both inside, with tasks queued */
	_Atomic int missed;             /* a first unit gave up waiting */
	_Atomic unsigned blocked;       /* yield/resume: tasks parked so far */
	struct sb_task *parked[WK_YR_TASKS];
	uint64_t before[2][SB_NR_COUNTERS]; /* each worker's counters with both parked, before the job */
} wk;

/* A worker's first unit waits until the sampler has seen both workers inside their first
 * units (or 30 s have passed: then the other was never woken). It sleeps meanwhile, so the
 * other worker and the sampler get a core however few there are. */
static void wk_meet(int w)
{
	atomic_store(&wk.inside[w], 1);
	uint64_t end = sb_now_ns() + WK_MEET_NS;
	while (!atomic_load(&wk.met) && !atomic_load(&wk.missed)) {
		if (sb_now_ns() > end)
			atomic_store(&wk.missed, 1);
		t_sleep_us(200);
	}
}

static void wk_unit(void)
{
	int w = sb_self_worker();
	cr_assert(w == 0 || w == 1, "work runs on a worker, not on thread %d", w);
	if (atomic_fetch_add(&wk.units[w], 1) == 0)
		wk_meet(w);
}

/* Not attached to the runtime: only snapshots that any thread may take. A sample in which both
 * workers are inside their first units finds neither suspended (each is in a task) and releases
 * them; the flags are read before the queues and the states, and stay set until then. */
static void *wk_sampler(void *arg)
{
	struct sb_rt *rt = arg;
	while (!atomic_load(&wk.stop)) {
		bool both = atomic_load(&wk.inside[0]) && atomic_load(&wk.inside[1]);
		size_t queued = 0;
		for (int w = -1; w < 2; w++)
			queued += t_queued(rt, w);
		if (queued) {
			atomic_fetch_add(&wk.samples, 1);
			for (unsigned i = 0; i < 2; i++)
				if (sb_worker_suspended(rt, i))
					atomic_fetch_add(&wk.asleep[i], 1);
			if (both)
				atomic_store(&wk.met, 1);
		}
		t_sleep_us(500);
	}
	return NULL;
}

/* Both workers parked: their counters before the job, then the sampler. */
static pthread_t start_sampling(struct sb_rt *rt)
{
	for (unsigned i = 0; i < 2; i++)
		sb_rt_worker_counters(rt, i, wk.before[i]);
	pthread_t th;
	atomic_store(&wk.stop, 0);
	pthread_create(&th, NULL, wk_sampler, rt);
	return th;
}

static void check_shares(struct sb_rt *rt, pthread_t sampler, uint64_t total, const char *what)
{
	atomic_store(&wk.stop, 1);
	pthread_join(sampler, NULL);
	const char *pol = sb_rt_policy(rt)->name;
	uint64_t u0 = atomic_load(&wk.units[0]), u1 = atomic_load(&wk.units[1]);
	cr_assert_eq(u0 + u1, total, "%s %s: every unit ran once", pol, what);
	cr_expect(!atomic_load(&wk.missed) && atomic_load(&wk.met),
		  "%s %s: one worker waited 30 s in its first unit for the other (worker 0 ran %llu units, worker 1 "
		  "%llu): a sleeper was not woken for work it could steal", pol, what, (unsigned long long)u0,
		  (unsigned long long)u1);
	unsigned n = atomic_load(&wk.samples);
	for (unsigned i = 0; i < 2; i++) {
		uint64_t c[SB_NR_COUNTERS];
		sb_rt_worker_counters(rt, i, c);
		uint64_t woken = c[SB_C_WOKEN] - wk.before[i][SB_C_WOKEN], run = c[SB_C_RUN] - wk.before[i][SB_C_RUN];
		cr_expect(woken >= 1 && run >= 1 && atomic_load(&wk.units[i]) >= 1,
			  "%s %s: worker %u was woken %llu times and ran %llu tasks, %llu units", pol, what, i,
			  (unsigned long long)woken, (unsigned long long)run, (unsigned long long)atomic_load(&wk.units[i]));
		unsigned a = atomic_load(&wk.asleep[i]);
		cr_expect(a < n, "%s %s: worker %u was suspended in %u of %u samples with tasks queued", pol, what, i, a, n);
	}
}

/* ---- the cases: the stealing family, in modes where any worker may run any of these tasks ---- */

struct wk_case {
	char policy[16];
	char sets[2][40];
};


static struct wk_case wk_cases[] = {
	{ "stealing", { "local_order=fifo" } },
	{ "stealing", { "local_order=lifo" } },
	{ "stealing", { "local_order=lifo", "steal_half=true" } },
	{ "stealing", { "local_order=lifo", "wake_fence=true" } }, /* the fallback without membarrier */
	{ "hybrid", { "local_order=fifo" } },   /* work_level JOIN > lightweight_job_level: stealing */
	{ "hybrid", { "local_order=lifo" } },
	{ "lanes", { "" } },                    /* plain (non-sticky) tasks: the family base */
	{ "txslot", { "" } },
	{ "distribution", { "distributor=mode" } },
};

static struct sb_rt *wk_rt(const struct wk_case *c)
{
	memset(&wk, 0, sizeof wk);
	const char *sets[] = { "busy_worker=false", "worker_suspend_timeout=60000000", c->sets[0], c->sets[1], NULL };
	if (!sets[3][0])
		sets[3] = NULL;
	if (!sets[2][0])
		sets[2] = NULL;
	struct sb_rt *rt = t_rt(c->policy, 2, sets);
	sb_thread_attach(rt);
	t_wait_all_asleep(rt);
	return rt;
}

static void wk_end(struct sb_rt *rt)
{
	sb_thread_detach();
	t_done(rt);
}

static const struct sb_job_desc wk_desc = { .work_level = SB_WL_JOIN };

/* ---- fork-join from a worker: every spawn goes to the spawner's own queue ---- */

static enum sb_result wk_tree(struct sb_task *t)
{
	if (t->u[0] == 0) {
		sb_work_ns(WK_LEAF_NS);
		wk_unit();
		return SB_DONE;
	}
	for (int k = 0; k < 2; k++) {
		struct sb_task *c = sb_task_new(t->job, wk_tree, NULL);
		c->u[0] = t->u[0] - 1;
		sb_spawn(c);
	}
	return SB_DONE;
}

#define WK_PARAMS(test)                                                                          \
	ParameterizedTestParameters(wake, test)                                                  \
	{                                                                                        \
		return cr_make_param_array(struct wk_case, wk_cases, sizeof wk_cases / sizeof wk_cases[0]); \
	}

WK_PARAMS(fork_join_uses_both_workers)
ParameterizedTest(struct wk_case *c, wake, fork_join_uses_both_workers, .timeout = 120)
{
	struct sb_rt *rt = wk_rt(c);
	pthread_t s = start_sampling(rt);
	struct sb_job *j = sb_job_create(rt, &wk_desc);
	struct sb_task *root = sb_task_new(j, wk_tree, NULL);
	root->u[0] = WK_DEPTH;
	sb_job_submit(j, root);
	cr_assert(sb_job_wait(j), "job finished: %s", sb_rt_failure(rt) ? sb_rt_failure(rt) : "");
	sb_job_put(j);
	check_shares(rt, s, WK_LEAVES, "fork-join");
	wk_end(rt);
}

/* ---- a request thread spawns every task: all onto its preferred worker's queue ---- */

static enum sb_result wk_leaf(struct sb_task *t)
{
	(void)t;
	sb_work_ns(WK_LEAF_NS);
	wk_unit();
	return SB_DONE;
}

WK_PARAMS(request_thread_job_uses_both_workers)
ParameterizedTest(struct wk_case *c, wake, request_thread_job_uses_both_workers, .timeout = 120)
{
	struct sb_rt *rt = wk_rt(c);
	pthread_t s = start_sampling(rt);
	struct sb_job *j = sb_job_create(rt, &wk_desc);
	sb_job_hold(j);
	sb_job_submit(j, sb_task_new(j, wk_leaf, NULL));
	for (unsigned i = 1; i < WK_FLAT; i++)
		sb_spawn(sb_task_new(j, wk_leaf, NULL));
	sb_job_release(j);
	cr_assert(sb_job_wait(j), "job finished: %s", sb_rt_failure(rt) ? sb_rt_failure(rt) : "");
	sb_job_put(j);
	check_shares(rt, s, WK_FLAT, "request-thread job");
	wk_end(rt);
}

/* ---- yield and resume: tasks park, both workers sleep, the request thread resumes them all;
 * each then runs its slices with a yield between two ---- */

static enum sb_result wk_yr(struct sb_task *t)
{
	if (t->u[1] == 0) {
		t->u[1] = 1;
		wk.parked[t->u[0]] = t;
		/* release: the request thread reads parked[] after seeing the count */
		atomic_fetch_add_explicit(&wk.blocked, 1, memory_order_release);
		return SB_BLOCKED;
	}
	sb_work_ns(WK_YR_SLICE_NS);
	wk_unit();
	return ++t->u[1] <= WK_YR_SLICES ? SB_YIELD : SB_DONE;
}

static enum sb_result wk_yr_root(struct sb_task *t)
{
	for (unsigned i = 0; i < WK_YR_TASKS; i++) {
		struct sb_task *c = sb_task_new(t->job, wk_yr, NULL);
		c->u[0] = i;
		sb_spawn(c);
	}
	return SB_DONE;
}

WK_PARAMS(yield_resume_uses_both_workers)
ParameterizedTest(struct wk_case *c, wake, yield_resume_uses_both_workers, .timeout = 120)
{
	struct sb_rt *rt = wk_rt(c);
	struct sb_job *j = sb_job_create(rt, &wk_desc);
	sb_job_submit(j, sb_task_new(j, wk_yr_root, NULL));
	/* a deadline far beyond a loaded machine's parking of 64 tasks, only to end a broken run */
	for (uint64_t end = sb_now_ns() + WK_MEET_NS;
	     atomic_load_explicit(&wk.blocked, memory_order_acquire) < WK_YR_TASKS && sb_now_ns() < end;)
		t_sleep_us(1000);
	cr_assert_eq(atomic_load_explicit(&wk.blocked, memory_order_acquire), WK_YR_TASKS, "every task parked");
	/* the parking needed no work from the units; start from both workers asleep again */
	t_wait_all_asleep(rt);
	atomic_store(&wk.units[0], 0);
	atomic_store(&wk.units[1], 0);
	pthread_t s = start_sampling(rt);
	for (unsigned i = 0; i < WK_YR_TASKS; i++)
		sb_task_resume(wk.parked[i]);
	cr_assert(sb_job_wait(j), "job finished: %s", sb_rt_failure(rt) ? sb_rt_failure(rt) : "");
	sb_job_put(j);
	check_shares(rt, s, WK_YR_TASKS * WK_YR_SLICES, "yield/resume");
	wk_end(rt);
}
/* ---- no lost wake-up ---- */

static _Atomic unsigned lw_ran;

static enum sb_result lw_leaf(struct sb_task *t)
{
	(void)t;
	atomic_fetch_add(&lw_ran, 1);
	return SB_DONE;
}

static enum sb_result lw_root(struct sb_task *t)
{
	sb_spawn(sb_task_new(t->job, lw_leaf, NULL));
	sb_spawn(sb_task_new(t->job, lw_leaf, NULL));
	atomic_fetch_add(&lw_ran, 1);
	return SB_DONE;
}

SB_POLICY_PARAMS(invariants, no_lost_wakeup)
ParameterizedTest(struct sb_tpol *pol, invariants, no_lost_wakeup, .timeout = 60)
{
	/* Workers suspend after 10 empty rounds and would sleep 60 s unless woken; the watchdog
	 * fails the run after 2 s of a queued task waiting, so a lost wake-up cannot hide. */
	static const char *const sets[] = { "worker_try_count=10", "worker_suspend_timeout=60000000", "stall_limit=2000",
					    NULL };
	atomic_store(&lw_ran, 0);
	struct sb_rt *rt = t_rt(pol->name, 3, sets);
	sb_thread_attach(rt);
	for (unsigned i = 0; i < 60; i++) {
		t_sleep_ms(i % 3); /* let the workers go to sleep in between, sometimes */
		struct sb_job_desc d = { .work_level = SB_WL_INFINITY, .force_stealing = true };
		struct sb_job *j = sb_job_create(rt, &d);
		sb_job_submit(j, sb_task_new(j, lw_root, NULL));
		cr_assert(sb_job_wait(j), "%s: job %u finished (%s)", pol->name, i, sb_rt_failure(rt) ? sb_rt_failure(rt) : "");
		sb_job_put(j);
	}
	cr_assert_eq(atomic_load(&lw_ran), 180);
	sb_thread_detach();
	t_done(rt);
}

/* Counters read while the workers sleep include the sleep so far: a measurement window that
 * closes during a long suspension counts its part of it (before, a suspension was counted only
 * when it ended, so a worker asleep through a whole window read as never suspended in it).
 * Exact, without a tolerance: both reads fall inside one suspension, so the difference is the
 * time between the reader's two clock reads, which the test's clock reads before and after each
 * snapshot bracket. */
Test(idle, suspended_time_counts_while_asleep, .timeout = 120)
{
	static const char *const sets[] = { "busy_worker=false", "worker_suspend_timeout=60000000", NULL };
	struct sb_rt *rt = t_rt("stealing", 2, sets);
	t_wait_all_asleep(rt); /* parked: nothing wakes them for a minute */
	uint64_t a[2][SB_NR_COUNTERS], b[2][SB_NR_COUNTERS], ta[2][2], tb[2][2];
	for (unsigned i = 0; i < 2; i++) {
		ta[i][0] = sb_now_ns();
		sb_rt_worker_counters(rt, i, a[i]);
		ta[i][1] = sb_now_ns();
	}
	t_sleep_ms(200);
	for (unsigned i = 0; i < 2; i++) {
		tb[i][0] = sb_now_ns();
		sb_rt_worker_counters(rt, i, b[i]);
		tb[i][1] = sb_now_ns();
	}
	cr_assert_eq(sb_nsuspended(rt), 2, "nothing woke the workers");
	for (unsigned i = 0; i < 2; i++) {
		uint64_t d = b[i][SB_C_SUSPEND_NS] - a[i][SB_C_SUSPEND_NS];
		uint64_t inner = tb[i][0] - ta[i][1], outer = tb[i][1] - ta[i][0];
		cr_expect(d >= inner && d <= outer, "worker %u: %llu ns suspended counted between reads %llu to %llu ns apart",
			  i, (unsigned long long)d, (unsigned long long)inner, (unsigned long long)outer);
		cr_expect_eq(b[i][SB_C_SUSPEND], a[i][SB_C_SUSPEND], "worker %u did not wake", i);
	}
	t_done(rt);
}

/* A worker woken from its suspension that finds nothing sleeps again after one round, whatever
 * worker_try_count says (core/worker.c). The job's worker, woken by the submission, wakes its
 * peer as the next searcher when it finds its task (sb_found_work); the peer finds nothing while
 * that task runs. With the try count's spin it swept 100,000 times before sleeping again, on
 * the core where Linux had put it ahead of its waker. Nothing is timed: the runner's own
 * 100,000 rounds before it sleeps may take seconds on a loaded machine, and t_wait_all_asleep
 * waits up to 50 s for both to be parked. */
static enum sb_result ws_task(struct sb_task *t)
{
	(void)t;
	sb_work_ns(5000000);
	return SB_DONE;
}

Test(idle, woken_idle_worker_sleeps_after_one_round, .timeout = 120)
{
	static const char *const sets[] = { "busy_worker=false", "worker_suspend_timeout=60000000",
					    "worker_try_count=100000", "inplace_teardown=true", NULL };
	struct sb_rt *rt = t_rt("stealing", 2, sets);
	t_wait_all_asleep(rt);
	uint64_t a[2][SB_NR_COUNTERS], b[2][SB_NR_COUNTERS];
	for (unsigned i = 0; i < 2; i++)
		sb_rt_worker_counters(rt, i, a[i]);
	sb_thread_attach(rt);
	struct sb_job_desc d = { .work_level = SB_WL_JOIN, .teardown = SB_TEARDOWN_INPLACE };
	sb_job_put(t_run_job(rt, &d, ws_task, NULL));
	sb_thread_detach();
	t_wait_all_asleep(rt);
	for (unsigned i = 0; i < 2; i++)
		sb_rt_worker_counters(rt, i, b[i]);
	unsigned runner = b[0][SB_C_RUN] > a[0][SB_C_RUN] ? 0 : 1, peer = 1 - runner;
	cr_assert_eq(b[runner][SB_C_RUN] - a[runner][SB_C_RUN], 1, "one task, on worker %u", runner);
	cr_assert_eq(b[peer][SB_C_RUN], a[peer][SB_C_RUN], "the peer ran nothing");
	uint64_t woken = b[peer][SB_C_WOKEN] - a[peer][SB_C_WOKEN];
	uint64_t sweeps = b[peer][SB_C_STEAL_SWEEP] - a[peer][SB_C_STEAL_SWEEP];
	cr_assert_geq(woken, 1, "the job's worker woke its peer as the next searcher");
	cr_assert_leq(sweeps, woken, "the peer swept %llu times after %llu wake-ups: more than one round a wake-up",
		      (unsigned long long)sweeps, (unsigned long long)woken);
	t_done(rt);
}

/* The spin before a suspension offers the core every worker_spin_yield empty rounds (a woken
 * worker stacked on its submitter's core gives it back, PAPER §4.4), and never with 0, the
 * memo's plain spin. One worker, one job: after its tasks the worker spins rounds 0 to
 * worker_try_count, a yield at each round r with (r + 1) % 32 == 0 (31 of the 1001), and
 * suspends; every other suspension of the window (a wake-up's one round) adds at most that. */
static void spin_yields(const char *yield_set, uint64_t *yields, uint64_t *suspends)
{
	const char *sets[] = { "busy_worker=false", "worker_suspend_timeout=60000000", "worker_try_count=1000",
			       yield_set, NULL };
	struct sb_rt *rt = t_rt("stealing", 1, sets);
	t_wait_all_asleep(rt);
	uint64_t a[SB_NR_COUNTERS], b[SB_NR_COUNTERS];
	sb_rt_worker_counters(rt, 0, a);
	sb_thread_attach(rt);
	struct sb_job_desc d = { .work_level = SB_WL_JOIN };
	sb_job_put(t_run_job(rt, &d, ws_task, NULL));
	sb_thread_detach();
	t_wait_all_asleep(rt);
	sb_rt_worker_counters(rt, 0, b);
	*yields = b[SB_C_SPIN_YIELD] - a[SB_C_SPIN_YIELD];
	*suspends = b[SB_C_SUSPEND] - a[SB_C_SUSPEND];
	t_done(rt);
}

Test(idle, spin_yields_every_worker_spin_yield_rounds, .timeout = 120)
{
	uint64_t yields, suspends;
	spin_yields("worker_spin_yield=32", &yields, &suspends);
	cr_assert_geq(suspends, 1, "the worker went back to sleep");
	cr_assert(yields >= 31 && yields <= 31 * suspends, "%llu yields over %llu suspensions: 31 for the spin after "
							  "the job, at most 31 a suspension",
		  (unsigned long long)yields, (unsigned long long)suspends);
	spin_yields("worker_spin_yield=0", &yields, &suspends);
	cr_assert_eq(yields, 0, "worker_spin_yield=0 (the plain spin) yielded %llu times", (unsigned long long)yields);
}

/* Counters read while a worker runs one long task include the run so far: a window that opens
 * and closes inside one busy stretch counts it as busy (before, a stretch was counted only when
 * it ended, so a worker busy through a whole window read as never busy in it). The task runs
 * until the test lets it go (or 30 s, to end a broken run), so both reads fall inside it however
 * slow the machine; the busy time between them is exact, bracketed by the test's clock reads
 * before and after each snapshot. */
static _Atomic int bt_state; /* 1 once the long task runs, 2 once it is done */
static _Atomic int bt_release; /* the test has read the counters twice */

static enum sb_result bt_long(struct sb_task *t)
{
	(void)t;
	atomic_store(&bt_state, 1);
	for (uint64_t end = sb_now_ns() + 30000000000ull; !atomic_load(&bt_release) && sb_now_ns() < end;)
		sb_work_ns(100000);
	atomic_store(&bt_state, 2);
	return SB_DONE;
}

Test(idle, busy_time_counts_while_running, .timeout = 60)
{
	struct sb_rt *rt = t_rt("stealing", 1, NULL);
	sb_thread_attach(rt);
	atomic_store(&bt_state, 0);
	atomic_store(&bt_release, 0);
	struct sb_job_desc d = { .work_level = SB_WL_INFINITY, .force_stealing = true };
	struct sb_job *j = sb_job_create(rt, &d);
	sb_job_submit(j, sb_task_new(j, bt_long, NULL));
	while (atomic_load(&bt_state) == 0)
		t_sleep_us(100);
	uint64_t a[SB_NR_COUNTERS], b[SB_NR_COUNTERS];
	uint64_t t0 = sb_now_ns();
	sb_rt_worker_counters(rt, 0, a);
	uint64_t t0b = sb_now_ns();
	t_sleep_ms(150);
	uint64_t t1a = sb_now_ns();
	sb_rt_worker_counters(rt, 0, b);
	uint64_t t1 = sb_now_ns();
	cr_expect_eq(atomic_load(&bt_state), 1, "both reads fell inside the task (it ran into its 30 s bound)");
	atomic_store(&bt_release, 1);
	cr_assert(sb_job_wait(j), "the job finished");
	sb_job_put(j);
	uint64_t busy = b[SB_C_BUSY_NS] - a[SB_C_BUSY_NS], idle = b[SB_C_IDLE_NS] - a[SB_C_IDLE_NS];
	cr_expect(busy >= t1a - t0b && busy <= t1 - t0, "%llu ns busy counted between reads %llu to %llu ns apart",
		  (unsigned long long)busy, (unsigned long long)(t1a - t0b), (unsigned long long)(t1 - t0));
	cr_expect_eq(idle, 0, "no idle time inside one task (%llu ns)", (unsigned long long)idle);
	sb_thread_detach();
	t_done(rt);
}

/* A worker's time is busy, idle (awake finding nothing) or suspended, one at a time: over a
 * window in which a sleeping worker is woken for a job and sleeps again, the three add up to the
 * window, and the sleep is not counted as idle too (before, the idle stretch around a suspension
 * was counted whole, sleep included, when it ended). Exact, without a tolerance: the three add
 * up to the time between the reader's clock reads in the two snapshots, which the test's clock
 * reads bracket; a sleep counted as idle too would push the sum past the outer bound by the
 * sleep, which the suspended time shows to cover at least the 200 ms before the submission (both
 * workers were parked from before the first snapshot until the job could wake one). */
Test(idle, busy_idle_suspended_partition_time, .timeout = 120)
{
	static const char *const sets[] = { "busy_worker=false", "worker_suspend_timeout=60000000", NULL };
	struct sb_rt *rt = t_rt("stealing", 2, sets);
	sb_thread_attach(rt);
	t_wait_all_asleep(rt);
	uint64_t a[2][SB_NR_COUNTERS], b[2][SB_NR_COUNTERS], ta[2][2], tb[2][2];
	for (unsigned i = 0; i < 2; i++) {
		ta[i][0] = sb_now_ns();
		sb_rt_worker_counters(rt, i, a[i]);
		ta[i][1] = sb_now_ns();
	}
	t_sleep_ms(200);
	uint64_t tsub = sb_now_ns();
	static const struct sb_job_desc d = { .work_level = SB_WL_INFINITY, .force_stealing = true };
	sb_job_put(t_run_job(rt, &d, lw_leaf, NULL));
	t_wait_all_asleep(rt);
	t_sleep_ms(50);
	for (unsigned i = 0; i < 2; i++) {
		tb[i][0] = sb_now_ns();
		sb_rt_worker_counters(rt, i, b[i]);
		tb[i][1] = sb_now_ns();
	}
	uint64_t woken = 0;
	for (unsigned i = 0; i < 2; i++) {
		uint64_t busy = b[i][SB_C_BUSY_NS] - a[i][SB_C_BUSY_NS], idle = b[i][SB_C_IDLE_NS] - a[i][SB_C_IDLE_NS];
		uint64_t susp = b[i][SB_C_SUSPEND_NS] - a[i][SB_C_SUSPEND_NS], sum = busy + idle + susp;
		uint64_t inner = tb[i][0] - ta[i][1], outer = tb[i][1] - ta[i][0];
		woken += b[i][SB_C_SUSPEND] - a[i][SB_C_SUSPEND];
		cr_expect(sum >= inner && sum <= outer,
			  "worker %u: busy %llu + idle %llu + suspended %llu ns between reads %llu to %llu ns apart", i,
			  (unsigned long long)busy, (unsigned long long)idle, (unsigned long long)susp,
			  (unsigned long long)inner, (unsigned long long)outer);
		cr_expect_geq(susp, tsub - ta[i][1], "worker %u: %llu ns suspended, asleep for %llu ns before the job", i,
			      (unsigned long long)susp, (unsigned long long)(tsub - ta[i][1]));
	}
	cr_expect_geq(woken, 1, "a worker woke for the job and slept again");
	sb_thread_detach();
	t_done(rt);
}

/* The wake-up latency counter: every wake-up a waker claimed is counted, and each counted
 * latency lies inside the time the test watched (a stamp left from an earlier claim, or one
 * never written, would fall outside it or be missing). */
Test(idle, wake_latency_counted_per_wakeup, .timeout = 120)
{
	static const char *const sets[] = { "busy_worker=false", "worker_suspend_timeout=60000000", NULL };
	struct sb_rt *rt = t_rt("stealing", 2, sets);
	sb_thread_attach(rt);
	uint64_t woken = 0, wake_ns = 0, bound = 0;
	for (int round = 0; round < 5; round++) {
		t_wait_all_asleep(rt);
		uint64_t a[2][SB_NR_COUNTERS], b[2][SB_NR_COUNTERS];
		for (unsigned i = 0; i < 2; i++)
			sb_rt_worker_counters(rt, i, a[i]);
		uint64_t t0 = sb_now_ns();
		struct sb_job_desc d = { .work_level = SB_WL_INFINITY, .force_stealing = true };
		struct sb_job *j = sb_job_create(rt, &d);
		sb_job_submit(j, sb_task_new(j, lw_leaf, NULL));
		cr_assert(sb_job_wait(j), "round %d: the job finished", round);
		sb_job_put(j);
		t_wait_all_asleep(rt); /* the woken worker has counted its wake-up and slept again */
		uint64_t t1 = sb_now_ns();
		for (unsigned i = 0; i < 2; i++) {
			sb_rt_worker_counters(rt, i, b[i]);
			uint64_t n = b[i][SB_C_WOKEN] - a[i][SB_C_WOKEN];
			woken += n;
			wake_ns += b[i][SB_C_WAKE_NS] - a[i][SB_C_WAKE_NS];
			bound += n * (t1 - t0); /* each wake-up claimed and ended inside [t0, t1] */
		}
	}
	cr_assert_geq(woken, 5, "each job woke a sleeping worker (%llu wake-ups)", (unsigned long long)woken);
	cr_assert_gt(wake_ns, 0, "the wake-ups' latency was counted");
	cr_assert_leq(wake_ns, bound, "%llu ns of wake-up latency counted, at most %llu possible", (unsigned long long)wake_ns,
		      (unsigned long long)bound);
	sb_thread_detach();
	t_done(rt);
}
