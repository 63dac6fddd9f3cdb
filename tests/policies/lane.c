/*
 * lane.c - the lane protocol (policies/lane.c) through the two policies built on it, lanes and
 * txslot (memo 001): lane items and slot tasks run exactly once, never two of a transaction at
 * a time, and no lane or slot is left holding tasks, or its right, at the end, a cancel in
 * the middle included; markers beyond the capacity spill and still run.
 */
#include <pthread.h>

#include "../common.h"
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

ParameterizedTestParameters(family, lanes_and_slots_cancelled)
{
	return cr_make_param_array(struct t_case, lx_cases, sizeof lx_cases / sizeof lx_cases[0]);
}

static struct sb_rt *cx_rt;
static _Atomic unsigned cx_started;

/* An item that, once started, runs until the run is cancelled: only the items already running
 * when the cancel comes run; every later one is dropped. */
static enum sb_result cx_item(struct sb_task *t)
{
	unsigned x = txn_index(t->txn);
	if (atomic_fetch_add(&lx.inflight[x], 1) != 0)
		atomic_fetch_add(&lx.overlaps, 1);
	atomic_fetch_add(&cx_started, 1);
	while (!sb_rt_cancelled(cx_rt))
		sb_work_ns(1000);
	atomic_fetch_sub(&lx.inflight[x], 1);
	atomic_fetch_add(&lx.hits[t->u[0]], 1);
	return SB_DONE;
}

/* Memo 001's hazard: a lane's right taken while its lane task is lost stalls the lane. The one
 * path that drops queued tasks is a cancel; here a stop in CANCEL mode comes while every lane is
 * backed up and held. Every right taken is still given back and nothing stays queued: the lane
 * task is the lane's own marker, never a job's task, so the cancel drops the items it serves and
 * not the marker. */
#define CX_JOBS 6
#define CX_ITEMS 40

ParameterizedTest(struct t_case *c, family, lanes_and_slots_cancelled, .timeout = 60)
{
	struct sb_rt *rt = cx_rt = lx_start(c, NULL);
	atomic_store(&cx_started, 0);
	struct sb_job *jobs[CX_JOBS];
	for (unsigned k = 0; k < CX_JOBS; k++) {
		struct sb_job_desc d = { .txn = lx.txn[k % LX_TXNS], .work_level = SB_WL_JOIN };
		jobs[k] = sb_job_create(rt, &d);
		sb_job_hold(jobs[k]);
		sb_job_submit(jobs[k], sb_task_new(jobs[k], t_noop, NULL));
		for (unsigned i = 0; i < CX_ITEMS; i++) {
			struct sb_task *t = sb_task_new(jobs[k], cx_item, NULL);
			t->flags |= SB_TF_STICKY;
			t->u[0] = atomic_fetch_add(&lx.next_id, 1);
			sb_spawn(t);
		}
		sb_job_release(jobs[k]);
	}
	while (atomic_load(&cx_started) == 0)
		t_sleep_us(100);
	for (unsigned k = 0; k < CX_JOBS; k++)
		sb_job_put(jobs[k]);
	sb_thread_detach();
	sb_rt_stop(rt, SB_STOP_CANCEL);
	cr_assert_null(sb_rt_failure(rt), "%s", sb_rt_failure(rt));
	unsigned ran = 0, made = atomic_load(&lx.next_id);
	for (unsigned i = 0; i < made; i++) {
		cr_assert_leq(atomic_load(&lx.hits[i]), 1, "%s: item %u ran %u times", c->policy, i, atomic_load(&lx.hits[i]));
		ran += atomic_load(&lx.hits[i]);
	}
	cr_assert_eq(made, CX_JOBS * CX_ITEMS);
	/* a worker starts one item at most: it runs until that worker has seen the cancel, after which
	 * the worker drops every task (the same word: the run's slow flags). The rest were dropped. */
	cr_assert(ran >= 1 && ran <= sb_rt_nworkers(rt), "%s: %u of %u items ran", c->policy, ran, made);
	cr_assert_eq(atomic_load(&lx.overlaps), 0, "%s: items of one transaction overlapped %u times", c->policy,
		     atomic_load(&lx.overlaps));
	cr_assert_eq(t_queued(rt, -1), 0, "%s: %zu tasks left in lanes or slots", c->policy, t_queued(rt, -1));
	for (unsigned w = 0; w < sb_rt_nworkers(rt); w++)
		cr_assert_eq(t_queued(rt, (int)w), 0, "%s: worker %u has %zu queued", c->policy, w, t_queued(rt, (int)w));
	const char *got, *back;
	held_keys(c->policy, &got, &back);
	cr_assert_gt(stat_of(rt, got), 0, "%s: no right was ever taken", c->policy);
	cr_assert_eq(stat_of(rt, got), stat_of(rt, back), "%s: after the cancel %s=%llu but %s=%llu", c->policy, got,
		     (unsigned long long)stat_of(rt, got), back, (unsigned long long)stat_of(rt, back));
	for (unsigned i = 0; i < LX_TXNS; i++)
		sb_txn_end(lx.txn[i]);
	cr_assert_null(sb_rt_failure(rt), "%s", sb_rt_failure(rt));
	sb_rt_destroy(rt);
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
		sb_spawn(sb_task_new(t->job, t_noop, NULL));
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
