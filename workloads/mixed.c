/*
 * mixed.c - light point statements beside heavy analytic statements: the case jogasaki's hybrid
 * scheduler exists for (memo 000). With lightweight_job_level >= 20 the light jobs run serially
 * on their request threads while the heavy ones run in parallel on the workers; with the
 * shipped default (0) both share the workers.
 *
 * Models: `light_clients` request threads, closed loop, each submitting one-task point reads
 * (work level 20, cost light_ns) with light_think_us between them; and `heavy_clients` request
 * threads submitting analytic DAG jobs (work level 60: bootstrap, `partitions` parallel process
 * tasks of process_ns each, exchange, teardown). heavy_share sets how much of its time a heavy
 * client keeps a heavy job in flight: after a job that took d, it pauses d x (100 - share) /
 * share, so 100 means back to back. Jobs carry no transaction: the only question here is
 * where each job runs. light_priority / heavy_priority and heavy_concurrency set the jobs'
 * priority and per-job concurrency, which only the priority policy reads (memo 004: a count(*)
 * that should not wait behind compactions).
 *
 * Partial processing (memo 002: DuckDB's scheduler_process_partial, a task run in slices that
 * reports "not finished" and goes back to the queue): with heavy_slice_us > 0 each heavy process
 * task returns SB_YIELD after that much work (wl_spend) and is submitted again through the policy
 * with what is left, so light jobs queued meanwhile get their turn (the global policy queues it
 * behind them, as DuckDB's one queue does).
 *
 * Cancellation by handle (memo 004: Nebula's KILL marks the job and leaves its queue alone):
 * heavy_cancel percent of the heavy jobs are cancelled by their client cancel_after_us after
 * it submitted them (sb_job_cancel). They form their own class, heavy_cancelled, so their
 * latency is cancel_after_us plus the time the cancel took to end the job (the tasks running
 * then finish; queued ones are dropped, by the core as they surface or sooner through the
 * priority policy's cancel handle). The choice is drawn before the job is made, from the
 * client's own generator, so a seed gives the same jobs to every policy.
 *
 * Does not own the DAG's mechanics (dag.c) or any transactional behaviour (oltp.c).
 * Concurrency: each heavy client's wl_dag is shared only with the tasks of its one job in
 * flight; everything else is the client's own.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "common.h"

enum { C_LIGHT, C_HEAVY, C_CANCELLED };
static const char *const mixed_classes[] = { "light", "heavy", "heavy_cancelled", NULL };

struct mixed_params {
	int64_t light_clients;
	int64_t heavy_clients;
	int64_t light_ns;
	int64_t light_think_us;
	int64_t partitions;
	int64_t process_ns;
	int64_t bootstrap_ns;
	int64_t exchange_ns;
	int64_t heavy_share;
	int dist;
	int64_t light_priority;
	int64_t heavy_priority;
	int64_t heavy_concurrency;
	int64_t heavy_cancel;
	int64_t cancel_after_us;
	int64_t heavy_slice_us;
};

#define P struct mixed_params
static const struct sb_param mixed_param_table[] = {
	SB_PARAM_INT(P, light_clients, 8, 0, 1024, "request threads issuing light point reads, closed loop"),
	SB_PARAM_INT(P, heavy_clients, 2, 0, 1024, "request threads issuing heavy analytic DAG jobs"),
	SB_PARAM_INT(P, light_ns, 2000, 0, 1000000000, "mean cost of a light job's one task, ns"),
	SB_PARAM_INT(P, light_think_us, 100, 0, 60000000, "pause between a light client's jobs, us"),
	SB_PARAM_INT(P, partitions, 16, 1, WL_DAG_MAX, "parallel process tasks of a heavy job"),
	SB_PARAM_INT(P, process_ns, 200000, 0, 1000000000, "mean cost of each heavy process task, ns"),
	SB_PARAM_INT(P, bootstrap_ns, 5000, 0, 1000000000, "mean cost of a heavy job's bootstrap task, ns"),
	SB_PARAM_INT(P, exchange_ns, 20000, 0, 1000000000, "mean cost of a heavy job's exchange task, ns"),
	SB_PARAM_INT(P, heavy_share, 50, 1, 100, "percent of its time a heavy client has a heavy job in flight"),
	SB_PARAM_ENUM(P, dist, WL_EXP, wl_dist_names, "distribution of every task cost around its mean"),
	SB_PARAM_INT(P, light_priority, 0, -1000, 1000, "priority of light jobs (read by the priority policy; higher first)"),
	SB_PARAM_INT(P, heavy_priority, 0, -1000, 1000, "priority of heavy jobs (read by the priority policy)"),
	SB_PARAM_INT(P, heavy_concurrency, 0, 0, 1024, "workers one heavy job may use at once (priority policy); 0 = its default"),
	SB_PARAM_INT(P, heavy_cancel, 0, 0, 100, "percent of heavy jobs their client cancels (class heavy_cancelled; memo 004)"),
	SB_PARAM_INT(P, cancel_after_us, 500, 0, 60000000, "time from a cancelled heavy job's submission to its cancel, us"),
	SB_PARAM_INT(P, heavy_slice_us, 0, 0, 60000000,
		     "partial processing (memo 002): a heavy process task yields after this much work and is queued "
		     "again with the rest; 0 = runs to its end"),
	SB_PARAM_END,
};
#undef P

struct mixed {
	struct wl_clients cs; /* first: see common.h */
	struct mixed_params p;
	struct wl_dag *dag;   /* one per heavy client */
};
_Static_assert(offsetof(struct mixed, cs) == 0, "workload state starts with its clients");

static struct sb_job *new_job(struct wl_client *c, unsigned cls, int level, int64_t priority, int64_t concurrency)
{
	struct sb_job_desc d = { .cls = cls, .work_level = level, .done = wl_job_done, .arg = c->set->user,
				 .priority = (int)priority, .concurrency = (unsigned)concurrency };
	return sb_job_create(c->set->env->rt, &d);
}

static void heavy(struct wl_client *c, struct mixed *m)
{
	struct wl_dag *d = &m->dag[c->idx];
	while (wl_client_more(c)) {
		d->cs = &m->cs;
		d->exchange = true;
		d->nproc = (unsigned)m->p.partitions;
		d->bootstrap_ns = wl_cost(&c->rng, m->p.dist, (double)m->p.bootstrap_ns);
		for (unsigned i = 0; i < d->nproc; i++)
			d->proc_ns[i] = wl_cost(&c->rng, m->p.dist, (double)m->p.process_ns);
		d->exchange_ns = wl_cost(&c->rng, m->p.dist, (double)m->p.exchange_ns);
		d->yields = m->p.heavy_slice_us > 0;
		d->yield_ns = (uint64_t)m->p.heavy_slice_us * 1000;
		/* drawn only when cancelling is on, so that heavy_cancel=0 leaves every other draw as before */
		bool cancel = m->p.heavy_cancel && wl_rng_unit(&c->rng) * 100 < (double)m->p.heavy_cancel;
		struct sb_job *j = new_job(c, cancel ? C_CANCELLED : C_HEAVY, SB_WL_AGGREGATE, m->p.heavy_priority,
					   m->p.heavy_concurrency);
		uint64_t t0 = sb_now_ns();
		wl_client_submit(c, j, wl_dag_root(j, d), wl_dag_cost(d));
		/* a stop during the wait leaves the job to the harness's drain, like any other */
		if (cancel && wl_client_wait_until(c, t0 + (uint64_t)m->p.cancel_after_us * 1000))
			sb_job_cancel(j);
		if (!wl_wait_put(j))
			return;
		uint64_t took = sb_now_ns() - t0;
		uint64_t pause = took / (uint64_t)m->p.heavy_share * (uint64_t)(100 - m->p.heavy_share);
		if (pause && !wl_client_wait_until(c, sb_now_ns() + pause))
			return;
	}
}

static void light(struct wl_client *c, struct mixed *m)
{
	while (wl_client_more(c)) {
		struct sb_job *j = new_job(c, C_LIGHT, SB_WL_KEY_OPERATION, m->p.light_priority, 0);
		uint64_t ns = wl_cost(&c->rng, m->p.dist, (double)m->p.light_ns);
		wl_client_submit(c, j, wl_work(&m->cs, j, ns, 0), ns);
		if (!wl_wait_put(j))
			return;
		if (m->p.light_think_us &&
		    !wl_client_wait_until(c, sb_now_ns() + (uint64_t)m->p.light_think_us * 1000))
			return;
	}
}

static void client(struct wl_client *c)
{
	struct mixed *m = c->set->user;
	/* the first heavy_clients clients are the heavy ones */
	if (c->idx < (unsigned)m->p.heavy_clients)
		heavy(c, m);
	else
		light(c, m);
}

static int mixed_start(const struct wl_env *env, const void *params, void **state, char *err, size_t errlen)
{
	const struct mixed_params *p = params;
	if (p->light_clients + p->heavy_clients == 0) {
		snprintf(err, errlen, "parameters 'light_clients' and 'heavy_clients' are both 0; at least one client is needed");
		return -EINVAL;
	}
	struct mixed *m = calloc(1, sizeof *m);
	struct wl_dag *dag = calloc((size_t)p->heavy_clients + 1, sizeof *dag);
	if (!m || !dag) {
		free(m);
		free(dag);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	m->p = *p;
	m->dag = dag;
	*state = m;
	return wl_clients_start(&m->cs, env, (unsigned)(p->light_clients + p->heavy_clients), client, m, err, errlen);
}

static void mixed_destroy(void *st)
{
	struct mixed *m = st;
	wl_clients_free(&m->cs);
	free(m->dag);
	free(m);
}

const struct sb_workload mixed_workload = {
	.start = mixed_start,
	.done = wl_state_done,
	.stop = wl_state_stop,
	.counts = wl_state_counts,
	.destroy = mixed_destroy,
	.name = "mixed",
	.description = "light point reads (level 20) beside heavy parallel analytic DAGs (level 60): hybrid's case (memo 000)",
	.classes = mixed_classes,
	.params = mixed_param_table,
	.params_size = sizeof(struct mixed_params),
};
