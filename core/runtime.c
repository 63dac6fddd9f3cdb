/*
 * runtime.c - a runtime's life: create (workers, topology, transaction map, policy, the helper
 * threads), cancel, stop (drain, then join) and destroy; request threads attaching and
 * detaching; what the harness reads of a runtime (workers, configuration, policy).
 */
#include <errno.h>
#include <hwloc.h>
#include <stdlib.h>
#include <string.h>

#include "idle.h"
#include "thread.h"

unsigned sb_rt_nworkers(const struct sb_rt *rt)
{
	return rt->n;
}

const struct sb_config *sb_rt_config(const struct sb_rt *rt)
{
	return &rt->cfg;
}

const struct sb_policy_ops *sb_rt_policy(const struct sb_rt *rt)
{
	return rt->ops;
}

/* ---- request threads ---- */

struct sb_thread *sb_thread_attach(struct sb_rt *rt)
{
	if (sb_self) {
		if (sb_self->rt != rt) {
			fprintf(stderr, "%s:%d: thread is already attached to another runtime\n", __FILE__, __LINE__);
			abort();
		}
		return sb_self;
	}
	struct sb_thread *tc = sb_alloc_lines(sizeof *tc);
	if (!tc) {
		fprintf(stderr, "%s:%d: out of memory attaching a thread\n", __FILE__, __LINE__);
		abort();
	}
	sb_thread_init(rt, tc, SB_THREAD_REQUEST, -1);
	sb_thread_register(rt, tc);
	sb_exec_rcu_register();
	sb_self = tc;
	return tc;
}

void sb_thread_detach(void)
{
	struct sb_thread *tc = sb_self;
	if (!tc)
		return;
	/* whatever is left in our serial queue runs now (or is dropped, after a CANCEL stop) */
	sb_drain_serial(tc, SIZE_MAX);
	sb_tok_flush(tc);
	sb_thread_cache_release(tc);
	sb_exec_rcu_unregister();
	tc->attached = false;
	sb_self = NULL;
}

/* ---- lifecycle ---- */

static void rt_free(struct sb_rt *rt)
{
	/* transactions first: their txn_fini still needs the policy's state */
	sb_txn_map_fini(rt);
	if (rt->pstate)
		sb_policy_destroy(rt);
	struct sb_thread *tc = rt->threads;
	while (tc) {
		struct sb_thread *next = tc->next_all;
		sb_rec_free(&tc->rec);
		if (tc->worker < 0)
			free(tc);
		tc = next;
	}
	sb_slabs_free(rt);
	free(rt->w);
	free(rt->dist);
	free(rt->pparams);
	if (rt->topo)
		hwloc_topology_destroy(rt->topo);
	pthread_mutex_destroy(&rt->threads_lock);
	pthread_mutex_destroy(&rt->depot_lock);
	free(rt);
}

/* The runtime's memory and settings, and its workers' contexts: nothing started yet. */
static struct sb_rt *rt_alloc(const struct sb_config *cfg, const struct sb_policy_ops *policy)
{
	struct sb_rt *rt = sb_alloc_lines(sizeof *rt);
	if (!rt)
		return NULL;
	rt->cfg = *cfg;
	rt->cfg.stall_limit = sb_config_stall_limit(cfg);
	sb_policy_bind(rt, policy);
	rt->n = (unsigned)cfg->thread_count;
	rt->chaos_seed = (uint64_t)cfg->chaos;
	atomic_init(&rt->slow, (cfg->check ? SB_SLOW_CHECK : 0) | (cfg->trace ? SB_SLOW_TRACE : 0) |
				       (cfg->preempt_threshold || rt->cfg.stall_limit ? SB_SLOW_MONITOR : 0) |
				       (cfg->chaos ? SB_SLOW_CHAOS : 0) | (sb_exec_virtual() ? SB_SLOW_VIRTUAL : 0));
	pthread_mutex_init(&rt->threads_lock, NULL);
	pthread_mutex_init(&rt->depot_lock, NULL);
	atomic_init(&rt->win_start, 0);
	atomic_init(&rt->win_end, UINT64_MAX);
	atomic_init(&rt->trace_cap, (uint64_t)1 << 24);
	/* the sleeper pays for the wake protocol's ordering when the kernel lets it (see idle.c's
	 * file comment) */
	rt->membarrier = !cfg->wake_fence && sb_exec_membarrier_register();
	rt->light_producer = rt->membarrier || cfg->busy_worker;
	sb_mpsc_init(&rt->cond_q);

	rt->w = sb_alloc_lines((size_t)rt->n * sizeof(struct sb_worker));
	if (!rt->w) {
		free(rt);
		return NULL;
	}
	for (unsigned i = 0; i < rt->n; i++) {
		struct sb_worker *w = &rt->w[i];
		w->rt = rt;
		w->idx = i;
		w->core = -1;
		atomic_init(&w->state, SB_W_ACTIVE);
		sb_thread_init(rt, &w->tc, SB_THREAD_WORKER, (int)i);
		sb_thread_register(rt, &w->tc);
	}
	return rt;
}

int sb_rt_create(struct sb_rt **out, const struct sb_config *cfg, const struct sb_policy_ops *policy,
		 const void *pparams, char *err, size_t errlen)
{
	*out = NULL;
	if (cfg->thread_count < 1 || cfg->thread_count > 1024) {
		snprintf(err, errlen, "parameter 'thread_count': %lld is out of range; valid range is 1..1024",
			 (long long)cfg->thread_count);
		return -ERANGE;
	}
	sb_clock_calibrate();
	struct sb_rt *rt = rt_alloc(cfg, policy);
	if (!rt) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	int e = sb_topology_init(rt, err, errlen);
	if (!e && sb_txn_map_init(rt) != 0) {
		snprintf(err, errlen, "cannot create the transaction map");
		e = -ENOMEM;
	}
	if (!e)
		e = sb_policy_create(rt, pparams, err, errlen);
	if (e) {
		rt_free(rt);
		return e;
	}
	for (unsigned i = 0; i < rt->n; i++) {
		char name[32];
		snprintf(name, sizeof name, "worker-%u", i);
		e = sb_exec_thread_start(&rt->w[i].thread, name, sb_worker_main, &rt->w[i]);
		if (e) {
			snprintf(err, errlen, "cannot create worker thread %u of %u: %s", i, rt->n, strerror(-e));
			sb_workers_join(rt);
			rt_free(rt);
			return e;
		}
		rt->w[i].started = true;
	}
	if ((e = sb_watcher_start(rt, err, errlen)) != 0 || (e = sb_monitor_start(rt, err, errlen)) != 0) {
		sb_workers_join(rt);
		sb_watcher_stop(rt);
		sb_monitor_stop(rt);
		rt_free(rt);
		return e;
	}
	*out = rt;
	return 0;
}

void sb_rt_cancel(struct sb_rt *rt)
{
	/* relaxed: sb_run polls it; dropping a little late is harmless */
	atomic_fetch_or_explicit(&rt->slow, SB_SLOW_CANCEL, memory_order_relaxed);
	sb_wake_all(rt);
}

bool sb_rt_cancelled(const struct sb_rt *rt)
{
	return atomic_load_explicit(&((struct sb_rt *)rt)->slow, memory_order_relaxed) & SB_SLOW_CANCEL;
}

/* Jobs submitted and not yet torn down, summed over every context (each counts its own; see
 * sb_thread.jobs_in). The ends are read before the submissions, so that a job counted as ended
 * is counted as submitted too: its creator's count happens before its teardown's (job.c), and
 * the acquire here orders the later reads after that. A job submitted after its count was read
 * is either a child of a job not yet ended or comes after the stop's caller stopped submitting,
 * so the sum is 0 only once every job has ended. Under threads_lock: contexts join the list
 * while it is read. */
static int64_t live_jobs(struct sb_rt *rt)
{
	uint64_t in = 0, out = 0;
	pthread_mutex_lock(&rt->threads_lock);
	for (struct sb_thread *tc = rt->threads; tc; tc = tc->next_all)
		out += atomic_load_explicit(&tc->jobs_out, memory_order_seq_cst); /* pairs with teardown_now */
	for (struct sb_thread *tc = rt->threads; tc; tc = tc->next_all)
		in += atomic_load_explicit(&tc->jobs_in, memory_order_relaxed); /* after the acquires above */
	pthread_mutex_unlock(&rt->threads_lock);
	return (int64_t)(in - out);
}

void sb_rt_stop(struct sb_rt *rt, enum sb_stop_mode mode)
{
	if (rt->stopped)
		return;
	struct sb_thread *tc = sb_self;
	if (tc && (tc->worker >= 0 || tc->kind == SB_THREAD_WATCHER)) {
		fprintf(stderr, "%s:%d: sb_rt_stop called from a task\n", __FILE__, __LINE__);
		abort();
	}
	if (mode == SB_STOP_CANCEL)
		sb_rt_cancel(rt);
	for (;;) {
		if (tc && tc->serial.len) {
			sb_drain_serial(tc, SIZE_MAX);
			continue;
		}
		if (tc) {
			sb_tok_flush(tc); /* may queue a teardown task in our own queue */
			if (tc->serial.len)
				continue;
		}
		/* seq_cst: pairs with teardown_now's store of jobs_out and load of live_waited */
		atomic_store_explicit(&rt->live_waited, true, memory_order_seq_cst);
		/* the snapshot before the kick is re-armed: a teardown that found the kick taken has
		 * a taker whose bump of live_seq is after this load, so the park below returns */
		uint32_t seq = atomic_load_explicit(&rt->live_seq, memory_order_acquire);
		/* seq_cst: a teardown whose end the count misses reads the kick after this store */
		atomic_store_explicit(&rt->live_kick, false, memory_order_seq_cst);
		if (live_jobs(rt) == 0)
			break;
		if (atomic_load_explicit(&rt->failed, memory_order_relaxed)) {
			/* a failed run may never drain (a starved queue, a livelock): what is queued
			 * is dropped so the workers can stop; the failure is the result */
			sb_rt_cancel(rt);
			break;
		}
		sb_exec_park(&rt->live_seq, seq, 50 * 1000 * 1000);
	}
	sb_workers_join(rt);
	sb_watcher_stop(rt);
	sb_monitor_stop(rt);
	rt->stopped = true;
}

void sb_rt_destroy(struct sb_rt *rt)
{
	if (!rt)
		return;
	sb_rt_stop(rt, SB_STOP_DRAIN);
	if (sb_self && sb_self->rt == rt)
		sb_thread_detach();
	/* another thread still attached would be left pointing at freed memory */
	pthread_mutex_lock(&rt->threads_lock);
	for (struct sb_thread *tc = rt->threads; tc; tc = tc->next_all) {
		if (tc->kind == SB_THREAD_REQUEST && tc->attached) {
			fprintf(stderr, "%s:%d: sb_rt_destroy with request thread %u still attached "
				"(call sb_thread_detach on it first)\n", __FILE__, __LINE__, tc->id);
			abort();
		}
	}
	pthread_mutex_unlock(&rt->threads_lock);
	rt_free(rt);
}
