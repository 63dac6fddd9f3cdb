/*
 * gp_common.h - what the tests of the `global` and `priority` policies share (gp.c,
 * global.c, priority.c): gates, a start-order log, job submission, counters.
 *
 * Order is asserted only with one worker, held by a gate task while the work under test queues
 * up behind it, so what runs next is the policy's choice alone. Several-worker tests assert
 * counts and invariants (exactly once, never overlapping, never above a limit), not order;
 * one of them (handle_drop_races_submit) hammers a race and can fail but not prove. Every
 * runtime runs in check mode with a stall limit (tests/common.h), loops that wait for a gate
 * also stop on a runtime failure, and what could still hang has a Criterion timeout.
 */
#ifndef SB_TESTS_GP_COMMON_H
#define SB_TESTS_GP_COMMON_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>

#include "../common.h"

/* ---- shared pieces: gates, a start-order log, job submission, counters ---- */

#define NGATES 3
static _Atomic int gate_open[NGATES], gate_started[NGATES];

static inline void gates_reset(void)
{
	for (unsigned g = 0; g < NGATES; g++) {
		atomic_store(&gate_open[g], 0);
		atomic_store(&gate_started[g], 0);
	}
}

/* Start order of tagged task bodies. */
#define LOG_MAX 512
static _Atomic unsigned log_n;
static _Atomic int log_tags[LOG_MAX];

static inline void log_tag(int tag)
{
	unsigned i = atomic_fetch_add(&log_n, 1);
	if (i < LOG_MAX)
		atomic_store(&log_tags[i], tag);
}

/* Position of `tag` in the start order, or -1. */
static inline int log_pos(int tag)
{
	unsigned n = atomic_load(&log_n);
	for (unsigned i = 0; i < n && i < LOG_MAX; i++)
		if (atomic_load(&log_tags[i]) == tag)
			return (int)i;
	return -1;
}

/* u[0] = gate, u[1] = tag + 1 (0: no tag). Holds its worker until the gate opens. */
static inline enum sb_result gate_body(struct sb_task *t)
{
	if (t->u[1])
		log_tag((int)t->u[1] - 1);
	atomic_store(&gate_started[t->u[0]], 1);
	while (!atomic_load(&gate_open[t->u[0]]))
		sched_yield();
	return SB_DONE;
}

static inline void wait_started(struct sb_rt *rt, unsigned g)
{
	while (!atomic_load(&gate_started[g]) && !sb_rt_failure(rt))
		sched_yield();
	cr_assert(atomic_load(&gate_started[g]), "gate %u reached (runtime failure: %s)", g,
		  sb_rt_failure(rt) ? sb_rt_failure(rt) : "none");
}

/* u[0] = tag */
static inline enum sb_result tagged(struct sb_task *t)
{
	log_tag((int)t->u[0]);
	return SB_DONE;
}

static inline struct sb_task *task_u(struct sb_job *j, sb_task_fn fn, uint64_t u0, uint64_t u1)
{
	struct sb_task *t = sb_task_new(j, fn, NULL);
	t->u[0] = u0;
	t->u[1] = u1;
	return t;
}

struct jspec {
	int priority;
	unsigned concurrency;
	enum sb_teardown teardown;
	sb_job_done_fn done;
	void *arg;
};

static inline struct sb_job *submit(struct sb_rt *rt, struct jspec s, sb_task_fn fn, uint64_t u0, uint64_t u1)
{
	struct sb_job_desc d = { .work_level = SB_WL_INFINITY, .priority = s.priority, .concurrency = s.concurrency,
				 .teardown = s.teardown, .done = s.done, .arg = s.arg };
	struct sb_job *j = sb_job_create(rt, &d);
	sb_job_submit(j, task_u(j, fn, u0, u1));
	return j;
}

/* A gate job: one task that holds a worker until gate g opens. */
static inline struct sb_job *submit_gate(struct sb_rt *rt, struct jspec s, unsigned g, int tag)
{
	return submit(rt, s, gate_body, g, tag < 0 ? 0 : (uint64_t)tag + 1);
}

static inline void wait_put(struct sb_rt *rt, struct sb_job *j)
{
	cr_assert(sb_job_wait(j), "job finished (runtime failure: %s)", sb_rt_failure(rt) ? sb_rt_failure(rt) : "none");
	sb_job_put(j);
}

static inline uint64_t core_count(struct sb_rt *rt, enum sb_counter c, bool workers_only)
{
	uint64_t v[SB_NR_COUNTERS], sum = 0;
	for (unsigned w = 0; w < sb_rt_nworkers(rt); w++) {
		sb_rt_worker_counters(rt, w, v);
		sum += v[c];
	}
	if (!workers_only) {
		sb_rt_other_counters(rt, v);
		sum += v[c];
	}
	return sum;
}

/* A policy and up to three settings, as values (Criterion re-executes each test). */
struct gp_case {
	char policy[16];
	char sets[3][32];
};

static inline const char *const *case_sets(const struct gp_case *c, const char *buf[4])
{
	unsigned k = 0;
	for (unsigned i = 0; i < 3; i++)
		if (c->sets[i][0])
			buf[k++] = c->sets[i];
	buf[k] = NULL;
	return buf;
}

/* A test run with an option on and off. */
struct onoff {
	bool on;
};

static struct onoff onoff_cases[] __attribute__((unused)) = { { true }, { false } };

static struct gp_case both_cases[] __attribute__((unused)) = {
	{ "global", { "" } },
	{ "global", { "producer_tokens=true", "batch=4" } },
	{ "priority", { "" } },
	{ "priority", { "concurrency=1", "yield_to_higher=false" } },
};

#endif
