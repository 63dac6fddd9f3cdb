/*
 * test_family.c - the work-stealing family: memo 001's members (lanes, txslot, distribution)
 * and the options of the family base (stealing.h), each asserted on behaviour, not speed.
 *
 * Members: lane items and slot tasks run exactly once, never two of a transaction at a time,
 * and no lane or slot is left holding tasks, or its right, at the end; the distribution mode
 * loses no task while workers sleep (a 60 s suspend timeout against a 2 s stall watchdog) and
 * never has two distributors; the dedicated distributor only runs what it took itself.
 * Options, on a standalone `struct ws` driven from the test thread (the runtime runs the serial
 * policy, whose workers never look at it): steal_half, victim_order=next and =distance, and
 * conditional=ptl. Cooperative preemption: a long task is asked to yield and finishes later.
 */
#include <pthread.h>
#include <time.h>

#include "common.h"
#include "../policies/stealing.h"

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static uint64_t stat_of(struct sb_rt *rt, const char *key)
{
	return (uint64_t)t_policy_stat(rt, key);
}

static uint64_t ws_stat(struct ws *ws, const char *key)
{
	struct t_stat s = { key, 0, false };
	ws_stats(ws, t_stat_emit, &s);
	cr_assert(s.found, "the family base reports %s", key);
	return (uint64_t)s.v;
}

/* A policy, and up to three "name=value" settings, as values (Criterion re-executes). */
struct t_case {
	char policy[16];
	char sets[3][48];
};

static struct sb_rt *case_rt(const struct t_case *c, int threads, const char *const *more)
{
	const char *sets[16];
	size_t n = 0;
	for (size_t i = 0; i < 3; i++)
		if (c->sets[i][0])
			sets[n++] = c->sets[i];
	for (; more && *more && n < 15; more++)
		sets[n++] = *more;
	sets[n] = NULL;
	return t_rt(c->policy, threads, sets);
}

static enum sb_result noop(struct sb_task *t)
{
	(void)t;
	return SB_DONE;
}

/* ---- lanes and slots: exactly once, one at a time, nothing left behind ---- */

#define LX_TXNS 3
#define LX_CLIENTS 3
#define LX_JOBS 6
#define LX_FANOUT 12   /* items the root task spawns */
#define LX_CHAIN 2     /* each of those spawns a chain of this many more */
#define LX_DIRECT 8    /* items the request thread spawns into the open job */
#define LX_MAX 4096

static struct {
	struct sb_txn *txn[LX_TXNS];
	_Atomic int inflight[LX_TXNS];
	_Atomic unsigned overlaps;  /* an item started while another of its transaction ran */
	_Atomic unsigned contended; /* an item's transaction lock had a waiter */
	_Atomic unsigned next_id;
	unsigned linger;            /* slices an item waits, after submitting its successor, for it */
	_Atomic unsigned hits[LX_MAX];
} lx;

static unsigned txn_index(const struct sb_txn *x)
{
	return (unsigned)sb_txn_id(x) - 1;
}

static enum sb_result lx_item(struct sb_task *t);

static void lx_spawn_item(struct sb_job *j, uint64_t chain)
{
	struct sb_task *c = sb_task_new(j, lx_item, NULL);
	c->flags |= SB_TF_STICKY;
	c->u[0] = atomic_fetch_add(&lx.next_id, 1);
	c->u[2] = chain;
	sb_spawn(c);
}

/*
 * A lane item. The core runs every sticky body under its transaction's lock, so two items of a
 * lane started at once would not both be inside the body: the second would wait on the lock.
 * Both signs are looked for: a second body inside (inflight) and a lock that had a waiter
 * (state 2: set by a locker that had to wait, kept until the next unlock, so an item that waited
 * sees it when it starts and an item that was waited for sees it when it ends). An item submits
 * its successor first thing, while it runs; every fifth item yields once, so re-submission into
 * a held lane is covered too.
 */
static enum sb_result lx_item(struct sb_task *t)
{
	unsigned x = txn_index(t->txn);
	if (atomic_fetch_add(&lx.inflight[x], 1) != 0)
		atomic_fetch_add(&lx.overlaps, 1);
	if (atomic_load(&t->txn->lock) == 2)
		atomic_fetch_add(&lx.contended, 1);
	if (t->u[2]) {
		lx_spawn_item(t->job, t->u[2] - 1);
		t->u[2] = 0;
		/* chains: give a wrongly started successor time to reach the lock and wait there */
		for (unsigned i = 0; i < lx.linger && atomic_load(&t->txn->lock) != 2; i++)
			sb_work_ns(20000);
	}
	sb_work_ns(30000); /* far longer than a locker spins before it waits */
	if (atomic_load(&t->txn->lock) == 2)
		atomic_fetch_add(&lx.contended, 1);
	atomic_fetch_sub(&lx.inflight[x], 1);
	if (t->u[0] % 5 == 0 && !t->u[1]) {
		t->u[1] = 1;
		return SB_YIELD;
	}
	if (t->u[0] < LX_MAX)
		atomic_fetch_add(&lx.hits[t->u[0]], 1);
	return SB_DONE;
}

/* Plain work that submits an item when it is done: items arrive from every worker, at any time,
 * also while another item of the lane runs and the lane may just have been emptied. */
static enum sb_result lx_feeder(struct sb_task *t)
{
	sb_work_ns(1000 + 1000 * (t->u[0] % 7));
	lx_spawn_item(t->job, LX_CHAIN);
	return SB_DONE;
}

static enum sb_result lx_root(struct sb_task *t)
{
	for (unsigned i = 0; i < LX_FANOUT; i++) {
		struct sb_task *f = sb_task_new(t->job, lx_feeder, NULL);
		f->u[0] = i;
		sb_spawn(f);
	}
	return SB_DONE;
}

struct lx_client {
	struct sb_rt *rt;
	unsigned idx;
	unsigned failed;
};

static void *lx_client_main(void *p)
{
	struct lx_client *c = p;
	sb_thread_attach(c->rt);
	struct sb_job *jobs[LX_JOBS];
	for (unsigned k = 0; k < LX_JOBS; k++) {
		struct sb_job_desc d = { .txn = lx.txn[(c->idx + k) % LX_TXNS], .work_level = SB_WL_JOIN };
		jobs[k] = sb_job_create(c->rt, &d);
		/* the job stays open while this thread also submits items into it from outside */
		sb_job_hold(jobs[k]);
		sb_job_submit(jobs[k], sb_task_new(jobs[k], lx_root, NULL));
		for (unsigned i = 0; i < LX_DIRECT; i++)
			lx_spawn_item(jobs[k], 0);
		sb_job_release(jobs[k]);
	}
	for (unsigned k = 0; k < LX_JOBS; k++) {
		c->failed += !sb_job_wait(jobs[k]);
		sb_job_put(jobs[k]);
	}
	sb_thread_detach();
	return NULL;
}

/* keys of the counters that must balance once every worker has stopped */
static void held_keys(const char *policy, const char **got, const char **back)
{
	bool slots = !strcmp(policy, "txslot");
	*got = slots ? "tickets_issued" : "lane_takes";
	*back = slots ? "tickets_returned" : "lane_releases";
}

static struct t_case lx_cases[] = {
	{ "lanes", { "lane_budget=2" } },
	{ "lanes", { "lane_budget=1", "local_order=lifo", "steal_half=true" } },
	{ "lanes", { "lane_budget=3", "queue_log2=4" } },
	{ "txslot", { "" } },
	{ "txslot", { "local_order=lifo", "steal_half=true", "queue_log2=4" } },
};

ParameterizedTestParameters(family, lanes_and_slots)
{
	return cr_make_param_array(struct t_case, lx_cases, sizeof lx_cases / sizeof lx_cases[0]);
}

ParameterizedTestParameters(family, lanes_and_slots_chains)
{
	return cr_make_param_array(struct t_case, lx_cases, sizeof lx_cases / sizeof lx_cases[0]);
}

/* Every item ran once and alone; nothing is left in a lane or slot; the transactions end. */
static void lx_check_and_end(const struct t_case *c, struct sb_rt *rt, unsigned expect)
{
	unsigned n = atomic_load(&lx.next_id);
	cr_assert_eq(n, expect);
	for (unsigned i = 0; i < n; i++)
		cr_assert_eq(atomic_load(&lx.hits[i]), 1, "%s: item %u ran %u times", c->policy, i, atomic_load(&lx.hits[i]));
	cr_assert_eq(atomic_load(&lx.overlaps), 0, "%s: items of one transaction overlapped %u times", c->policy,
		     atomic_load(&lx.overlaps));
	cr_assert_eq(atomic_load(&lx.contended), 0, "%s: %u items found another item of their transaction waiting",
		     c->policy, atomic_load(&lx.contended));
	/* every job is done: nothing may be left in a lane or slot, nor a lane task in a queue */
	cr_assert_eq(t_queued(rt, -1), 0, "%s: %zu tasks left in lanes or slots", c->policy, t_queued(rt, -1));
	for (unsigned w = 0; w < sb_rt_nworkers(rt); w++)
		cr_assert_eq(t_queued(rt, (int)w), 0, "%s: worker %u has %zu queued", c->policy, w, t_queued(rt, (int)w));
	for (unsigned i = 0; i < LX_TXNS; i++)
		sb_txn_end(lx.txn[i]);
	sb_thread_detach();
	sb_rt_stop(rt, SB_STOP_DRAIN);
	cr_assert_null(sb_rt_failure(rt), "%s", sb_rt_failure(rt));
	/* workers stopped: every right that was taken has been given back */
	const char *got, *back;
	held_keys(c->policy, &got, &back);
	cr_assert_gt(stat_of(rt, got), 0, "%s: no right was ever taken", c->policy);
	cr_assert_eq(stat_of(rt, got), stat_of(rt, back), "%s: %s=%llu but %s=%llu", c->policy, got,
		     (unsigned long long)stat_of(rt, got), back, (unsigned long long)stat_of(rt, back));
	sb_rt_destroy(rt);
}

static struct sb_rt *lx_start(const struct t_case *c, const char *const *more)
{
	memset(&lx, 0, sizeof lx);
	struct sb_rt *rt = case_rt(c, 4, more);
	sb_thread_attach(rt);
	for (unsigned i = 0; i < LX_TXNS; i++)
		lx.txn[i] = sb_txn_begin(rt, i + 1);
	return rt;
}

/* Contention: items of a few transactions from request threads and from every worker, lanes
 * backed up, rights taken and offered back while others submit. */
ParameterizedTest(struct t_case *c, family, lanes_and_slots, .timeout = 60)
{
	struct sb_rt *rt = lx_start(c, NULL);
	pthread_t th[LX_CLIENTS];
	struct lx_client cl[LX_CLIENTS];
	for (unsigned i = 0; i < LX_CLIENTS; i++) {
		cl[i] = (struct lx_client){ .rt = rt, .idx = i };
		pthread_create(&th[i], NULL, lx_client_main, &cl[i]);
	}
	for (unsigned i = 0; i < LX_CLIENTS; i++) {
		pthread_join(th[i], NULL);
		cr_assert_eq(cl[i].failed, 0, "%s: %u jobs of client %u did not finish: %s", c->policy, cl[i].failed, i,
			     sb_rt_failure(rt) ? sb_rt_failure(rt) : "");
	}
	lx_check_and_end(c, rt, LX_CLIENTS * LX_JOBS * (LX_FANOUT * (1 + LX_CHAIN) + LX_DIRECT));
}

#define LX_CHAINS 1
#define LX_CHAIN_LEN 60

static enum sb_result lx_chain_root(struct sb_task *t)
{
	lx_spawn_item(t->job, LX_CHAIN_LEN - 1);
	return SB_DONE;
}

/* A chain: one item at a time in its lane, each submitting its successor as it starts and then
 * lingering up to 1 ms, with workers to spare that never sleep. The lane is empty whenever its
 * holder takes an item and the successor arrives while that item runs, with idle workers
 * stealing whatever is queued: a right given back too early lets one of them start the
 * successor, which then waits on the transaction lock while its predecessor watches. */
ParameterizedTest(struct t_case *c, family, lanes_and_slots_chains, .timeout = 60)
{
	static const char *const busy[] = { "busy_worker=true", NULL };
	struct sb_rt *rt = lx_start(c, busy);
	lx.linger = 50;
	struct sb_job *jobs[LX_CHAINS];
	for (unsigned i = 0; i < LX_CHAINS; i++) {
		struct sb_job_desc d = { .txn = lx.txn[i], .work_level = SB_WL_JOIN };
		jobs[i] = sb_job_create(rt, &d);
		sb_job_submit(jobs[i], sb_task_new(jobs[i], lx_chain_root, NULL));
	}
	for (unsigned i = 0; i < LX_CHAINS; i++) {
		cr_assert(sb_job_wait(jobs[i]), "%s: chain %u did not finish: %s", c->policy, i,
			  sb_rt_failure(rt) ? sb_rt_failure(rt) : "");
		sb_job_put(jobs[i]);
	}
	lx_check_and_end(c, rt, LX_CHAINS * LX_CHAIN_LEN);
}

/* No overflow: one worker whose lifo deque starts with 16 places and already holds 16 tasks
 * when the lane tasks or tickets are made, for more transactions than that: the deque grows,
 * nothing is refused or run by its spawner, and every item runs once. */
#define OV_TXNS 17

static struct {
	struct sb_txn *txn[OV_TXNS];
	_Atomic unsigned ran[OV_TXNS];
} ov;

static enum sb_result ov_item(struct sb_task *t)
{
	atomic_fetch_add(&ov.ran[sb_txn_id(t->txn) - 100], 1);
	return SB_DONE;
}

static enum sb_result ov_root(struct sb_task *t)
{
	for (unsigned i = 0; i < 16; i++)
		sb_spawn(sb_task_new(t->job, noop, NULL));
	for (unsigned i = 0; i < OV_TXNS; i++) {
		struct sb_task *c = sb_task_new(t->job, ov_item, NULL);
		c->flags |= SB_TF_STICKY;
		c->txn = ov.txn[i];
		sb_spawn(c);
	}
	return SB_DONE;
}

ParameterizedTestParameters(family, markers_beyond_capacity)
{
	static struct t_case cases[] = {
		{ "lanes", { "queue_log2=4", "local_order=lifo" } },
		{ "txslot", { "queue_log2=4", "local_order=lifo" } },
	};
	return cr_make_param_array(struct t_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct t_case *c, family, markers_beyond_capacity, .timeout = 60)
{
	memset(&ov, 0, sizeof ov);
	struct sb_rt *rt = case_rt(c, 1, NULL);
	sb_thread_attach(rt);
	for (unsigned i = 0; i < OV_TXNS; i++)
		ov.txn[i] = sb_txn_begin(rt, 100 + i);
	struct sb_job_desc d = { .work_level = SB_WL_JOIN };
	sb_job_put(t_run_job(rt, &d, ov_root, NULL));
	for (unsigned i = 0; i < OV_TXNS; i++) {
		cr_assert_eq(atomic_load(&ov.ran[i]), 1, "%s: the item of transaction %u ran %u times", c->policy, i,
			     atomic_load(&ov.ran[i]));
		sb_txn_end(ov.txn[i]);
	}
	cr_assert_eq(t_queued(rt, -1), 0);
	sb_thread_detach();
	sb_rt_stop(rt, SB_STOP_DRAIN);
	cr_assert_null(sb_rt_failure(rt), "%s", sb_rt_failure(rt));
	const char *got, *back;
	held_keys(c->policy, &got, &back);
	cr_assert_eq(stat_of(rt, got), OV_TXNS);
	cr_assert_eq(stat_of(rt, back), OV_TXNS);
	sb_rt_destroy(rt);
}

/* ---- distribution: no task lost while workers sleep, one distributor at most ---- */

#define DX_CLIENTS 2
#define DX_JOBS 40
#define DX_MID 6
#define DX_LEAF 5

static _Atomic unsigned dx_ran;

static enum sb_result dx_leaf(struct sb_task *t)
{
	(void)t;
	sb_work_ns(2000);
	atomic_fetch_add(&dx_ran, 1);
	return SB_DONE;
}

static enum sb_result dx_mid(struct sb_task *t)
{
	for (unsigned i = 0; i < DX_LEAF; i++) {
		sb_spawn(sb_task_new(t->job, dx_leaf, NULL));
		sb_work_ns(1000); /* spawn over time, so that an idle worker has something to hand on */
	}
	atomic_fetch_add(&dx_ran, 1);
	return SB_DONE;
}

static enum sb_result dx_root(struct sb_task *t)
{
	for (unsigned i = 0; i < DX_MID; i++)
		sb_spawn(sb_task_new(t->job, dx_mid, NULL));
	atomic_fetch_add(&dx_ran, 1);
	return SB_DONE;
}

struct dx_client {
	struct sb_rt *rt;
	unsigned failed;
};

static void *dx_client_main(void *p)
{
	struct dx_client *c = p;
	sb_thread_attach(c->rt);
	for (unsigned k = 0; k < DX_JOBS; k++) {
		sleep_ms(k % 3); /* let workers deactivate in between, sometimes */
		struct sb_job_desc d = { .work_level = SB_WL_JOIN, .teardown = SB_TEARDOWN_TASK };
		struct sb_job *j = sb_job_create(c->rt, &d);
		sb_job_submit(j, sb_task_new(j, dx_root, NULL));
		c->failed += !sb_job_wait(j);
		sb_job_put(j);
	}
	sb_thread_detach();
	return NULL;
}

ParameterizedTestParameters(family, distribution_loses_nothing)
{
	static struct t_case cases[] = {
		{ "distribution", { "distributor=mode", "use_preferred_worker_for_current_thread=true" } },
		{ "distribution", { "distributor=mode", "use_preferred_worker_for_current_thread=false" } },
		{ "distribution", { "distributor=dedicated", "use_preferred_worker_for_current_thread=true" } },
		{ "distribution", { "distributor=dedicated", "use_preferred_worker_for_current_thread=false" } },
	};
	return cr_make_param_array(struct t_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct t_case *c, family, distribution_loses_nothing, .timeout = 90)
{
	/* Workers deactivate after 5 empty rounds and would sleep a minute unless woken; a task
	 * queued for 2 s while a worker rests fails the run. With preferred workers a job grows on
	 * one worker and the distributor hands its tasks to sleeping ones; with round robin per
	 * call, tasks land on sleeping workers directly and wake them. */
	static const char *const sets[] = { "worker_try_count=5", "worker_suspend_timeout=60000000", "stall_limit=2000",
					    NULL };
	atomic_store(&dx_ran, 0);
	bool dedicated = strstr(c->sets[0], "dedicated") != NULL;
	struct sb_rt *rt = case_rt(c, 4, sets);
	pthread_t th[DX_CLIENTS];
	struct dx_client cl[DX_CLIENTS];
	for (unsigned i = 0; i < DX_CLIENTS; i++) {
		cl[i] = (struct dx_client){ .rt = rt };
		pthread_create(&th[i], NULL, dx_client_main, &cl[i]);
	}
	for (unsigned i = 0; i < DX_CLIENTS; i++) {
		pthread_join(th[i], NULL);
		cr_assert_eq(cl[i].failed, 0, "%s %s: %u jobs did not finish: %s", c->sets[0], c->sets[1], cl[i].failed,
			     sb_rt_failure(rt) ? sb_rt_failure(rt) : "");
	}
	cr_assert_eq(atomic_load(&dx_ran), DX_CLIENTS * DX_JOBS * (1 + DX_MID + DX_MID * DX_LEAF));
	sb_rt_stop(rt, SB_STOP_DRAIN);
	cr_assert_null(sb_rt_failure(rt), "%s", sb_rt_failure(rt));
	cr_assert_eq(stat_of(rt, "distributor_overlaps"), 0, "%s: two workers were in the mode at once", c->sets[0]);
	uint64_t enter = stat_of(rt, "mode_entries"), leave = stat_of(rt, "mode_exits");
	if (dedicated) {
		/* worker 0 never enters or leaves, and placement never gives it a task: it ran exactly
		 * the tasks it took from others and kept (teardown tasks are counted apart) */
		cr_assert_eq(enter, 0);
		cr_assert_eq(leave, 0);
		uint64_t w0[SB_NR_COUNTERS];
		sb_rt_worker_counters(rt, 0, w0);
		cr_assert_eq(w0[SB_C_RUN] + w0[SB_C_TEARDOWN], stat_of(rt, "distributor_ran"),
			     "the dedicated distributor ran %llu tasks and %llu teardowns but kept only %llu",
			     (unsigned long long)w0[SB_C_RUN], (unsigned long long)w0[SB_C_TEARDOWN],
			     (unsigned long long)stat_of(rt, "distributor_ran"));
	} else {
		/* four workers and two clients: some worker runs dry while another works */
		cr_assert_gt(enter, 0, "%s: the mode was never entered", c->sets[1]);
		cr_assert(leave == enter || leave + 1 == enter, "%llu entries but %llu exits", (unsigned long long)enter,
			  (unsigned long long)leave);
	}
	sb_rt_destroy(rt);
}

/* ---- the family's options on a standalone ws ---- */

/* A runtime whose workers never touch the ws the test makes: serial keeps to its callers. */
struct standalone {
	struct sb_rt *rt;
	struct sb_job *job; /* never submitted: only the owner of the test's tasks */
	struct ws *ws;
};

static struct standalone standalone(int threads, const char *const *sets, const struct ws_params *p)
{
	struct standalone s = { .rt = t_rt("serial", threads, sets) };
	sb_thread_attach(s.rt);
	struct sb_job_desc d = { .work_level = SB_WL_JOIN };
	s.job = sb_job_create(s.rt, &d);
	char err[256] = "";
	cr_assert_eq(ws_create(s.rt, p, &s.ws, err, sizeof err), 0, "%s", err);
	return s;
}

static void standalone_done(struct standalone *s)
{
	ws_destroy(s->ws);
	sb_job_put(s->job);
	sb_thread_detach();
	t_done(s->rt);
}

static struct ws_params ws_defaults(void)
{
	struct ws_params p;
	sb_param_defaults(ws_param_table, &p);
	return p;
}

/* Queue `k` tasks on worker w's LTQ, tagged id0, id0+1, ... */
static void put(struct standalone *s, unsigned w, uint64_t id0, unsigned k)
{
	for (unsigned i = 0; i < k; i++) {
		struct sb_task *t = sb_task_new(s->job, noop, NULL);
		t->u[0] = id0 + i;
		cr_assert_eq(ws_push(s->ws, w, sb_thread_self(), t), (int)w);
	}
}

static uint64_t id_of(const struct sb_task *t)
{
	cr_assert_not_null(t, "a task was taken");
	return t->u[0];
}

Test(family, steal_half_takes_half, .timeout = 30)
{
	struct ws_params p = ws_defaults();
	p.steal_half = true;
	struct standalone s = standalone(2, NULL, &p);
	put(&s, 1, 0, 10);
	/* Go's rule: half of 10, the oldest first; one comes back to run, four join the thief */
	cr_assert_eq(id_of(ws_steal_from(s.ws, 0, 1)), 0);
	cr_assert_eq(ws_main_len(s.ws, 1), 5);
	cr_assert_eq(ws_main_len(s.ws, 0), 4);
	cr_assert_eq(ws_stat(s.ws, "steal_half_extra"), 4);
	for (uint64_t id = 1; id <= 4; id++)
		cr_assert_eq(id_of(ws_pop(s.ws, 0)), id, "the extras keep their order in the thief's queue");
	cr_assert_null(ws_pop(s.ws, 0));
	/* an odd count rounds up: 3 of 5 */
	cr_assert_eq(id_of(ws_steal_from(s.ws, 0, 1)), 5);
	cr_assert_eq(ws_main_len(s.ws, 1), 2);
	cr_assert_eq(ws_main_len(s.ws, 0), 2);
	standalone_done(&s);

	/* without the option a steal takes exactly one */
	p.steal_half = false;
	s = standalone(2, NULL, &p);
	put(&s, 1, 0, 10);
	cr_assert_eq(id_of(ws_steal_from(s.ws, 0, 1)), 0);
	cr_assert_eq(ws_main_len(s.ws, 1), 9);
	cr_assert_eq(ws_main_len(s.ws, 0), 0);
	standalone_done(&s);
}

/* Worker 0 sweeps four workers; workers 2 and 3 have two tasks each (ids 2x and 3x). */
static void sweep_order(int victim_order, const uint64_t expect[4])
{
	struct ws_params p = ws_defaults();
	p.victim_order = victim_order;
	struct standalone s = standalone(4, NULL, &p);
	put(&s, 2, 20, 2);
	put(&s, 3, 30, 2);
	for (unsigned k = 0; k < 4; k++)
		cr_assert_eq(id_of(ws_steal(s.ws, 0)), expect[k], "steal %u", k);
	cr_assert_null(ws_steal(s.ws, 0));
	standalone_done(&s);
}

Test(family, victim_order_next_starts_after_last_victim, .timeout = 30)
{
	/* next: each sweep starts after the last victim, so the two victims alternate */
	static const uint64_t next[4] = { 20, 30, 21, 31 };
	sweep_order(WS_VICTIM_NEXT, next);
	/* same: a sweep starts at the last victim, which is drained first */
	static const uint64_t same[4] = { 20, 21, 30, 31 };
	sweep_order(WS_VICTIM_SAME, same);
}

Test(family, victim_order_distance_prefers_nearest, .timeout = 30)
{
	/* two packages of two cores, worker i on core i: worker 1's neighbour is worker 0 */
	static const char *const topo[] = { "topology=package:2 core:2 pu:1", "initial_core=0", NULL };
	struct ws_params p = ws_defaults();
	p.victim_order = WS_VICTIM_DISTANCE;
	struct standalone s = standalone(4, topo, &p);
	cr_assert_lt(sb_worker_distance(s.rt, 1, 0), sb_worker_distance(s.rt, 1, 2), "the synthetic topology is in use");
	cr_assert_eq(sb_worker_distance(s.rt, 1, 2), sb_worker_distance(s.rt, 1, 3));
	put(&s, 3, 30, 1);
	put(&s, 2, 20, 1);
	put(&s, 0, 0, 1);
	/* worker 1 visits 0 (same package) before 2 and 3, although "next" would start at 2 */
	cr_assert_eq(id_of(ws_steal(s.ws, 1)), 0);
	cr_assert_eq(id_of(ws_steal(s.ws, 1)), 20);
	cr_assert_eq(id_of(ws_steal(s.ws, 1)), 30);
	cr_assert_null(ws_steal(s.ws, 1));
	standalone_done(&s);
}

static _Atomic int ptl_flag;

static bool ptl_check(struct sb_task *t)
{
	(void)t;
	return atomic_load(&ptl_flag) != 0;
}

Test(family, conditional_ptl_parks_and_requeues, .timeout = 30)
{
	atomic_store(&ptl_flag, 0);
	struct ws_params p = ws_defaults();
	p.conditional = WS_COND_PTL;
	p.ptl_requeue = 3;
	struct standalone s = standalone(2, NULL, &p);
	struct sb_task *c = sb_task_new(s.job, noop, NULL);
	c->flags |= SB_TF_COND;
	c->check = ptl_check;
	c->u[0] = 99;
	cr_assert_eq(ws_push(s.ws, 0, sb_thread_self(), c), 0);
	/* taken before its time: parked in worker 0's PTL, out of the LTQ and out of thieves' reach */
	cr_assert_null(ws_pop(s.ws, 0));
	cr_assert_eq(ws_main_len(s.ws, 0), 0);
	cr_assert_null(ws_steal_from(s.ws, 1, 0));
	/* two more failed checks, one per pop, while other work runs */
	put(&s, 0, 1, 2);
	cr_assert_eq(id_of(ws_pop(s.ws, 0)), 1);
	cr_assert_eq(id_of(ws_pop(s.ws, 0)), 2);
	cr_assert_eq(ws_stat(s.ws, "ptl_requeues"), 0);
	/* the third failed check sends it back to the LTQ, behind what is queued there */
	put(&s, 0, 3, 2);
	cr_assert_eq(id_of(ws_pop(s.ws, 0)), 3);
	cr_assert_eq(ws_stat(s.ws, "ptl_requeues"), 1);
	cr_assert_eq(ws_main_len(s.ws, 0), 2);
	/* where a thief can now reach it */
	cr_assert_eq(id_of(ws_steal_from(s.ws, 1, 0)), 4);
	cr_assert_eq(ws_steal_from(s.ws, 1, 0), c);
	/* parked again, then ready: the owner's next pop returns it with the check done */
	cr_assert_eq(ws_push(s.ws, 0, sb_thread_self(), c), 0);
	cr_assert_null(ws_pop(s.ws, 0));
	atomic_store(&ptl_flag, 1);
	cr_assert_eq(ws_pop(s.ws, 0), c);
	cr_assert_eq(c->flags & SB_TF_COND, 0, "a PTL task leaves with its check done");
	standalone_done(&s);
}

/* ---- cooperative preemption ---- */

static struct {
	_Atomic unsigned runs;
	_Atomic unsigned never_asked; /* the first run hit its safety bound instead of a request */
	_Atomic unsigned finished;
} pe;

#define PE_REST 5

/* First run: work until the monitor asks for the CPU, then yield. Later runs: finish the rest,
 * PE_REST slices, yielding again if asked. Progress is kept in u[0] (slices left of the rest)
 * and u[1] (the first run is over). */
static enum sb_result pe_long(struct sb_task *t)
{
	atomic_fetch_add(&pe.runs, 1);
	if (!t->u[1]) {
		/* 10 s of slices at most: a monitor that never asks fails the test, never hangs it */
		for (unsigned i = 0; !sb_should_yield(); i++) {
			if (i == 500000) {
				atomic_store(&pe.never_asked, 1);
				break;
			}
			sb_work_ns(20000);
		}
		t->u[1] = 1;
		t->u[0] = PE_REST;
		return SB_YIELD;
	}
	while (t->u[0]) {
		sb_work_ns(20000);
		t->u[0]--;
		if (t->u[0] && sb_should_yield())
			return SB_YIELD;
	}
	atomic_store(&pe.finished, 1);
	return SB_DONE;
}

Test(family, preemption_asks_long_task_to_yield, .timeout = 60)
{
	memset(&pe, 0, sizeof pe);
	static const char *const sets[] = { "preempt_threshold=2000", NULL };
	struct sb_rt *rt = t_rt("stealing", 1, sets);
	sb_thread_attach(rt);
	struct sb_job_desc d = { .work_level = SB_WL_INFINITY };
	sb_job_put(t_run_job(rt, &d, pe_long, NULL));
	cr_assert_eq(atomic_load(&pe.never_asked), 0, "the monitor never asked the long task to yield");
	cr_assert(atomic_load(&pe.finished), "the remainder ran to the end");
	sb_thread_detach();
	sb_rt_stop(rt, SB_STOP_DRAIN);
	uint64_t c[SB_NR_COUNTERS];
	sb_rt_worker_counters(rt, 0, c);
	/* one worker: every re-run starts there, and the start counts the request it follows */
	cr_assert_geq(c[SB_C_YIELD], 1);
	cr_assert_eq(c[SB_C_YIELD] + 1, atomic_load(&pe.runs), "each yield was followed by one re-run");
	cr_assert_geq(c[SB_C_PREEMPT_REQ], 1, "the core counted the yield request");
	cr_assert_null(sb_rt_failure(rt));
	sb_rt_destroy(rt);
}
