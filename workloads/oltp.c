/*
 * oltp.c - the default workload: Tsurugi-like transactions, built from the kinds of request
 * jogasaki runs as jobs (memo 000: transaction begin, SQL statements, commit, durability
 * notification).
 *
 * Models: `clients` sessions, each running transactions one after another, closed loop (with
 * think_us between them) or open loop (Poisson arrivals at `rate` transactions per second over
 * all clients; an arrival that finds its client still busy waits, and its latency counts from
 * the intended arrival, kept in the begin job's t_arrival). A transaction is one sb_txn with
 *   begin      one task; with probability ltx_ratio it then waits, as a conditional task, for the
 *              next durability epoch (the LTX begin wait, memo 000's use of conditional tasks);
 *   statements `statements` (or drawn up to statements_max) picked from a weighted mix by work
 *              level: insert (10) is one sticky write task with in-place teardown; point read
 *              (20), filter (30) and multi-record (40) are bootstrap + one process task; join
 *              (50) and aggregate (60) are bootstrap + `partitions` parallel process tasks +
 *              exchange (jogasaki's default_process_partitions is 5); scan (999) is the same with
 *              long process tasks that yield their remainder every scan_yield_us or when the
 *              preemption monitor asks. Tasks that touch storage are sticky (sticky_reads);
 *              bootstrap and exchange are not;
 *   commit     a pre-commit task; with commit_response=available a response task follows at
 *              once (with direct_commit_callback the pre-commit task does the response's work
 *              itself, jogasaki's experimental configuration::direct_commit_callback_); with stored (jogasaki's default) the job takes a hold and registers with the
 *              durability manager, and a durability-notification job, submitted every epoch_us
 *              by the workload's durability thread, answers every waiting commit whose epoch is
 *              covered: it spawns the response task into the commit job (with the
 *              suspended_worker hint) and releases the hold.
 * Begin, commit and durability jobs are never run serially (force_stealing). The transaction
 * ends only after its commit job has finished. Bounded runs count transactions, not jobs.
 *
 * Does not model: data, conflicts, aborts, or the CC's own threads; costs are busy work drawn
 * per task from `dist` with a mean per task kind.
 *
 * Concurrency: each client owns its struct oltp_client; its wl_dag and commit_wait are read by
 * the tasks of the one job the client has in flight. The durability manager (`waiting`, a
 * Treiber stack) is pushed by pre-commit tasks and drained by notification tasks on any
 * threads; a node belongs to whoever popped it until it is pushed back or answered. `epoch` is
 * written by the durability thread only.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

enum { C_BEGIN, C_INSERT, C_POINT, C_FILTER, C_MULTI, C_JOIN, C_AGGREGATE, C_SCAN, C_COMMIT, C_DURABILITY };
static const char *const oltp_classes[] = { "begin", "insert",    "point", "filter", "multi",      "join",
					     "aggregate", "scan", "commit", "durability", NULL };
#define NKINDS (C_SCAN - C_INSERT + 1)
static const int kind_level[NKINDS] = { SB_WL_SIMPLE_WRITE,       SB_WL_KEY_OPERATION, SB_WL_SIMPLE_CRUD,
					SB_WL_SIMPLE_MULTIRECORD, SB_WL_JOIN,          SB_WL_AGGREGATE,
					SB_WL_INFINITY };

enum { R_AVAILABLE, R_STORED };
static const char *const responses[] = { "available", "stored", NULL };

struct oltp_params {
	int64_t clients;
	double rate;
	int64_t think_us;
	int64_t statements, statements_max;
	int64_t mix_insert, mix_point, mix_filter, mix_multi, mix_join, mix_aggregate, mix_scan;
	int64_t partitions;
	bool sticky_reads;
	double ltx_ratio;
	int commit_response;
	bool direct_commit_callback;
	int64_t epoch_us;
	int dist;
	int64_t begin_ns, write_ns, point_ns, filter_ns, multi_ns, join_ns, aggregate_ns, scan_ns;
	int64_t bootstrap_ns, exchange_ns, precommit_ns, response_ns, durability_ns;
	int64_t scan_yield_us;
};

#define P struct oltp_params
#define NS_MAX 1000000000
static const struct sb_param oltp_param_table[] = {
	SB_PARAM_INT(P, clients, 16, 1, 1024, "sessions (request threads), each running transactions one after another"),
	SB_PARAM_DOUBLE(P, rate, 0, 0, 1e7, "open loop: transactions per second over all clients (Poisson); 0 = closed loop"),
	SB_PARAM_INT(P, think_us, 0, 0, 60000000, "closed loop: pause between a client's transactions, us"),
	SB_PARAM_INT(P, statements, 4, 0, 10000, "statements per transaction"),
	SB_PARAM_INT(P, statements_max, 0, 0, 10000, "if above statements: draw the count uniformly from statements..this"),
	SB_PARAM_INT(P, mix_insert, 30, 0, 1000000, "weight of INSERT statements (work level 10)"),
	SB_PARAM_INT(P, mix_point, 40, 0, 1000000, "weight of point reads (work level 20)"),
	SB_PARAM_INT(P, mix_filter, 10, 0, 1000000, "weight of filtered reads (work level 30)"),
	SB_PARAM_INT(P, mix_multi, 8, 0, 1000000, "weight of multi-record statements (work level 40)"),
	SB_PARAM_INT(P, mix_join, 5, 0, 1000000, "weight of joins (work level 50)"),
	SB_PARAM_INT(P, mix_aggregate, 5, 0, 1000000, "weight of aggregations (work level 60)"),
	SB_PARAM_INT(P, mix_scan, 2, 0, 1000000, "weight of long scans (work level 999)"),
	SB_PARAM_INT(P, partitions, 5, 1, WL_DAG_MAX, "parallel process tasks of join, aggregate and scan (jogasaki default_process_partitions 5)"),
	SB_PARAM_BOOL(P, sticky_reads, 1, "process tasks that read storage are sticky to their transaction (jogasaki)"),
	SB_PARAM_DOUBLE(P, ltx_ratio, 0.1, 0, 1, "fraction of transactions that are LTX: begin waits for the next epoch"),
	SB_PARAM_ENUM(P, commit_response, R_STORED, responses, "answer a commit when pre-committed or when durable (jogasaki default stored)"),
	SB_PARAM_BOOL(P, direct_commit_callback, 0,
		      "commit_response=available: the pre-commit task answers itself, no response task (jogasaki's experimental setting)"),
	SB_PARAM_INT(P, epoch_us, 5000, 100, 10000000, "durability epoch: a notification job every this many us"),
	SB_PARAM_ENUM(P, dist, WL_EXP, wl_dist_names, "distribution of every task cost around its mean"),
	SB_PARAM_INT(P, begin_ns, 2000, 0, NS_MAX, "mean cost of the begin task"),
	SB_PARAM_INT(P, write_ns, 5000, 0, NS_MAX, "mean cost of an INSERT's write task"),
	SB_PARAM_INT(P, point_ns, 5000, 0, NS_MAX, "mean cost of a point read's process task"),
	SB_PARAM_INT(P, filter_ns, 20000, 0, NS_MAX, "mean cost of a filtered read's process task"),
	SB_PARAM_INT(P, multi_ns, 50000, 0, NS_MAX, "mean cost of a multi-record statement's process task"),
	SB_PARAM_INT(P, join_ns, 50000, 0, NS_MAX, "mean cost of each of a join's process tasks"),
	SB_PARAM_INT(P, aggregate_ns, 40000, 0, NS_MAX, "mean cost of each of an aggregation's process tasks"),
	SB_PARAM_INT(P, scan_ns, 500000, 0, NS_MAX, "mean cost of each of a scan's process tasks"),
	SB_PARAM_INT(P, bootstrap_ns, 2000, 0, NS_MAX, "mean cost of a statement's bootstrap task"),
	SB_PARAM_INT(P, exchange_ns, 10000, 0, NS_MAX, "mean cost of the exchange task of join, aggregate and scan"),
	SB_PARAM_INT(P, precommit_ns, 5000, 0, NS_MAX, "mean cost of the pre-commit task"),
	SB_PARAM_INT(P, response_ns, 1000, 0, NS_MAX, "mean cost of the commit response task"),
	SB_PARAM_INT(P, durability_ns, 2000, 0, NS_MAX, "mean cost of a durability notification's own task"),
	SB_PARAM_INT(P, scan_yield_us, 100, 0, 60000000, "a scan task yields its remainder after this much work (and when asked); 0 = only when asked"),
	SB_PARAM_END,
};
#undef NS_MAX
#undef P

/* A commit waiting for durability: the client's own node, lent to the durability manager. */
struct commit_wait {
	struct commit_wait *next;
	struct sb_job *job;
	uint64_t marker;      /* durable once the epoch reaches it */
	uint64_t response_ns;
};

struct oltp;

struct oltp_client {
	struct oltp *o;
	uint64_t ntxn;
	struct wl_dag dag;        /* the statement in flight */
	struct commit_wait wait;  /* the commit in flight */
};

struct oltp {
	struct wl_clients cs; /* first: see common.h */
	const struct wl_env *env;
	struct oltp_params p;
	int64_t mix[NKINDS];      /* weights by statement kind */
	int64_t mean[NKINDS];     /* mean process (or write) cost by statement kind */
	struct oltp_client *oc;

	_Atomic uint64_t epoch;                  /* durable epoch */
	_Atomic(struct commit_wait *) waiting;   /* commits waiting for durability */
	_Atomic int64_t nr_notify_live;          /* notification jobs not yet torn down */
	_Atomic bool quit;                       /* every client is done: the durability thread ends */
	struct sb_xthread durability;
	bool durability_started;
	struct wl_rng drng;                      /* the durability thread's cost stream */
};
_Static_assert(offsetof(struct oltp, cs) == 0, "workload state starts with its clients");

static uint64_t cost(struct wl_client *c, int64_t mean)
{
	struct oltp *o = c->set->user;
	return wl_cost(&c->rng, o->p.dist, (double)mean);
}

static uint64_t durable_epoch(struct oltp *o)
{
	/* acquire: pairs with the release increment in durability_main */
	return atomic_load_explicit(&o->epoch, memory_order_acquire);
}

/* ---- the durability manager ---- */

static void waiting_push(struct oltp *o, struct commit_wait *w)
{
	/* relaxed: the CAS below re-reads */
	struct commit_wait *head = atomic_load_explicit(&o->waiting, memory_order_relaxed);
	do {
		w->next = head;
		/* release: publishes the node's fields to the notification task that pops it
		 * (its acquire exchange) */
	} while (!atomic_compare_exchange_weak_explicit(&o->waiting, &head, w, memory_order_release,
							memory_order_relaxed));
}

static enum sb_result notify_task(struct sb_task *t)
{
	struct oltp *o = t->arg;
	sb_work_ns(t->u[0]);
	uint64_t e = durable_epoch(o);
	/* acquire: pairs with the release CAS in waiting_push. Taking the whole list at once has
	 * no ABA problem, and two notifications running together get disjoint parts of it. */
	struct commit_wait *w = atomic_exchange_explicit(&o->waiting, NULL, memory_order_acquire);
	while (w) {
		struct commit_wait *next = w->next;
		if (w->marker > e) {
			waiting_push(o, w);
		} else {
			/* once the response is spawned the client may reuse w: read it first */
			struct sb_job *cj = w->job;
			uint64_t ns = w->response_ns;
			sb_spawn(wl_work(&o->cs, cj, ns, SB_TF_URGENT));
			sb_job_release(cj);
		}
		w = next;
	}
	return SB_DONE;
}

static void notify_done(struct sb_job *j)
{
	struct oltp *o = j->arg;
	wl_count_done(&o->cs, j);
	/* release: pairs with the acquire in durability_main's final wait */
	atomic_fetch_sub_explicit(&o->nr_notify_live, 1, memory_order_release);
}

static void notify(struct oltp *o, struct sb_rt *rt)
{
	struct sb_job_desc d = { .cls = C_DURABILITY, .work_level = SB_WL_UNDEFINED, .done = notify_done, .arg = o,
				 .force_stealing = true };
	struct sb_job *j = sb_job_create(rt, &d);
	struct sb_task *t = wl_task(&o->cs, j, notify_task, o);
	t->u[0] = wl_cost(&o->drng, o->p.dist, (double)o->p.durability_ns);
	/* relaxed: only this thread waits for the count to fall; the decrements release */
	atomic_fetch_add_explicit(&o->nr_notify_live, 1, memory_order_relaxed);
	wl_submit(&o->cs, j, t);
	sb_job_put(j);
}

/* A cancelled run (a drain that ran out, a failed run) drops the notification tasks that would
 * answer the waiting commits, so the durability thread ends those commits itself, cancelled:
 * their holds are released and their jobs finish. */
static void cancel_waiting(struct oltp *o)
{
	/* acquire: pairs with the release CAS in waiting_push (as in notify_task) */
	struct commit_wait *w = atomic_exchange_explicit(&o->waiting, NULL, memory_order_acquire);
	while (w) {
		/* once its hold is released the client may reuse w: read it first */
		struct commit_wait *next = w->next;
		struct sb_job *cj = w->job;
		sb_job_cancel(cj);
		sb_job_release(cj);
		w = next;
	}
}

/* The datastore's side: the durable epoch advances every epoch_us and each advance schedules a
 * notification job (jogasaki's durability callback). Runs until every client has finished, so
 * commits still waiting during stop() are answered (or, in a cancelled run, cancelled). */
static void *durability_main(void *arg)
{
	struct oltp *o = arg;
	struct sb_rt *rt = o->env->rt;
	sb_thread_attach(rt);
	uint64_t period = (uint64_t)o->p.epoch_us * 1000;
	uint64_t next = sb_now_ns() + period;
	/* acquire: pairs with the release store in oltp_stop, after the clients are joined */
	while (!atomic_load_explicit(&o->quit, memory_order_acquire) && !sb_rt_failure(rt)) {
		wl_wait_until(next);
		uint64_t now = sb_now_ns();
		next = next + period > now ? next + period : now + period;
		/* release: pairs with durable_epoch(); a commit registered before this sees it */
		atomic_fetch_add_explicit(&o->epoch, 1, memory_order_release);
		if (sb_rt_cancelled(rt))
			cancel_waiting(o);
		else
			notify(o, rt);
	}
	/* acquire: pairs with the release decrement in notify_done */
	while (atomic_load_explicit(&o->nr_notify_live, memory_order_acquire) > 0 && !sb_rt_failure(rt))
		wl_wait_until(sb_now_ns() + 100000);
	sb_thread_detach();
	return NULL;
}

/* ---- transactions ---- */

static bool ltx_ready(struct sb_task *t)
{
	return durable_epoch(t->arg) >= t->u[1];
}

static enum sb_result begin_task(struct sb_task *t)
{
	struct oltp_client *oc = t->arg;
	sb_work_ns(t->u[0]);
	if (t->u[1]) {
		/* LTX: the begin completes once the next epoch is durable */
		struct sb_task *w = wl_work(&oc->o->cs, t->job, 0, SB_TF_COND);
		w->check = ltx_ready;
		w->arg = oc->o;
		w->u[1] = durable_epoch(oc->o) + 1;
		sb_spawn(w);
	}
	return SB_DONE;
}

static enum sb_result precommit_task(struct sb_task *t)
{
	struct oltp_client *oc = t->arg;
	struct oltp *o = oc->o;
	sb_work_ns(t->u[0]);
	if (o->p.commit_response == R_AVAILABLE) {
		/* memo 000: the pre-commit callback schedules the response as a task, since it should
		 * not do slow work such as sending; direct_commit_callback sends it from the callback */
		if (o->p.direct_commit_callback)
			sb_work_ns(t->u[1]);
		else
			sb_spawn(wl_work(&o->cs, t->job, t->u[1], SB_TF_URGENT));
		return SB_DONE;
	}
	/* stored: the job stays open, without a task, until its epoch is durable */
	sb_job_hold(t->job);
	oc->wait.job = t->job;
	oc->wait.response_ns = t->u[1];
	oc->wait.marker = durable_epoch(o) + 1;
	waiting_push(o, &oc->wait);
	return SB_DONE;
}

static struct sb_job *new_job(struct wl_client *c, unsigned cls, int level, struct sb_txn *x, enum sb_teardown td,
			      bool force, uint64_t arrival)
{
	struct sb_job_desc d = { .cls = cls, .work_level = level, .txn = x, .teardown = td, .done = wl_job_done,
				 .arg = c->set->user, .force_stealing = force, .t_arrival = arrival };
	return sb_job_create(c->set->env->rt, &d);
}

static bool run_begin(struct oltp_client *oc, struct wl_client *c, struct sb_txn *x, uint64_t arrival)
{
	struct oltp *o = oc->o;
	struct sb_job *j = new_job(c, C_BEGIN, SB_WL_UNDEFINED, x, SB_TEARDOWN_DEFAULT, true, arrival);
	struct sb_task *t = wl_task(&o->cs, j, begin_task, oc);
	t->u[0] = cost(c, o->p.begin_ns);
	t->u[1] = wl_rng_unit(&c->rng) < o->p.ltx_ratio;
	wl_client_submit(c, j, t, t->u[0] ^ t->u[1] << 63);
	return wl_wait_put(j);
}

static bool run_statement(struct oltp_client *oc, struct wl_client *c, struct sb_txn *x)
{
	struct oltp *o = oc->o;
	int k = wl_pick(&c->rng, o->mix, NKINDS);
	unsigned cls = (unsigned)(C_INSERT + k);
	if (cls == C_INSERT) {
		/* simple INSERT: one write task, torn down in place (memo 000) */
		struct sb_job *j = new_job(c, cls, kind_level[k], x, SB_TEARDOWN_INPLACE, false, 0);
		uint64_t ns = cost(c, o->mean[k]);
		wl_client_submit(c, j, wl_work(&o->cs, j, ns, SB_TF_STICKY), ns);
		return wl_wait_put(j);
	}
	struct wl_dag *d = &oc->dag;
	d->cs = &o->cs;
	d->exchange = cls >= C_JOIN;
	d->nproc = cls >= C_JOIN ? (unsigned)o->p.partitions : 1;
	d->proc_flags = o->p.sticky_reads ? SB_TF_STICKY : 0;
	d->yields = cls == C_SCAN;
	d->yield_ns = (uint64_t)o->p.scan_yield_us * 1000;
	d->bootstrap_ns = cost(c, o->p.bootstrap_ns);
	for (unsigned i = 0; i < d->nproc; i++)
		d->proc_ns[i] = cost(c, o->mean[k]);
	d->exchange_ns = d->exchange ? cost(c, o->p.exchange_ns) : 0;
	struct sb_job *j = new_job(c, cls, kind_level[k], x, SB_TEARDOWN_DEFAULT, false, 0);
	wl_client_submit(c, j, wl_dag_root(j, d), wl_dag_cost(d));
	return wl_wait_put(j);
}

static bool run_commit(struct oltp_client *oc, struct wl_client *c, struct sb_txn *x)
{
	struct oltp *o = oc->o;
	struct sb_job *j = new_job(c, C_COMMIT, SB_WL_UNDEFINED, x, SB_TEARDOWN_DEFAULT, true, 0);
	struct sb_task *t = wl_task(&o->cs, j, precommit_task, oc);
	t->u[0] = cost(c, o->p.precommit_ns);
	t->u[1] = cost(c, o->p.response_ns);
	wl_client_submit(c, j, t, t->u[0] ^ t->u[1] << 32);
	return wl_wait_put(j);
}

/* One transaction. False when the runtime failed (the transaction is left to the runtime's
 * cleanup: ending it with jobs unfinished would be wrong). */
static bool transaction(struct oltp_client *oc, struct wl_client *c, uint64_t arrival)
{
	struct oltp *o = oc->o;
	/* unique per run and the same whatever the policy */
	uint64_t id = ((uint64_t)(c->idx + 1) << 40) | ++oc->ntxn;
	struct sb_txn *x = sb_txn_begin(c->set->env->rt, id);
	int64_t n = o->p.statements;
	if (o->p.statements_max > n)
		n += (int64_t)wl_rng_below(&c->rng, (uint64_t)(o->p.statements_max - n + 1));
	if (!run_begin(oc, c, x, arrival))
		return false;
	for (int64_t i = 0; i < n; i++)
		if (!run_statement(oc, c, x))
			return false;
	if (!run_commit(oc, c, x))
		return false;
	sb_txn_end(x);
	return true;
}

static void client(struct wl_client *c)
{
	struct oltp *o = c->set->user;
	struct oltp_client *oc = &o->oc[c->idx];
	bool open = o->p.rate > 0;
	struct wl_arrivals arr;
	wl_arrivals_init(c, &arr, o->p.rate / (double)o->cs.n, C_BEGIN);
	while (wl_client_more(c)) {
		uint64_t arrival = 0;
		if (open && !(arrival = wl_arrival_next(c, &arr)))
			break;
		if (!transaction(oc, c, arrival))
			break;
		if (!open && o->p.think_us && !wl_client_wait_until(c, sb_now_ns() + (uint64_t)o->p.think_us * 1000))
			break;
	}
	wl_arrivals_end(c, &arr);
}

static void oltp_stop(void *st);

static int oltp_start(const struct wl_env *env, const void *params, void **state, char *err, size_t errlen)
{
	const struct oltp_params *p = params;
	if (p->direct_commit_callback && p->commit_response != R_AVAILABLE) {
		snprintf(err, errlen, "parameter 'direct_commit_callback': applies only with commit_response=available "
				      "(a durable commit is answered by the durability notification)");
		return -EINVAL;
	}
	if (p->statements_max && p->statements_max < p->statements) {
		snprintf(err, errlen, "parameter 'statements_max': %lld is below statements (%lld); use 0 or a value >= statements",
			 (long long)p->statements_max, (long long)p->statements);
		return -EINVAL;
	}
	int64_t mix[NKINDS] = { p->mix_insert, p->mix_point, p->mix_filter, p->mix_multi,
				p->mix_join,   p->mix_aggregate, p->mix_scan };
	int64_t total = 0;
	for (int k = 0; k < NKINDS; k++)
		total += mix[k];
	if (total == 0 && (p->statements > 0 || p->statements_max > 0)) {
		snprintf(err, errlen, "parameters 'mix_*': every weight is 0; give at least one statement kind a weight");
		return -EINVAL;
	}
	struct oltp *o = calloc(1, sizeof *o);
	struct oltp_client *oc = calloc((size_t)p->clients, sizeof *oc);
	if (!o || !oc) {
		free(o);
		free(oc);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	o->p = *p;
	memcpy(o->mix, mix, sizeof mix);
	int64_t mean[NKINDS] = { p->write_ns, p->point_ns, p->filter_ns, p->multi_ns,
				 p->join_ns,  p->aggregate_ns, p->scan_ns };
	memcpy(o->mean, mean, sizeof mean);
	o->oc = oc;
	for (int64_t i = 0; i < p->clients; i++)
		oc[i].o = o;
	wl_rng_seed(&o->drng, env->seed, 0); /* clients use streams 1..n */
	*state = o;
	o->env = env;
	/* the durability thread exists before any commit can wait for it; of o->cs it touches only
	 * the counters, which are ready from here on and which wl_clients_start leaves alone */
	wl_clients_init(&o->cs);
	int e = sb_exec_thread_start(&o->durability, "durability", durability_main, o);
	if (e) {
		snprintf(err, errlen, "cannot create the durability thread: %s", strerror(-e));
		return e;
	}
	o->durability_started = true;
	int r = wl_clients_start(&o->cs, env, (unsigned)p->clients, client, o, err, errlen);
	if (r)
		oltp_stop(o);
	return r;
}

static void oltp_stop(void *st)
{
	struct oltp *o = st;
	wl_state_stop(o);
	/* release: pairs with the acquire in durability_main; every commit has been answered */
	atomic_store_explicit(&o->quit, true, memory_order_release);
	if (o->durability_started)
		sb_exec_thread_join(&o->durability);
	o->durability_started = false;
}

static void oltp_destroy(void *st)
{
	struct oltp *o = st;
	wl_clients_free(&o->cs);
	free(o->oc);
	free(o);
}

const struct sb_workload oltp_workload = {
	.start = oltp_start,
	.done = wl_state_done,
	.stop = oltp_stop,
	.counts = wl_state_counts,
	.destroy = oltp_destroy,
	.name = "oltp",
	.description = "Tsurugi-like transactions (memo 000): begin with LTX epoch wait, statements by work level, commit answered on durability",
	.classes = oltp_classes,
	.params = oltp_param_table,
	.params_size = sizeof(struct oltp_params),
};
