/*
 * task.c - task memory (core/task.c): ten million tasks, as a chain and a wide fan, run in
 * bounded memory; tasks freed on one thread come back to another through the depot, every one
 * of them and no other; a wait for the task depot's lock is counted.
 */
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/* Tasks allocated on one thread and freed on another (a fork-join run's spawns, stolen and
 * run elsewhere) travel back through the depot in whole batches. Thread A takes N tasks, thread
 * B frees them all and detaches; A then takes N again: it must get exactly the same N tasks
 * (none lost, none twice: a batch cut short or linked twice shows as a new slab or a
 * duplicate), and no new slab. N is not a multiple of the batch, so a partial one travels too. */
enum { DEPOT_N = 10 * SB_FREE_BATCH + 7 };

static enum sb_result never_run(struct sb_task *t)
{
	(void)t;
	return SB_DONE;
}

struct freer {
	struct sb_rt *rt;
	struct sb_task **ts;
};

static void *free_all(void *arg)
{
	struct freer *f = arg;
	sb_thread_attach(f->rt);
	for (unsigned i = 0; i < DEPOT_N; i++)
		sb_task_free(sb_tc(), f->ts[i]);
	sb_thread_detach(); /* the partial list and the spare go to the depot */
	return NULL;
}

static int by_address(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (struct sb_task *const *)a, y = (uintptr_t) * (struct sb_task *const *)b;
	return (x > y) - (x < y);
}

Test(task, freed_elsewhere_come_back_through_the_depot, .timeout = 30)
{
	struct sb_rt *rt = t_rt("stealing", 1, (const char *const[]){ "check=false", NULL });
	sb_thread_attach(rt);
	struct sb_job_desc d = { .work_level = SB_WL_INFINITY };
	struct sb_job *j = sb_job_create(rt, &d);
	static struct sb_task *first[DEPOT_N], *again[DEPOT_N];
	for (unsigned i = 0; i < DEPOT_N; i++)
		first[i] = sb_task_new(j, never_run, NULL);
	/* what the last slab left on our list is not part of the experiment: take it out */
	static struct sb_task *rest[SB_SLAB_TASKS];
	unsigned nrest = 0;
	while (sb_tc()->free)
		rest[nrest++] = sb_task_new(j, never_run, NULL);
	uint64_t slabs = sb_rt_task_slabs(rt);
	pthread_t th;
	struct freer f = { rt, first };
	cr_assert_eq(pthread_create(&th, NULL, free_all, &f), 0);
	pthread_join(th, NULL);
	for (unsigned i = 0; i < DEPOT_N; i++)
		again[i] = sb_task_new(j, never_run, NULL);
	cr_assert_eq(sb_rt_task_slabs(rt), slabs, "no new slab: every freed task came back");
	qsort(first, DEPOT_N, sizeof *first, by_address);
	qsort(again, DEPOT_N, sizeof *again, by_address);
	for (unsigned i = 0; i < DEPOT_N; i++)
		cr_assert_eq(again[i], first[i], "task %u: the same tasks, each once", i);
	for (unsigned i = 0; i < DEPOT_N; i++)
		sb_task_free(sb_tc(), again[i]);
	for (unsigned i = 0; i < nrest; i++)
		sb_task_free(sb_tc(), rest[i]);
	sb_job_put(j);
	sb_thread_detach();
	t_done(rt);
}

/* The depot lock's wait counters: a thread that finds the lock taken counts one wait and the
 * time it waited; one that finds it free counts nothing. The holder keeps the lock until the
 * waiter is asleep in the lock (its thread's state in /proc, once it has said it is about to
 * lock), so the wait happens however the two threads are scheduled; a fixed hold would count
 * nothing if the waiter got no CPU for that long. */
static _Atomic int holder_has_it, waiter_locking;
static _Atomic pid_t waiter_tid;

/* The state letter of thread `tid` of this process ('R', 'S', ...), or 0 if unreadable. */
static char thread_state(pid_t tid)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(line, 1, sizeof line - 1, f);
	fclose(f);
	line[n] = 0;
	char *p = strrchr(line, ')'); /* the name in parentheses may hold anything */
	return p && p[1] == ' ' ? p[2] : 0;
}

static void *hold_depot(void *arg)
{
	struct sb_rt *rt = arg;
	pthread_mutex_lock(&rt->depot_lock);
	atomic_store(&holder_has_it, 1);
	/* asleep after it said it is locking: the trylock failed and it waits in the mutex (nothing
	 * in between sleeps); 20 s is only a bound for a broken build */
	uint64_t end = sb_now_ns() + 20000000000ull;
	while (!(atomic_load(&waiter_locking) && thread_state(atomic_load(&waiter_tid)) == 'S') && sb_now_ns() < end)
		t_sleep_us(100);
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
	atomic_store(&waiter_locking, 0);
	atomic_store(&waiter_tid, (pid_t)syscall(SYS_gettid));
	cr_assert_eq(pthread_create(&th, NULL, hold_depot, rt), 0);
	while (!atomic_load(&holder_has_it))
		t_sleep_us(100);
	atomic_store(&waiter_locking, 1);
	sb_lock_counted(sb_tc(), &rt->depot_lock); /* held by the other thread until we wait in it */
	pthread_mutex_unlock(&rt->depot_lock);
	pthread_join(th, NULL);
	sb_rt_other_counters(rt, c);
	cr_assert_eq(c[SB_C_LOCK_WAITS], b[SB_C_LOCK_WAITS] + 1, "one wait counted");
	cr_assert_gt(c[SB_C_LOCK_NS], b[SB_C_LOCK_NS], "its time counted");
	sb_thread_detach();
	t_done(rt);
}
