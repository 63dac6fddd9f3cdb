/*
 * global.c - behaviour of the `global` policy (memos 002 and 003), beyond the invariants every
 * policy shares (tests/core/). The method: tests/policies/gp_common.h; what `global` and
 * `priority` share is tested in tests/policies/gp.c.
 */
#include "gp_common.h"

/* ---- global: producer tokens (memo 002) ---- */

#define PT_PRODUCERS 3
#define PT_JOBS 20

struct pt_arg {
	struct sb_rt *rt;
	unsigned idx;
	struct sb_job *jobs[PT_JOBS];
};

static void *pt_producer(void *p)
{
	struct pt_arg *a = p;
	sb_thread_attach(a->rt);
	for (unsigned k = 0; k < PT_JOBS; k++)
		a->jobs[k] = submit(a->rt, (struct jspec){ .teardown = SB_TEARDOWN_INPLACE }, tagged, a->idx * 100 + k, 0);
	sb_thread_detach();
	return NULL;
}

ParameterizedTestParameters(global, producer_order)
{
	return cr_make_param_array(struct onoff, onoff_cases, 2);
}

/*
 * Three producers submit 20 jobs each, one producer after the other, while the only worker is
 * held. Each producer's jobs must start in submission order. With producer tokens the worker
 * takes the sub-queues round robin, so producer 2's first job starts before producer 0's last;
 * with the one shared queue everything starts in global submission order.
 */
ParameterizedTest(struct onoff *tokens, global, producer_order, .timeout = 30)
{
	atomic_store(&log_n, 0);
	gates_reset();
	static const char *const tok[] = { "producer_tokens=true", NULL };
	struct sb_rt *rt = t_rt("global", 1, tokens->on ? tok : NULL);
	sb_thread_attach(rt);
	struct sb_job *gate = submit_gate(rt, (struct jspec){ 0 }, 0, -1);
	wait_started(rt, 0);
	struct pt_arg args[PT_PRODUCERS];
	for (unsigned i = 0; i < PT_PRODUCERS; i++) {
		pthread_t th;
		args[i] = (struct pt_arg){ .rt = rt, .idx = i };
		pthread_create(&th, NULL, pt_producer, &args[i]);
		pthread_join(th, NULL);
	}
	atomic_store(&gate_open[0], 1);
	wait_put(rt, gate);
	for (unsigned i = 0; i < PT_PRODUCERS; i++)
		for (unsigned k = 0; k < PT_JOBS; k++)
			wait_put(rt, args[i].jobs[k]);
	cr_assert_eq(atomic_load(&log_n), PT_PRODUCERS * PT_JOBS);
	for (unsigned i = 0; i < PT_PRODUCERS; i++)
		for (unsigned k = 1; k < PT_JOBS; k++)
			cr_assert_lt(log_pos((int)(i * 100 + k - 1)), log_pos((int)(i * 100 + k)),
				     "producer %u: job %u started before job %u", i, k, k - 1);
	int first2 = log_pos(200), last0 = log_pos(PT_JOBS - 1);
	if (tokens->on) {
		cr_assert_lt(first2, last0, "round robin: producer 2 starts (at %d) before producer 0 ends (at %d)",
			     first2, last0);
		cr_assert_geq(t_policy_stat(rt, "queues_in_use"), 1 + PT_PRODUCERS);
	} else {
		for (unsigned i = 0; i < PT_PRODUCERS * PT_JOBS; i++)
			cr_assert_eq(atomic_load(&log_tags[i]), (int)((i / PT_JOBS) * 100 + i % PT_JOBS),
				     "one shared FIFO: start %u out of submission order", i);
	}
	sb_thread_detach();
	t_done(rt);
}

/* A producer whose id is beyond the sub-queue table still works, through the shared queue. */
Test(global, producer_beyond_table_uses_shared_queue, .timeout = 30)
{
	static const char *const sets[] = { "producer_tokens=true", "producer_slots=1", NULL };
	atomic_store(&log_n, 0);
	struct sb_rt *rt = t_rt("global", 2, sets);
	sb_thread_attach(rt); /* ids 0 and 1 are the workers, then the watcher: we are beyond slot 0 */
	for (unsigned k = 0; k < 10; k++)
		wait_put(rt, submit(rt, (struct jspec){ 0 }, tagged, k, 0));
	cr_assert_eq(atomic_load(&log_n), 10);
	cr_assert_geq(t_policy_stat(rt, "token_fallbacks"), 10);
	sb_thread_detach();
	t_done(rt);
}

/* ---- global: external threads (memo 002) ---- */

#define EX_LEAVES 100
static _Atomic uint32_t ex_hits[EX_LEAVES + 1];
static _Atomic uint32_t ex_on_worker;

/* u[0]: 0 the root, else a leaf's index */
static enum sb_result ex_task(struct sb_task *t)
{
	atomic_fetch_add(&ex_hits[t->u[0]], 1);
	if (sb_self_worker() >= 0)
		atomic_fetch_add(&ex_on_worker, 1);
	if (t->u[0] == 0)
		for (unsigned i = 1; i <= EX_LEAVES; i++)
			sb_spawn(task_u(t->job, ex_task, i, 0));
	return SB_DONE;
}

/*
 * The only worker is held by a gate while the test thread submits a job of a root and 100
 * leaves and waits for it: with external_threads the waiting thread runs every task of the job
 * itself (once each, none on the worker) and the wait returns while the gate is still shut.
 * Without it the job could not end before the gate opens.
 */
Test(global, external_thread_runs_its_own_job, .timeout = 30)
{
	gates_reset();
	memset(ex_hits, 0, sizeof ex_hits);
	atomic_store(&ex_on_worker, 0);
	static const char *const sets[] = { "producer_tokens=true", "external_threads=true", NULL };
	struct sb_rt *rt = t_rt("global", 1, sets);
	sb_thread_attach(rt);
	struct sb_job *gate = submit_gate(rt, (struct jspec){ 0 }, 0, -1);
	wait_started(rt, 0);
	wait_put(rt, submit(rt, (struct jspec){ 0 }, ex_task, 0, 0));
	cr_assert_eq(atomic_load(&gate_open[0]), 0, "the job ended while the worker was held");
	for (unsigned i = 0; i <= EX_LEAVES; i++)
		cr_assert_eq(atomic_load(&ex_hits[i]), 1, "task %u ran %u times", i, atomic_load(&ex_hits[i]));
	cr_assert_eq(atomic_load(&ex_on_worker), 0);
	cr_assert_geq(core_count(rt, SB_C_RUN, false) - core_count(rt, SB_C_RUN, true), 1 + EX_LEAVES,
		      "the tasks count as run by a thread that is not a worker");
	atomic_store(&gate_open[0], 1);
	wait_put(rt, gate);
	sb_thread_detach();
	t_done(rt);
}

/* u[0]: 0 the root (on the worker: spawns the leaves, then holds the worker until the last leaf
 * opens gate 1), else a leaf */
static enum sb_result jt_task(struct sb_task *t)
{
	if (t->u[0]) {
		if (atomic_fetch_add(&ex_hits[t->u[0]], 1) == 0 && sb_self_worker() >= 0)
			atomic_fetch_add(&ex_on_worker, 1);
		if (atomic_fetch_add(&ex_hits[0], 1) + 1 == EX_LEAVES)
			atomic_store(&gate_open[1], 1);
		return SB_DONE;
	}
	for (unsigned i = 1; i <= EX_LEAVES; i++)
		sb_spawn(task_u(t->job, jt_task, i, 0));
	atomic_store(&gate_started[1], 1);
	while (!atomic_load(&gate_open[1]))
		sched_yield();
	return SB_DONE;
}

/*
 * token_scope=job: the tasks a worker spawns join the job's token, the queue of the thread that
 * submitted the job, so that thread, waiting, runs them. The root runs on the only worker,
 * spawns 100 leaves and holds the worker until the last leaf has run: only the waiting thread
 * can run them (with per-thread tokens they would sit in the worker's own queue and the wait
 * would never end).
 */
Test(global, job_token_lets_the_waiter_run_what_a_worker_spawned, .timeout = 30)
{
	gates_reset();
	memset(ex_hits, 0, sizeof ex_hits);
	atomic_store(&ex_on_worker, 0);
	static const char *const sets[] = { "producer_tokens=true", "token_scope=job", "external_threads=true", NULL };
	struct sb_rt *rt = t_rt("global", 1, sets);
	sb_thread_attach(rt);
	struct sb_job *j = submit(rt, (struct jspec){ 0 }, jt_task, 0, 0);
	wait_started(rt, 1); /* the root is on the worker, its leaves queued */
	wait_put(rt, j);
	cr_assert_eq(atomic_load(&ex_hits[0]), EX_LEAVES);
	for (unsigned i = 1; i <= EX_LEAVES; i++)
		cr_assert_eq(atomic_load(&ex_hits[i]), 1, "leaf %u ran %u times", i, atomic_load(&ex_hits[i]));
	cr_assert_eq(atomic_load(&ex_on_worker), 0, "a leaf ran on the held worker");
	sb_thread_detach();
	t_done(rt);
}

/* ---- global: batch acquisition (memo 003) ---- */

#define BA_CLIENTS 2
#define BA_JOBS 10
#define BA_LEAVES 100
static _Atomic uint32_t ba_hits[BA_CLIENTS * BA_JOBS * (BA_LEAVES + 1)];

static enum sb_result ba_leaf(struct sb_task *t)
{
	atomic_fetch_add(&ba_hits[t->u[0]], 1);
	return SB_DONE;
}

static enum sb_result ba_root(struct sb_task *t)
{
	atomic_fetch_add(&ba_hits[t->u[0]], 1);
	for (unsigned i = 1; i <= BA_LEAVES; i++)
		sb_spawn(task_u(t->job, ba_leaf, t->u[0] + i, 0));
	return SB_DONE;
}

struct ba_arg {
	struct sb_rt *rt;
	unsigned idx;
	unsigned failed;
};

static void *ba_client(void *p)
{
	struct ba_arg *a = p;
	sb_thread_attach(a->rt);
	struct sb_job *jobs[BA_JOBS];
	for (unsigned k = 0; k < BA_JOBS; k++)
		jobs[k] = submit(a->rt, (struct jspec){ .teardown = SB_TEARDOWN_INPLACE }, ba_root,
				 (uint64_t)(a->idx * BA_JOBS + k) * (BA_LEAVES + 1), 0);
	for (unsigned k = 0; k < BA_JOBS; k++) {
		a->failed += !sb_job_wait(jobs[k]);
		sb_job_put(jobs[k]);
	}
	sb_thread_detach();
	return NULL;
}

/* Several workers claiming 8 at a time: every task runs exactly once (check mode verifies each
 * start as well), every claimed task is run, and a claim takes one task or more. */
Test(global, batch_runs_every_task_once, .timeout = 60)
{
	static const char *const sets[] = { "batch=8", NULL };
	memset(ba_hits, 0, sizeof ba_hits);
	struct sb_rt *rt = t_rt("global", 3, sets);
	pthread_t th[BA_CLIENTS];
	struct ba_arg args[BA_CLIENTS];
	for (unsigned i = 0; i < BA_CLIENTS; i++) {
		args[i] = (struct ba_arg){ .rt = rt, .idx = i };
		pthread_create(&th[i], NULL, ba_client, &args[i]);
	}
	for (unsigned i = 0; i < BA_CLIENTS; i++) {
		pthread_join(th[i], NULL);
		cr_assert_eq(args[i].failed, 0, "client %u: jobs failed: %s", i, sb_rt_failure(rt) ? sb_rt_failure(rt) : "");
	}
	for (size_t i = 0; i < sizeof ba_hits / sizeof ba_hits[0]; i++)
		cr_assert_eq(atomic_load(&ba_hits[i]), 1, "task %zu ran %u times", i, atomic_load(&ba_hits[i]));
	sb_rt_stop(rt, SB_STOP_DRAIN);
	double claims = t_policy_stat(rt, "claims"), claimed = t_policy_stat(rt, "tasks_claimed");
	uint64_t ran = core_count(rt, SB_C_RUN, true);
	cr_assert_eq((uint64_t)claimed, ran, "%.0f tasks claimed, %llu run by workers", claimed, (unsigned long long)ran);
	cr_assert_leq(claims, claimed);
	t_done(rt);
}

/* A runtime of the global policy with these settings, the log and the gates cleared, this
 * thread attached: how most tests here begin. */
static struct sb_rt *start(unsigned workers, const char *const *sets)
{
	atomic_store(&log_n, 0);
	gates_reset();
	struct sb_rt *rt = t_rt("global", workers, sets);
	sb_thread_attach(rt);
	return rt;
}

/*
 * One worker, batch=8. Gate 0 holds it while gate 1 and five more jobs queue; when gate 0
 * opens the worker claims all six at once and runs gate 1 first: the five it still holds must
 * show in queued(worker 0), not in the shared queue. In all: two claims for seven tasks.
 */
Test(global, batch_claims_fewer_and_buffer_is_visible, .timeout = 30)
{
	static const char *const sets[] = { "batch=8", NULL };
	struct sb_rt *rt = start(1, sets);
	struct jspec in = { .teardown = SB_TEARDOWN_INPLACE };
	struct sb_job *g0 = submit_gate(rt, in, 0, -1);
	wait_started(rt, 0);
	struct sb_job *g1 = submit_gate(rt, in, 1, -1);
	struct sb_job *jobs[5];
	for (unsigned k = 0; k < 5; k++)
		jobs[k] = submit(rt, in, tagged, k, 0);
	cr_assert_eq(t_queued(rt, -1), 6);
	atomic_store(&gate_open[0], 1);
	wait_started(rt, 1);
	cr_assert_eq(t_queued(rt, 0), 5, "tasks in the worker's buffer are counted as its own");
	cr_assert_eq(t_queued(rt, -1), 0);
	atomic_store(&gate_open[1], 1);
	wait_put(rt, g0);
	wait_put(rt, g1);
	for (unsigned k = 0; k < 5; k++)
		wait_put(rt, jobs[k]);
	for (unsigned k = 0; k < 5; k++)
		cr_assert_eq(atomic_load(&log_tags[k]), (int)k, "buffered tasks run in claim order");
	sb_rt_stop(rt, SB_STOP_DRAIN);
	cr_assert_eq(t_policy_stat(rt, "claims"), 2);
	cr_assert_eq(t_policy_stat(rt, "tasks_claimed"), 7);
	cr_assert_eq(t_queued(rt, 0), 0);
	sb_thread_detach();
	t_done(rt);
}

/* ---- global: lock-bound claims (memo 003, claim_lock_ns) ---- */

#define CL_JOBS 30

/*
 * Two workers, 30 one-task jobs, 300 µs of work under the claim lock per claim: both workers
 * contend for the lock all along. The lock serialises the rounds: the most rounds ever in
 * progress at once (lock_holders_max, counted inside the round) is 1; a lock that let two
 * workers in would show 2 as soon as two rounds overlapped, which 300 µs rounds on two workers
 * do many times over. Every task ran once and was claimed under the lock. (Before, the run's
 * wall time was held against a round's measured speed, which a core changing speed between
 * the two broke.)
 */
Test(global, claim_lock_serialises_claims, .timeout = 60)
{
	static const char *const sets[] = { "claim_lock_ns=300000", NULL };
	atomic_store(&log_n, 0);
	struct sb_rt *rt = t_rt("global", 2, sets);
	sb_thread_attach(rt);
	struct sb_job *jobs[CL_JOBS];
	for (unsigned k = 0; k < CL_JOBS; k++)
		jobs[k] = submit(rt, (struct jspec){ .teardown = SB_TEARDOWN_INPLACE }, tagged, k, 0);
	for (unsigned k = 0; k < CL_JOBS; k++)
		wait_put(rt, jobs[k]);
	cr_assert_eq(atomic_load(&log_n), CL_JOBS);
	sb_rt_stop(rt, SB_STOP_DRAIN);
	double rounds = t_policy_stat(rt, "lock_rounds"), claims = t_policy_stat(rt, "claims");
	cr_assert_eq(t_policy_stat(rt, "tasks_claimed"), CL_JOBS);
	cr_assert_eq(claims, CL_JOBS, "batch 1: one claim per task");
	cr_assert_geq(rounds, claims, "every claim was made under the lock");
	cr_assert_eq(t_policy_stat(rt, "lock_holders_max"), 1, "%.0f rounds, at most %.0f at once: rounds overlapped",
		     rounds, t_policy_stat(rt, "lock_holders_max"));
	sb_thread_detach();
	t_done(rt);
}

/*
 * One worker, batch=8, the lock on. Gate 0 holds the worker while 16 jobs queue; then it
 * claims 8 and 8: three claims under the lock for 17 tasks, none found it taken (one worker).
 */
Test(global, claim_lock_batch_takes_one_round_per_batch, .timeout = 30)
{
	static const char *const sets[] = { "batch=8", "claim_lock_ns=1000", NULL };
	struct sb_rt *rt = start(1, sets);
	struct jspec in = { .teardown = SB_TEARDOWN_INPLACE };
	struct sb_job *g = submit_gate(rt, in, 0, -1);
	wait_started(rt, 0);
	struct sb_job *jobs[16];
	for (unsigned k = 0; k < 16; k++)
		jobs[k] = submit(rt, in, tagged, k, 0);
	atomic_store(&gate_open[0], 1);
	wait_put(rt, g);
	for (unsigned k = 0; k < 16; k++)
		wait_put(rt, jobs[k]);
	sb_rt_stop(rt, SB_STOP_DRAIN);
	/* a round may find the queue empty when a push was counted before its task was stored */
	cr_assert_geq(t_policy_stat(rt, "lock_rounds"), 3);
	cr_assert_eq(t_policy_stat(rt, "claims"), 3);
	cr_assert_eq(t_policy_stat(rt, "tasks_claimed"), 17);
	cr_assert_eq(t_policy_stat(rt, "lock_busy"), 0);
	for (unsigned k = 0; k < 16; k++)
		cr_assert_eq(atomic_load(&log_tags[k]), (int)k, "claims keep the queue's order");
	sb_thread_detach();
	t_done(rt);
}

/* Both workers of a two-worker runtime held, by gates 0 and 1; and let go again. */
static void hold_two(struct sb_rt *rt, struct jspec in, struct sb_job **g0, struct sb_job **g1)
{
	*g0 = submit_gate(rt, in, 0, -1);
	*g1 = submit_gate(rt, in, 1, -1);
	wait_started(rt, 0);
	wait_started(rt, 1);
}

static void release_two(struct sb_rt *rt, struct sb_job *g0, struct sb_job *g1)
{
	atomic_store(&gate_open[0], 1);
	atomic_store(&gate_open[1], 1);
	wait_put(rt, g0);
	wait_put(rt, g1);
}

/*
 * A worker that finds the lock taken while tasks are queued waits for it instead of
 * suspending, yielding its CPU between tries: both workers are held by gates while 200 jobs
 * queue, then released. With 2 ms per round a loser of the lock would give up and suspend long
 * before the holder releases, and with nothing more submitted nobody would wake it.
 *
 * Nothing depends on how the kernel shares the cores. The first 100 jobs alternate: a job that
 * starts while no other job runs waits (up to 30 s) until the other worker has started a lock
 * round, so its own worker comes back to the lock while the other holds it, every time, and the
 * other worker must be awake to take that round at all. Each job reads both workers' suspension
 * counts and then whether jobs are still queued: the queue only shrinks after the gates open, so
 * a read followed by a non-empty queue covers a time when jobs were queued throughout, and no
 * worker may have suspended in it. The first job's read is such a read (the other worker cannot
 * run past it: its first job waits for this worker's next round).
 */
#define LW_JOBS 200
#define LW_ALTERNATE 100

static struct {
	struct sb_rt *rt;
	uint64_t susp0;                /* both workers' suspensions while held by the gates */
	_Atomic unsigned running;      /* alternating job bodies in progress */
	_Atomic unsigned reads;        /* reads of the suspensions followed by a non-empty queue */
	_Atomic uint64_t susp_queued;  /* suspensions those reads saw */
	_Atomic int missed;            /* a job waited 30 s for the other worker's round */
} lw;

static uint64_t lw_suspensions(void)
{
	return core_count(lw.rt, SB_C_SUSPEND, true);
}

static enum sb_result lw_job(struct sb_task *t)
{
	uint64_t s = lw_suspensions() - lw.susp0;
	if (t_queued(lw.rt, -1) > 0) {
		atomic_fetch_add(&lw.reads, 1);
		if (s > atomic_load(&lw.susp_queued))
			atomic_store(&lw.susp_queued, s);
	}
	if (t->u[0] >= LW_ALTERNATE)
		return SB_DONE;
	/* relaxed reads of a counter: only its growth matters; our worker is in this task, so a
	 * new round is the other worker's */
	uint64_t r0 = stat_of(lw.rt, "lock_rounds");
	if (atomic_fetch_add(&lw.running, 1) == 0)
		for (uint64_t end = sb_now_ns() + 30000000000ull; stat_of(lw.rt, "lock_rounds") == r0;) {
			if (atomic_load(&lw.missed) || sb_now_ns() > end) {
				atomic_store(&lw.missed, 1);
				break;
			}
			t_sleep_us(50);
		}
	atomic_fetch_sub(&lw.running, 1);
	return SB_DONE;
}

Test(global, claim_lock_waiter_stays_awake, .timeout = 120)
{
	static const char *const sets[] = { "claim_lock_ns=2000000", NULL };
	struct sb_rt *rt = start(2, sets);
	memset(&lw, 0, sizeof lw);
	lw.rt = rt;
	struct jspec in = { .teardown = SB_TEARDOWN_INPLACE };
	struct sb_job *g0, *g1;
	hold_two(rt, in, &g0, &g1);
	struct sb_job *jobs[LW_JOBS];
	for (unsigned k = 0; k < LW_JOBS; k++)
		jobs[k] = submit(rt, in, lw_job, k, 0);
	lw.susp0 = lw_suspensions();
	release_two(rt, g0, g1);
	for (unsigned k = 0; k < LW_JOBS; k++)
		wait_put(rt, jobs[k]);
	sb_rt_stop(rt, SB_STOP_DRAIN);
	cr_assert_eq(atomic_load(&lw.missed), 0, "a job waited 30 s for the other worker's lock round: it gave up "
					       "waiting for the lock and slept");
	cr_assert_geq(atomic_load(&lw.reads), 1, "the first job read the suspensions with jobs queued");
	cr_assert_eq(atomic_load(&lw.susp_queued), 0, "a worker suspended %llu times while jobs were queued",
		     (unsigned long long)atomic_load(&lw.susp_queued));
	uint64_t v[SB_NR_COUNTERS];
	uint64_t yields = 0;
	for (unsigned w = 0; w < 2; w++) {
		sb_rt_worker_counters(rt, w, v);
		cr_assert_geq(v[SB_C_RUN], 2, "worker %u ran its gate and %llu jobs", w, (unsigned long long)v[SB_C_RUN] - 1);
		yields += v[SB_C_IDLE_YIELD];
	}
	cr_assert_gt(stat_of(rt, "lock_busy"), 0, "a worker came back to the lock while the other held it");
	/* and it waits without its core: Quartz's threads sleep on the lock, and a waiter that kept
	 * its core starved the holder whenever workers outnumbered cores (24 workers on 2 cores took
	 * 81 s to drop 1,056 cancelled tasks through 1 ms claims) */
	cr_assert_gt(yields, 0, "a waiter that found the lock taken yielded between tries");
	sb_thread_detach();
	t_done(rt);
}

#define CD_JOBS 600

/*
 * A cancelled backlog drains through the claim lock: both workers are held by gates while 600
 * one-task jobs queue, every job is cancelled, then the gates open. Each queued task still
 * costs a 10 ms lock round before it surfaces and is dropped, so the drain takes 6 s or more,
 * with no task body starting meanwhile; the watchdog (a 2 s limit here) must read the drops
 * as the queue being taken, not as a stall. The limit is far above any time a loaded machine
 * keeps the lock's holder off its core (with 100 ms, one loaded fresh-clone run read such a gap
 * as a STALL after 176 drops, and 400 ms is still a scheduler's order of magnitude); the drain
 * is still three limits long, so a watchdog that did not count the drops fails the run. This is
 * how an overloaded run ends (the jobs still pending after the drain are cancelled): fuzzing saw
 * it fail as a STALL. Every task is dropped once and none runs.
 */
Test(global, claim_lock_cancelled_backlog_drains_without_stall, .timeout = 120)
{
	static const char *const sets[] = { "claim_lock_ns=10000000", "stall_limit=2000", NULL };
	struct sb_rt *rt = start(2, sets);
	struct jspec in = { .teardown = SB_TEARDOWN_INPLACE };
	struct sb_job *g0, *g1;
	hold_two(rt, in, &g0, &g1);
	static struct sb_job *jobs[CD_JOBS];
	for (unsigned k = 0; k < CD_JOBS; k++) {
		jobs[k] = submit(rt, in, tagged, k, 0);
		sb_job_cancel(jobs[k]);
	}
	release_two(rt, g0, g1);
	for (unsigned k = 0; k < CD_JOBS; k++)
		wait_put(rt, jobs[k]);
	sb_rt_stop(rt, SB_STOP_DRAIN);
	cr_assert_null(sb_rt_failure(rt), "runtime failure: %s", sb_rt_failure(rt) ? sb_rt_failure(rt) : "");
	cr_assert_eq(atomic_load(&log_n), 0, "a cancelled task ran");
	cr_assert_eq(core_count(rt, SB_C_DROPPED, false), CD_JOBS, "every cancelled task was dropped once");
	cr_assert_eq(t_policy_stat(rt, "tasks_claimed"), 2 + CD_JOBS);
	sb_thread_detach();
	t_done(rt);
}

/* ---- global: the thread count changed at run time (memo 002, threads_low) ---- */

#define TC_EVERY 100
#define TC_PHASES 5
static _Atomic int tc_worker[TC_PHASES * TC_EVERY];

/* The first job of each two-thread phase waits (up to 30 s, to end a broken run) until a job of
 * the phase has started on worker 1, so worker 1's part does not depend on how soon it gets a
 * core after the grow; a grow that did not let worker 1 claim leaves it waiting. */
static _Atomic int tc_on1[TC_PHASES];  /* a job of the phase has started on worker 1 */
static _Atomic int tc_missed[TC_PHASES];

static enum sb_result tc_body(struct sb_task *t)
{
	unsigned k = (unsigned)t->u[0], ph = (k + 1) / TC_EVERY;
	if (sb_self_worker() == 1)
		atomic_store(&tc_on1[ph], 1);
	if (ph % 2 == 0 && ph && (k + 1) % TC_EVERY == 0 && sb_self_worker() != 1)
		for (uint64_t end = sb_now_ns() + 30000000000ull; !atomic_load(&tc_on1[ph]);) {
			if (sb_now_ns() > end) {
				atomic_store(&tc_missed[ph], 1);
				break;
			}
			t_sleep_us(100);
		}
	sb_work_ns(100000);
	atomic_store(&tc_worker[k], sb_self_worker());
	return SB_DONE;
}

/*
 * Two workers, threads_low=1, resize_every=100: the 100th, 200th, 300th and 400th jobs change
 * the count to 1, 2, 1, 2. The client submits each phase's jobs at once, starting with the one
 * that changes the count, and waits for all of them before the next phase. In a one-thread
 * phase worker 1 may run at most the one task it was claiming as the stop came (DuckDB's thread
 * too finishes the task it is in); in a two-thread phase it must take part (the grow started
 * it): the phase's first job, if worker 0 runs it, waits for a job on worker 1 (tc_body), so
 * how soon worker 1 gets a core does not matter. Each shrink stopped both workers and
 * relaunched one. Sleeping workers wake only when woken (a 60 s suspend timeout): a lost
 * hand-off of a wake-up leaves tasks queued beside a resting worker, which check mode's 5 s
 * stall limit reports.
 */
Test(global, thread_count_changes_at_run_time, .timeout = 120)
{
	static const char *const sets[] = { "threads_low=1", "resize_every=100", "worker_suspend_timeout=60000000",
					    NULL };
	struct sb_rt *rt = t_rt("global", 2, sets);
	sb_thread_attach(rt);
	static struct sb_job *jobs[TC_EVERY];
	unsigned on1[TC_PHASES] = { 0 };
	for (unsigned ph = 0; ph < TC_PHASES; ph++) {
		unsigned first = ph ? ph * TC_EVERY : 1, n = ph ? TC_EVERY : TC_EVERY - 1; /* jobs are counted from 1 */
		for (unsigned k = 0; k < n; k++)
			jobs[k] = submit(rt, (struct jspec){ .teardown = SB_TEARDOWN_INPLACE }, tc_body, first + k - 1, 0);
		for (unsigned k = 0; k < n; k++)
			wait_put(rt, jobs[k]);
		for (unsigned k = 0; k < n; k++)
			on1[ph] += atomic_load(&tc_worker[first + k - 1]) == 1;
	}
	sb_rt_stop(rt, SB_STOP_DRAIN);
	cr_assert_leq(on1[1], 1, "one thread: worker 1 ran %u of 100 jobs", on1[1]);
	cr_assert_leq(on1[3], 1, "one thread: worker 1 ran %u of 100 jobs", on1[3]);
	cr_assert_eq(atomic_load(&tc_missed[2]) + atomic_load(&tc_missed[4]), 0,
		     "two threads again: the phase's first job waited 30 s for worker 1 to start one");
	cr_assert_gt(on1[2], 0, "two threads again: worker 1 ran none of 100 jobs");
	cr_assert_gt(on1[4], 0, "two threads again: worker 1 ran none of 100 jobs");
	cr_assert_eq(t_policy_stat(rt, "thread_changes"), 4);
	cr_assert_eq(t_policy_stat(rt, "relaunches"), 2);
	cr_assert_eq(t_policy_stat(rt, "active_threads"), 2);
	sb_thread_detach();
	t_done(rt);
}

/*
 * At one thread, single jobs submitted to an idle pool: the core wakes one sleeper, round robin,
 * so about every other wake-up lands on worker 1, which may claim nothing. It must pass the
 * wake-up on to worker 0; else the job waits for the 60 s suspend timeout and check mode's
 * stall limit (5 s) fails the run. Every job runs, on worker 0.
 */
Test(global, thread_count_low_wakes_reach_an_active_worker, .timeout = 120)
{
	static const char *const sets[] = { "threads_low=1", "resize_every=100", "worker_suspend_timeout=60000000",
					    NULL };
	struct sb_rt *rt = t_rt("global", 2, sets);
	sb_thread_attach(rt);
	struct jspec in = { .teardown = SB_TEARDOWN_INPLACE };
	for (unsigned k = 0; k < 99; k++) /* jobs 1..99 at two threads; the 100th shrinks */
		wait_put(rt, submit(rt, in, tagged, k, 0));
	for (unsigned k = 0; k < 20; k++) {
		t_wait_all_asleep(rt);
		atomic_store(&tc_worker[k], -1);
		wait_put(rt, submit(rt, in, tc_body, k, 0));
		cr_assert_eq(atomic_load(&tc_worker[k]), 0, "job %u of the one-thread phase ran on worker %d", 100 + k,
			     atomic_load(&tc_worker[k]));
	}
	sb_rt_stop(rt, SB_STOP_DRAIN);
	cr_assert_eq(t_policy_stat(rt, "relaunches"), 1);
	sb_thread_detach();
	t_done(rt);
}

/* The queue is never full: jobs queued behind a busy worker, several segments' worth, all run
 * on the worker (none on the submitter) and in submission order. */
#define FQ_JOBS 1500
Test(global, queue_takes_everything_in_order, .timeout = 30)
{
	struct sb_rt *rt = start(1, NULL);
	struct sb_job *g = submit_gate(rt, (struct jspec){ 0 }, 0, -1);
	wait_started(rt, 0);
	static struct sb_job *jobs[FQ_JOBS];
	for (unsigned k = 0; k < FQ_JOBS; k++)
		jobs[k] = submit(rt, (struct jspec){ .teardown = SB_TEARDOWN_INPLACE }, tagged, k, 0);
	cr_assert_eq(t_queued(rt, -1), FQ_JOBS);
	atomic_store(&gate_open[0], 1);
	for (unsigned k = 0; k < FQ_JOBS; k++)
		wait_put(rt, jobs[k]);
	wait_put(rt, g);
	cr_assert_eq(atomic_load(&log_n), FQ_JOBS);
	for (unsigned k = 0; k < LOG_MAX; k++)
		cr_assert_eq(atomic_load(&log_tags[k]), (int)k, "start %u is tag %d", k, atomic_load(&log_tags[k]));
	sb_rt_stop(rt, SB_STOP_DRAIN);
	cr_assert_eq(core_count(rt, SB_C_RUN, false), core_count(rt, SB_C_RUN, true),
		     "every task ran on the worker, none on the submitting thread");
	sb_thread_detach();
	t_done(rt);
}
