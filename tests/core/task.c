/*
 * task.c - task memory (core/task.c): ten million tasks, as a chain and a wide fan, run in
 * bounded memory; a wait for the task depot's lock is counted.
 */
#include <pthread.h>
#include <sys/resource.h>

#include "../common.h"
#include "../../core/thread.h"

static enum sb_result chain10(struct sb_task *t)
{
	if (t->u[0]) {
		struct sb_task *n = sb_task_new(t->job, chain10, NULL);
		n->u[0] = t->u[0] - 1;
		sb_spawn(n);
	}
	return SB_DONE;
}

static enum sb_result wide10(struct sb_task *t)
{
	/* 100 chains side by side: tasks are recycled through the free lists, not piled up */
	for (unsigned i = 0; i < 100; i++) {
		struct sb_task *c = sb_task_new(t->job, chain10, NULL);
		c->u[0] = t->u[0] / 100 - 1;
		sb_spawn(c);
	}
	return SB_DONE;
}

Test(faults, ten_million_tasks_bounded_memory, .timeout = 120)
{
	struct sb_rt *rt = t_rt("stealing", 2, (const char *const[]){ "check=false", NULL });
	sb_thread_attach(rt);
	struct sb_job_desc d = { .work_level = SB_WL_INFINITY };
	struct sb_job *j = sb_job_create(rt, &d);
	struct sb_task *r = sb_task_new(j, wide10, NULL);
	r->u[0] = 10000000;
	sb_job_submit(j, r);
	cr_assert(sb_job_wait(j));
	uint64_t c[SB_NR_COUNTERS], ran = 0;
	for (unsigned w = 0; w < sb_rt_nworkers(rt); w++) {
		sb_rt_worker_counters(rt, w, c);
		ran += c[SB_C_RUN];
	}
	sb_rt_other_counters(rt, c);
	ran += c[SB_C_RUN];
	cr_assert_eq(ran, 1 + 100 * (10000000 / 100), "%llu tasks", (unsigned long long)ran);
	/* at most a few hundred tasks are ever alive: a handful of slabs of 256 */
	uint64_t slabs = sb_rt_task_slabs(rt);
	cr_assert_leq(slabs, 16, "%llu task slabs for a run with ~100 live tasks", (unsigned long long)slabs);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	cr_log_info("10M tasks: %llu task slabs, peak RSS %ld KiB", (unsigned long long)slabs, ru.ru_maxrss);
	cr_assert_leq(ru.ru_maxrss, 256 * 1024, "peak RSS %ld KiB", ru.ru_maxrss);
	sb_job_put(j);
	sb_thread_detach();
	t_done(rt);
}

/* The depot lock's wait counters: a thread that finds the lock taken counts one wait and the
 * time it waited; one that finds it free counts nothing. */
static _Atomic int holder_has_it;

static void *hold_depot(void *arg)
{
	struct sb_rt *rt = arg;
	pthread_mutex_lock(&rt->depot_lock);
	atomic_store(&holder_has_it, 1);
	t_sleep_ms(200);
	pthread_mutex_unlock(&rt->depot_lock);
	return NULL;
}

Test(task, depot_lock_wait_is_counted, .timeout = 30)
{
	struct sb_rt *rt = t_rt("stealing", 1, NULL);
	sb_thread_attach(rt);
	uint64_t a[SB_NR_COUNTERS], b[SB_NR_COUNTERS], c[SB_NR_COUNTERS];
	sb_rt_other_counters(rt, a);
	sb_lock_counted(sb_tc(), &rt->depot_lock); /* free: nothing counted */
	pthread_mutex_unlock(&rt->depot_lock);
	sb_rt_other_counters(rt, b);
	cr_assert_eq(b[SB_C_LOCK_WAITS], a[SB_C_LOCK_WAITS], "a free lock is no wait");
	pthread_t th;
	atomic_store(&holder_has_it, 0);
	cr_assert_eq(pthread_create(&th, NULL, hold_depot, rt), 0);
	while (!atomic_load(&holder_has_it))
		t_sleep_us(100);
	sb_lock_counted(sb_tc(), &rt->depot_lock); /* held for 200 ms by the other thread */
	pthread_mutex_unlock(&rt->depot_lock);
	pthread_join(th, NULL);
	sb_rt_other_counters(rt, c);
	cr_assert_eq(c[SB_C_LOCK_WAITS], b[SB_C_LOCK_WAITS] + 1, "one wait counted");
	cr_assert_gt(c[SB_C_LOCK_NS], b[SB_C_LOCK_NS], "its time counted");
	sb_thread_detach();
	t_done(rt);
}
