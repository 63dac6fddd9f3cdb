/*
 * hybrid.c - the hybrid policy picks each job's mode at its first schedule (memo 000).
 *
 * A job with work_level <= lightweight_job_level whose transaction lock can be taken at once runs
 * serially on the thread that submits it, every later task of it too; any other job runs on the
 * workers. Jobs marked force_stealing never run serially. Every task below records where it ran:
 * the worker index (-1 off the pool) and the thread, and the test asserts on all of them.
 */
#include <pthread.h>

#include "../common.h"

struct where {
	_Atomic unsigned on_submitter, on_workers, elsewhere, ran;
	pthread_t submitter;
};

static enum sb_result note(struct sb_task *t)
{
	struct where *w = t->job->arg;
	if (sb_self_worker() >= 0)
		atomic_fetch_add(&w->on_workers, 1);
	else if (pthread_equal(pthread_self(), w->submitter))
		atomic_fetch_add(&w->on_submitter, 1);
	else
		atomic_fetch_add(&w->elsewhere, 1);
	atomic_fetch_add(&w->ran, 1);
	return SB_DONE;
}

/* The root records itself, then spawns later tasks in two generations. */
static enum sb_result later(struct sb_task *t)
{
	for (unsigned i = 0; i < 3; i++)
		sb_spawn(sb_task_new(t->job, note, NULL));
	return note(t);
}

static enum sb_result root(struct sb_task *t)
{
	for (unsigned i = 0; i < 4; i++)
		sb_spawn(sb_task_new(t->job, later, NULL));
	return note(t);
}

#define TASKS_PER_JOB (1 + 4 * (1 + 3))

static void run(struct sb_rt *rt, int level, struct sb_txn *x, bool force, struct where *w)
{
	memset(w, 0, sizeof *w);
	w->submitter = pthread_self();
	struct sb_job_desc d = { .work_level = level, .txn = x, .force_stealing = force, .arg = w };
	struct sb_job *j = t_run_job(rt, &d, root, NULL);
	sb_job_put(j);
	cr_assert_eq(atomic_load(&w->ran), TASKS_PER_JOB);
	cr_assert_eq(atomic_load(&w->elsewhere), 0, "no task runs on a thread that is neither");
}

Test(hybrid, threshold_decides_per_job, .timeout = 30)
{
	static const char *const sets[] = { "lightweight_job_level=20", NULL };
	struct sb_rt *rt = t_rt("hybrid", 2, sets);
	sb_thread_attach(rt);
	struct where w;

	run(rt, SB_WL_KEY_OPERATION, NULL, false, &w); /* 20 <= 20: serial, here */
	cr_assert_eq(atomic_load(&w.on_submitter), TASKS_PER_JOB, "every task of a level-20 job on the request thread");

	run(rt, SB_WL_SIMPLE_WRITE, NULL, false, &w); /* 10 <= 20 */
	cr_assert_eq(atomic_load(&w.on_submitter), TASKS_PER_JOB);

	run(rt, SB_WL_SIMPLE_CRUD, NULL, false, &w); /* 30 > 20: stealing */
	cr_assert_eq(atomic_load(&w.on_workers), TASKS_PER_JOB, "every task of a level-30 job on the workers");

	run(rt, SB_WL_ZERO, NULL, true, &w); /* begin/commit-style jobs never run serially */
	cr_assert_eq(atomic_load(&w.on_workers), TASKS_PER_JOB, "force_stealing wins over the level");

	cr_assert_eq(t_policy_stat(rt, "jobs_serial"), 2);
	cr_assert_eq(t_policy_stat(rt, "jobs_stealing"), 2);
	sb_thread_detach();
	t_done(rt);
}

struct holder {
	struct sb_rt *rt;
	struct sb_txn *x;
	_Atomic int state; /* 1: holding the lock, 3: could not take it, 2: may let go */
};

static void *hold_lock(void *p)
{
	struct holder *h = p;
	sb_thread_attach(h->rt);
	if (!sb_txn_try_lock(h->x)) {
		atomic_store(&h->state, 3);
		sb_thread_detach();
		return NULL;
	}
	atomic_store(&h->state, 1);
	while (atomic_load(&h->state) != 2)
		sched_yield();
	sb_txn_unlock(h->x); /* the core's own unlock (core/rt.h) */
	sb_thread_detach();
	return NULL;
}

Test(hybrid, busy_transaction_lock_sends_the_job_to_the_workers, .timeout = 30)
{
	static const char *const sets[] = { "lightweight_job_level=20", NULL };
	struct sb_rt *rt = t_rt("hybrid", 2, sets);
	sb_thread_attach(rt);
	struct sb_txn *x = sb_txn_begin(rt, 5);
	struct where w;

	run(rt, SB_WL_KEY_OPERATION, x, false, &w); /* the lock is free: serial */
	cr_assert_eq(atomic_load(&w.on_submitter), TASKS_PER_JOB);

	struct holder h = { .rt = rt, .x = x };
	pthread_t th;
	pthread_create(&th, NULL, hold_lock, &h);
	while (atomic_load(&h.state) == 0)
		sched_yield();
	cr_assert_eq(atomic_load(&h.state), 1, "the helper thread holds the transaction lock");
	run(rt, SB_WL_KEY_OPERATION, x, false, &w); /* someone holds it: stealing, not waiting */
	cr_assert_eq(atomic_load(&w.on_workers), TASKS_PER_JOB, "a lightweight job whose lock is busy runs on the workers");
	atomic_store(&h.state, 2);
	pthread_join(th, NULL);

	cr_assert_eq(t_policy_stat(rt, "serial_refused_txn_busy"), 1);
	sb_txn_end(x);
	sb_thread_detach();
	t_done(rt);
}

Test(hybrid, shipped_default_is_almost_stealing, .timeout = 30)
{
	struct sb_rt *rt = t_rt("hybrid", 2, NULL); /* lightweight_job_level 0, as jogasaki ships */
	sb_thread_attach(rt);
	struct where w;
	run(rt, SB_WL_SIMPLE_WRITE, NULL, false, &w);
	cr_assert_eq(atomic_load(&w.on_workers), TASKS_PER_JOB, "even a simple write goes to the workers");
	run(rt, SB_WL_ZERO, NULL, false, &w);
	cr_assert_eq(atomic_load(&w.on_submitter), TASKS_PER_JOB, "only level 0 (and undefined) run serially");
	sb_thread_detach();
	t_done(rt);
}
