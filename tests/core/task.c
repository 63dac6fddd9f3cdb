/*
 * task.c - task memory (core/task.c): ten million tasks, as a chain and a wide fan, run in
 * bounded memory.
 */
#include <sys/resource.h>

#include "../common.h"
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
