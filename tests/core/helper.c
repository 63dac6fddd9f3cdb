/*
 * helper.c - the runtime's helper threads (core/helper.h: the watcher and the monitor share one
 * start, stop and wake-up protocol): a kick is never lost, a stop is never lost even without a
 * park timeout, and stopping one helper stops that helper only.
 */
#include "../common.h"

#include <sched.h>

/* ---- the protocol, on a helper of our own ---- */

static struct sb_helper h;
static _Atomic uint32_t published, seen;

static void *echo_main(void *arg)
{
	(void)arg;
	uint32_t seq;
	while (sb_helper_next(&h, &seq)) {
		/* relaxed: ordered by sb_helper_next's acquire of the kick that published it */
		atomic_store_explicit(&seen, atomic_load_explicit(&published, memory_order_relaxed),
				      memory_order_release);
		sb_helper_wait(&h, seq, 0); /* no timeout: a lost kick or stop would hang here */
	}
	return NULL;
}

Test(helper, every_kick_is_seen_and_no_stop_is_lost, .timeout = 60)
{
	char err[256] = "";
	for (uint32_t round = 0; round < 200; round++) {
		atomic_store(&published, 0);
		atomic_store(&seen, 0);
		cr_assert_eq(sb_helper_start(&h, "echo", echo_main, NULL, err, sizeof err), 0, "%s", err);
		for (uint32_t i = 1; i <= 20; i++) {
			atomic_store_explicit(&published, i, memory_order_relaxed);
			sb_helper_kick(&h);
			while (atomic_load_explicit(&seen, memory_order_acquire) != i)
				sched_yield();
		}
		sb_helper_stop(&h); /* returns only when the helper saw the stop */
		sb_helper_stop(&h); /* a second stop is nothing */
	}
}

/* ---- the runtime's two helpers ---- */

static bool always(struct sb_task *t)
{
	(void)t;
	return true;
}

static enum sb_result spawn_conditional(struct sb_task *t)
{
	struct sb_task *c = sb_task_new(t->job, t_noop, NULL);
	c->flags |= SB_TF_COND;
	c->check = always;
	sb_spawn(c);
	return SB_DONE;
}

/* Each helper has its own stop flag, apart from the workers' (rt->stopping): stopping the
 * monitor, then the watcher, leaves the rest running jobs. */
Test(helper, stopping_one_helper_leaves_the_rest_running, .timeout = 30)
{
	struct sb_rt *rt = t_rt("stealing", 2, NULL); /* check mode: the monitor runs */
	struct sb_job_desc d = { .work_level = SB_WL_INFINITY };
	sb_thread_attach(rt);
	sb_monitor_stop(rt);
	sb_job_put(t_run_job(rt, &d, spawn_conditional, NULL)); /* the watcher and the workers */
	sb_watcher_stop(rt);
	sb_job_put(t_run_job(rt, &d, t_work_leaf, NULL)); /* the workers */
	sb_thread_detach();
	t_done(rt);
}
