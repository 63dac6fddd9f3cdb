/*
 * txn.c - transactions (core/txn.c) on every registered policy: sticky tasks of a transaction
 * never overlap and run on the bound worker while the transaction's sticky count is above zero;
 * an ended transaction leaves the map.
 */
#include <pthread.h>

#include "../common.h"
/* ---- sticky tasks: never overlapping, on the bound worker ---- */

struct st_shared {
	struct sb_txn *txn;
	_Atomic int inflight;
	_Atomic unsigned overlaps, off_bound, unbound, ran;
};

static struct st_shared st;

static enum sb_result st_sticky(struct sb_task *t)
{
	(void)t;
	if (atomic_fetch_add(&st.inflight, 1) != 0)
		atomic_fetch_add(&st.overlaps, 1);
	int w = sb_self_worker();
	uint64_t word = atomic_load(&st.txn->sticky);
	if (w >= 0) {
		if ((word >> 32) == 0)
			atomic_fetch_add(&st.unbound, 1);
		else if ((word & 0xffffffffu) != (uint64_t)w)
			atomic_fetch_add(&st.off_bound, 1);
	}
	sb_work_ns(3000);
	atomic_fetch_add(&st.ran, 1);
	atomic_fetch_sub(&st.inflight, 1);
	return SB_DONE;
}

static enum sb_result plain_work(struct sb_task *t)
{
	(void)t;
	sb_work_ns(2000);
	return SB_DONE;
}

static enum sb_result st_root(struct sb_task *t)
{
	for (unsigned i = 0; i < 40; i++) {
		struct sb_task *c = sb_task_new(t->job, st_sticky, NULL);
		c->flags |= SB_TF_STICKY;
		sb_spawn(c);
		/* and some plain work around it, to give stealing something to do */
		sb_spawn(sb_task_new(t->job, plain_work, NULL));
	}
	return SB_DONE;
}

struct st_arg {
	struct sb_rt *rt;
	_Atomic unsigned failed;
};

static void *st_client(void *p)
{
	struct st_arg *a = p;
	sb_thread_attach(a->rt);
	struct sb_job *jobs[8];
	for (unsigned k = 0; k < 8; k++) {
		struct sb_job_desc d = { .txn = st.txn, .work_level = SB_WL_JOIN };
		jobs[k] = sb_job_create(a->rt, &d);
		sb_job_submit(jobs[k], sb_task_new(jobs[k], st_root, NULL));
	}
	for (unsigned k = 0; k < 8; k++) {
		if (!sb_job_wait(jobs[k]))
			atomic_fetch_add(&a->failed, 1);
		sb_job_put(jobs[k]);
	}
	sb_thread_detach();
	return NULL;
}

SB_POLICY_PARAMS(invariants, sticky_exclusive_and_bound)
ParameterizedTest(struct sb_tpol *pol, invariants, sticky_exclusive_and_bound, .timeout = 60)
{
	memset(&st, 0, sizeof st);
	struct sb_rt *rt = t_rt(pol->name, 3, NULL);
	sb_thread_attach(rt);
	st.txn = sb_txn_begin(rt, 42);
	cr_assert_eq(sb_txn_find(rt, 42), st.txn, "the transaction map finds it");
	pthread_t th[3];
	struct st_arg a = { .rt = rt };
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, st_client, &a);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	cr_assert_eq(atomic_load(&a.failed), 0, "%s: jobs did not finish: %s", pol->name, sb_rt_failure(rt) ? sb_rt_failure(rt) : "");
	cr_assert_eq(atomic_load(&st.ran), 3 * 8 * 40);
	cr_assert_eq(atomic_load(&st.overlaps), 0, "%s: sticky tasks of one transaction overlapped %u times", pol->name,
		     atomic_load(&st.overlaps));
	cr_assert_eq(atomic_load(&st.off_bound), 0, "%s: %u sticky tasks ran off the bound worker", pol->name,
		     atomic_load(&st.off_bound));
	/* the stealing family binds every sticky task it places on a worker */
	if (!strcmp(pol->name, "stealing") || !strcmp(pol->name, "hybrid"))
		cr_assert_eq(atomic_load(&st.unbound), 0, "%s: %u sticky tasks ran unbound", pol->name, atomic_load(&st.unbound));
	cr_assert_eq(atomic_load(&st.txn->sticky) >> 32, 0, "sticky count back to zero");
	sb_txn_end(st.txn);
	cr_assert_null(sb_txn_find(rt, 42), "an ended transaction is gone from the map");
	sb_thread_detach();
	t_done(rt);
}
