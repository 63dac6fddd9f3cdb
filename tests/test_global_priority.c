/*
 * test_global_priority.c - behaviour of the `global` (memo 002/003) and `priority` (memo 004)
 * policies beyond the invariants every policy shares (tests/test_invariants.c).
 *
 * Order is asserted only with one worker, held by a gate task while the work under test queues
 * up behind it, so what runs next is the policy's choice alone. Several-worker tests assert
 * counts and invariants (exactly once, never overlapping, never above a limit), not order;
 * one of them (handle_drop_races_submit) hammers a race and can fail but not prove. Every
 * runtime runs in check mode with a stall limit (tests/common.h), loops that wait for a gate
 * also stop on a runtime failure, and what could still hang has a Criterion timeout.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>

#include "common.h"

/* ---- shared pieces: gates, a start-order log, job submission, counters ---- */

#define NGATES 3
static _Atomic int gate_open[NGATES], gate_started[NGATES];

static void gates_reset(void)
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

static void log_tag(int tag)
{
	unsigned i = atomic_fetch_add(&log_n, 1);
	if (i < LOG_MAX)
		atomic_store(&log_tags[i], tag);
}

/* Position of `tag` in the start order, or -1. */
static int log_pos(int tag)
{
	unsigned n = atomic_load(&log_n);
	for (unsigned i = 0; i < n && i < LOG_MAX; i++)
		if (atomic_load(&log_tags[i]) == tag)
			return (int)i;
	return -1;
}

/* u[0] = gate, u[1] = tag + 1 (0: no tag). Holds its worker until the gate opens. */
static enum sb_result gate_body(struct sb_task *t)
{
	if (t->u[1])
		log_tag((int)t->u[1] - 1);
	atomic_store(&gate_started[t->u[0]], 1);
	while (!atomic_load(&gate_open[t->u[0]]))
		sched_yield();
	return SB_DONE;
}

static void wait_started(struct sb_rt *rt, unsigned g)
{
	while (!atomic_load(&gate_started[g]) && !sb_rt_failure(rt))
		sched_yield();
	cr_assert(atomic_load(&gate_started[g]), "gate %u reached (runtime failure: %s)", g,
		  sb_rt_failure(rt) ? sb_rt_failure(rt) : "none");
}

/* u[0] = tag */
static enum sb_result tagged(struct sb_task *t)
{
	log_tag((int)t->u[0]);
	return SB_DONE;
}

static struct sb_task *task_u(struct sb_job *j, sb_task_fn fn, uint64_t u0, uint64_t u1)
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

static struct sb_job *submit(struct sb_rt *rt, struct jspec s, sb_task_fn fn, uint64_t u0, uint64_t u1)
{
	struct sb_job_desc d = { .work_level = SB_WL_INFINITY, .priority = s.priority, .concurrency = s.concurrency,
				 .teardown = s.teardown, .done = s.done, .arg = s.arg };
	struct sb_job *j = sb_job_create(rt, &d);
	sb_job_submit(j, task_u(j, fn, u0, u1));
	return j;
}

/* A gate job: one task that holds a worker until gate g opens. */
static struct sb_job *submit_gate(struct sb_rt *rt, struct jspec s, unsigned g, int tag)
{
	return submit(rt, s, gate_body, g, tag < 0 ? 0 : (uint64_t)tag + 1);
}

static void wait_put(struct sb_rt *rt, struct sb_job *j)
{
	cr_assert(sb_job_wait(j), "job finished (runtime failure: %s)", sb_rt_failure(rt) ? sb_rt_failure(rt) : "none");
	sb_job_put(j);
}

static uint64_t core_count(struct sb_rt *rt, enum sb_counter c, bool workers_only)
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

static const char *const *case_sets(const struct gp_case *c, const char *buf[4])
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

static struct onoff onoff_cases[] = { { true }, { false } };

static struct gp_case both_cases[] = {
	{ "global", { "" } },
	{ "global", { "producer_tokens=true", "batch=4" } },
	{ "priority", { "" } },
	{ "priority", { "concurrency=1", "yield_to_higher=false" } },
};

/* ---- both policies: "not finished" and "blocked" task results (memo 002) ---- */

enum { Y_TAG = 1, A_TAG = 2, B_TAG = 3 };

static enum sb_result yielder(struct sb_task *t)
{
	log_tag(Y_TAG);
	if (t->u[1]--)
		return SB_YIELD;
	return SB_DONE;
}

static enum sb_result yield_root(struct sb_task *t)
{
	sb_spawn(task_u(t->job, yielder, 0, 3)); /* yields three times */
	sb_spawn(task_u(t->job, tagged, A_TAG, 0));
	sb_spawn(task_u(t->job, tagged, B_TAG, 0));
	return SB_DONE;
}

ParameterizedTestParameters(gp, yield_requeues_behind_fresh_work)
{
	return cr_make_param_array(struct gp_case, both_cases, sizeof both_cases / sizeof both_cases[0]);
}

/* SB_YIELD re-enqueues at once, behind what is already queued: with one worker the order is
 * Y A B Y Y Y. A policy that put it back in front would give Y Y Y Y A B. */
ParameterizedTest(struct gp_case *c, gp, yield_requeues_behind_fresh_work, .timeout = 30)
{
	atomic_store(&log_n, 0);
	const char *buf[4];
	struct sb_rt *rt = t_rt(c->policy, 1, case_sets(c, buf));
	sb_thread_attach(rt);
	wait_put(rt, submit(rt, (struct jspec){ 0 }, yield_root, 0, 0));
	static const int want[] = { Y_TAG, A_TAG, B_TAG, Y_TAG, Y_TAG, Y_TAG };
	cr_assert_eq(atomic_load(&log_n), 6, "%s: %u task starts", c->policy, atomic_load(&log_n));
	for (unsigned i = 0; i < 6; i++)
		cr_assert_eq(atomic_load(&log_tags[i]), want[i], "%s %s: start %u is tag %d, expected %d", c->policy,
			     c->sets[0], i, atomic_load(&log_tags[i]), want[i]);
	cr_assert_eq(core_count(rt, SB_C_YIELD, false), 3);
	sb_thread_detach();
	t_done(rt);
}

static _Atomic(struct sb_task *) parked_task;
static _Atomic unsigned parked_runs, other_runs;

static enum sb_result parker(struct sb_task *t)
{
	atomic_fetch_add(&parked_runs, 1);
	if (!t->u[1]) {
		t->u[1] = 1;
		atomic_store(&parked_task, t); /* published before returning: a resume may come at once */
		return SB_BLOCKED;
	}
	return SB_DONE;
}

static enum sb_result other(struct sb_task *t)
{
	(void)t;
	atomic_fetch_add(&other_runs, 1);
	return SB_DONE;
}

static enum sb_result park_root(struct sb_task *t)
{
	sb_spawn(task_u(t->job, parker, 0, 0));
	for (unsigned i = 0; i < 4; i++)
		sb_spawn(task_u(t->job, other, 0, 0));
	return SB_DONE;
}

ParameterizedTestParameters(gp, blocked_task_runs_again_after_resume)
{
	return cr_make_param_array(struct gp_case, both_cases, sizeof both_cases / sizeof both_cases[0]);
}

/* SB_BLOCKED parks a task outside every queue; sb_task_resume puts it back. The job must not
 * finish before the resumed run, and the task must run exactly twice. */
ParameterizedTest(struct gp_case *c, gp, blocked_task_runs_again_after_resume, .timeout = 30)
{
	atomic_store(&parked_task, NULL);
	atomic_store(&parked_runs, 0);
	atomic_store(&other_runs, 0);
	const char *buf[4];
	struct sb_rt *rt = t_rt(c->policy, 2, case_sets(c, buf));
	sb_thread_attach(rt);
	struct sb_job *j = submit(rt, (struct jspec){ 0 }, park_root, 0, 0);
	struct sb_task *p;
	while (!(p = atomic_load(&parked_task)) && !sb_rt_failure(rt))
		sched_yield();
	cr_assert_not_null(p, "%s: the task parked (runtime failure: %s)", c->policy,
			   sb_rt_failure(rt) ? sb_rt_failure(rt) : "none");
	cr_assert(!sb_job_done(j), "%s: a job with a parked task is not finished", c->policy);
	sb_task_resume(p);
	wait_put(rt, j);
	cr_assert_eq(atomic_load(&parked_runs), 2, "%s: the parked task ran %u times", c->policy, atomic_load(&parked_runs));
	cr_assert_eq(atomic_load(&other_runs), 4);
	cr_assert_eq(core_count(rt, SB_C_BLOCKED, false), 1);
	sb_thread_detach();
	t_done(rt);
}

static _Atomic int wf_flag;
static _Atomic unsigned wf_polls;

/* Yields until a task of another job sets the flag (a busy wait in task form, like
 * jogasaki's load task); gives up after 1000 polls so that a starving policy fails the test
 * instead of hanging it. */
static enum sb_result wf_poller(struct sb_task *t)
{
	(void)t;
	if (!atomic_load(&wf_flag) && atomic_fetch_add(&wf_polls, 1) < 1000)
		return SB_YIELD;
	return SB_DONE;
}

static enum sb_result wf_setter(struct sb_task *t)
{
	(void)t;
	atomic_store(&wf_flag, 1);
	return SB_DONE;
}

ParameterizedTestParameters(gp, yielding_task_lets_other_jobs_run)
{
	return cr_make_param_array(struct gp_case, both_cases, sizeof both_cases / sizeof both_cases[0]);
}

/* One worker; a job whose task polls (yields) for a flag that only a second, later job of the
 * same priority sets. The yield must give the second job a turn: under `priority` the worker
 * serving the polling job puts it back behind the other. */
ParameterizedTest(struct gp_case *c, gp, yielding_task_lets_other_jobs_run, .timeout = 30)
{
	atomic_store(&wf_flag, 0);
	atomic_store(&wf_polls, 0);
	gates_reset();
	const char *buf[4];
	struct sb_rt *rt = t_rt(c->policy, 1, case_sets(c, buf));
	sb_thread_attach(rt);
	struct sb_job *g = submit_gate(rt, (struct jspec){ 0 }, 0, -1);
	wait_started(rt, 0);
	struct sb_job *poll = submit(rt, (struct jspec){ 0 }, wf_poller, 0, 0);
	struct sb_job *set = submit(rt, (struct jspec){ 0 }, wf_setter, 0, 0);
	atomic_store(&gate_open[0], 1);
	wait_put(rt, g);
	wait_put(rt, poll);
	wait_put(rt, set);
	cr_assert_lt(atomic_load(&wf_polls), 1000, "%s %s: the polling task yielded %u times without the other job running",
		     c->policy, c->sets[0], atomic_load(&wf_polls));
	sb_thread_detach();
	t_done(rt);
}

/* ---- global: producer tokens (memo 002) ---- */

#define PT_PRODUCERS 3
#define PT_JOBS 20

struct pt_arg {
	struct sb_rt *rt;
	unsigned idx;
	struct sb_job *jobs[PT_JOBS];
};

static void *pt_producer(void *p)
{
	struct pt_arg *a = p;
	sb_thread_attach(a->rt);
	for (unsigned k = 0; k < PT_JOBS; k++)
		a->jobs[k] = submit(a->rt, (struct jspec){ .teardown = SB_TEARDOWN_INPLACE }, tagged, a->idx * 100 + k, 0);
	sb_thread_detach();
	return NULL;
}

ParameterizedTestParameters(global, producer_order)
{
	return cr_make_param_array(struct onoff, onoff_cases, 2);
}

/*
 * Three producers submit 20 jobs each, one producer after the other, while the only worker is
 * held. Each producer's jobs must start in submission order. With producer tokens the worker
 * takes the sub-queues round robin, so producer 2's first job starts before producer 0's last;
 * with the one shared queue everything starts in global submission order.
 */
ParameterizedTest(struct onoff *tokens, global, producer_order, .timeout = 30)
{
	atomic_store(&log_n, 0);
	gates_reset();
	static const char *const tok[] = { "producer_tokens=true", NULL };
	struct sb_rt *rt = t_rt("global", 1, tokens->on ? tok : NULL);
	sb_thread_attach(rt);
	struct sb_job *gate = submit_gate(rt, (struct jspec){ 0 }, 0, -1);
	wait_started(rt, 0);
	struct pt_arg args[PT_PRODUCERS];
	for (unsigned i = 0; i < PT_PRODUCERS; i++) {
		pthread_t th;
		args[i] = (struct pt_arg){ .rt = rt, .idx = i };
		pthread_create(&th, NULL, pt_producer, &args[i]);
		pthread_join(th, NULL);
	}
	atomic_store(&gate_open[0], 1);
	wait_put(rt, gate);
	for (unsigned i = 0; i < PT_PRODUCERS; i++)
		for (unsigned k = 0; k < PT_JOBS; k++)
			wait_put(rt, args[i].jobs[k]);
	cr_assert_eq(atomic_load(&log_n), PT_PRODUCERS * PT_JOBS);
	for (unsigned i = 0; i < PT_PRODUCERS; i++)
		for (unsigned k = 1; k < PT_JOBS; k++)
			cr_assert_lt(log_pos((int)(i * 100 + k - 1)), log_pos((int)(i * 100 + k)),
				     "producer %u: job %u started before job %u", i, k, k - 1);
	int first2 = log_pos(200), last0 = log_pos(PT_JOBS - 1);
	if (tokens->on) {
		cr_assert_lt(first2, last0, "round robin: producer 2 starts (at %d) before producer 0 ends (at %d)",
			     first2, last0);
		cr_assert_geq(t_policy_stat(rt, "queues_in_use"), 1 + PT_PRODUCERS);
	} else {
		for (unsigned i = 0; i < PT_PRODUCERS * PT_JOBS; i++)
			cr_assert_eq(atomic_load(&log_tags[i]), (int)((i / PT_JOBS) * 100 + i % PT_JOBS),
				     "one shared FIFO: start %u out of submission order", i);
	}
	sb_thread_detach();
	t_done(rt);
}

/* A producer whose id is beyond the sub-queue table still works, through the shared queue. */
Test(global, producer_beyond_table_uses_shared_queue, .timeout = 30)
{
	static const char *const sets[] = { "producer_tokens=true", "producer_slots=1", NULL };
	atomic_store(&log_n, 0);
	struct sb_rt *rt = t_rt("global", 2, sets);
	sb_thread_attach(rt); /* ids 0 and 1 are the workers, then the watcher: we are beyond slot 0 */
	for (unsigned k = 0; k < 10; k++)
		wait_put(rt, submit(rt, (struct jspec){ 0 }, tagged, k, 0));
	cr_assert_eq(atomic_load(&log_n), 10);
	cr_assert_geq(t_policy_stat(rt, "token_fallbacks"), 10);
	sb_thread_detach();
	t_done(rt);
}

/* ---- global: batch acquisition (memo 003) ---- */

#define BA_CLIENTS 2
#define BA_JOBS 10
#define BA_LEAVES 100
static _Atomic uint32_t ba_hits[BA_CLIENTS * BA_JOBS * (BA_LEAVES + 1)];

static enum sb_result ba_leaf(struct sb_task *t)
{
	atomic_fetch_add(&ba_hits[t->u[0]], 1);
	return SB_DONE;
}

static enum sb_result ba_root(struct sb_task *t)
{
	atomic_fetch_add(&ba_hits[t->u[0]], 1);
	for (unsigned i = 1; i <= BA_LEAVES; i++)
		sb_spawn(task_u(t->job, ba_leaf, t->u[0] + i, 0));
	return SB_DONE;
}

struct ba_arg {
	struct sb_rt *rt;
	unsigned idx;
	unsigned failed;
};

static void *ba_client(void *p)
{
	struct ba_arg *a = p;
	sb_thread_attach(a->rt);
	struct sb_job *jobs[BA_JOBS];
	for (unsigned k = 0; k < BA_JOBS; k++)
		jobs[k] = submit(a->rt, (struct jspec){ .teardown = SB_TEARDOWN_INPLACE }, ba_root,
				 (uint64_t)(a->idx * BA_JOBS + k) * (BA_LEAVES + 1), 0);
	for (unsigned k = 0; k < BA_JOBS; k++) {
		a->failed += !sb_job_wait(jobs[k]);
		sb_job_put(jobs[k]);
	}
	sb_thread_detach();
	return NULL;
}

/* Several workers claiming 8 at a time: every task runs exactly once (check mode verifies each
 * start as well), every claimed task is run, and a claim takes one task or more. */
Test(global, batch_runs_every_task_once, .timeout = 60)
{
	static const char *const sets[] = { "batch=8", NULL };
	memset(ba_hits, 0, sizeof ba_hits);
	struct sb_rt *rt = t_rt("global", 3, sets);
	pthread_t th[BA_CLIENTS];
	struct ba_arg args[BA_CLIENTS];
	for (unsigned i = 0; i < BA_CLIENTS; i++) {
		args[i] = (struct ba_arg){ .rt = rt, .idx = i };
		pthread_create(&th[i], NULL, ba_client, &args[i]);
	}
	for (unsigned i = 0; i < BA_CLIENTS; i++) {
		pthread_join(th[i], NULL);
		cr_assert_eq(args[i].failed, 0, "client %u: jobs failed: %s", i, sb_rt_failure(rt) ? sb_rt_failure(rt) : "");
	}
	for (size_t i = 0; i < sizeof ba_hits / sizeof ba_hits[0]; i++)
		cr_assert_eq(atomic_load(&ba_hits[i]), 1, "task %zu ran %u times", i, atomic_load(&ba_hits[i]));
	sb_rt_stop(rt, SB_STOP_DRAIN);
	double claims = t_policy_stat(rt, "claims"), claimed = t_policy_stat(rt, "tasks_claimed");
	uint64_t ran = core_count(rt, SB_C_RUN, true);
	cr_assert_eq((uint64_t)claimed, ran, "%.0f tasks claimed, %llu run by workers", claimed, (unsigned long long)ran);
	cr_assert_leq(claims, claimed);
	t_done(rt);
}

/*
 * One worker, batch=8. Gate 0 holds it while gate 1 and five more jobs queue; when gate 0
 * opens the worker claims all six at once and runs gate 1 first: the five it still holds must
 * show in queued(worker 0), not in the shared queue. In all: two claims for seven tasks.
 */
Test(global, batch_claims_fewer_and_buffer_is_visible, .timeout = 30)
{
	static const char *const sets[] = { "batch=8", NULL };
	atomic_store(&log_n, 0);
	gates_reset();
	struct sb_rt *rt = t_rt("global", 1, sets);
	sb_thread_attach(rt);
	struct jspec in = { .teardown = SB_TEARDOWN_INPLACE };
	struct sb_job *g0 = submit_gate(rt, in, 0, -1);
	wait_started(rt, 0);
	struct sb_job *g1 = submit_gate(rt, in, 1, -1);
	struct sb_job *jobs[5];
	for (unsigned k = 0; k < 5; k++)
		jobs[k] = submit(rt, in, tagged, k, 0);
	cr_assert_eq(sb_rt_queued(rt, -1), 6);
	atomic_store(&gate_open[0], 1);
	wait_started(rt, 1);
	cr_assert_eq(sb_rt_queued(rt, 0), 5, "tasks in the worker's buffer are counted as its own");
	cr_assert_eq(sb_rt_queued(rt, -1), 0);
	atomic_store(&gate_open[1], 1);
	wait_put(rt, g0);
	wait_put(rt, g1);
	for (unsigned k = 0; k < 5; k++)
		wait_put(rt, jobs[k]);
	for (unsigned k = 0; k < 5; k++)
		cr_assert_eq(atomic_load(&log_tags[k]), (int)k, "buffered tasks run in claim order");
	sb_rt_stop(rt, SB_STOP_DRAIN);
	cr_assert_eq(t_policy_stat(rt, "claims"), 2);
	cr_assert_eq(t_policy_stat(rt, "tasks_claimed"), 7);
	cr_assert_eq(sb_rt_queued(rt, 0), 0);
	sb_thread_detach();
	t_done(rt);
}

/* The queue is never full: jobs queued behind a busy worker, several segments' worth, all run
 * on the worker (none on the submitter) and in submission order. */
#define FQ_JOBS 1500
Test(global, queue_takes_everything_in_order, .timeout = 30)
{
	atomic_store(&log_n, 0);
	gates_reset();
	struct sb_rt *rt = t_rt("global", 1, NULL);
	sb_thread_attach(rt);
	struct sb_job *g = submit_gate(rt, (struct jspec){ 0 }, 0, -1);
	wait_started(rt, 0);
	static struct sb_job *jobs[FQ_JOBS];
	for (unsigned k = 0; k < FQ_JOBS; k++)
		jobs[k] = submit(rt, (struct jspec){ .teardown = SB_TEARDOWN_INPLACE }, tagged, k, 0);
	cr_assert_eq(sb_rt_queued(rt, -1), FQ_JOBS);
	atomic_store(&gate_open[0], 1);
	for (unsigned k = 0; k < FQ_JOBS; k++)
		wait_put(rt, jobs[k]);
	wait_put(rt, g);
	cr_assert_eq(atomic_load(&log_n), FQ_JOBS);
	for (unsigned k = 0; k < LOG_MAX; k++)
		cr_assert_eq(atomic_load(&log_tags[k]), (int)k, "start %u is tag %d", k, atomic_load(&log_tags[k]));
	sb_rt_stop(rt, SB_STOP_DRAIN);
	cr_assert_eq(core_count(rt, SB_C_RUN, false), core_count(rt, SB_C_RUN, true),
		     "every task ran on the worker, none on the submitting thread");
	sb_thread_detach();
	t_done(rt);
}

/* ---- priority: order (memo 004, "VIPs jump the queue") ---- */

/*
 * One worker held by a gate; then low (-1), normal (0), two high (3) and one beyond the range
 * (100, clamped to max_priority 4) queue up. They start highest first, FIFO within a level.
 */
Test(priority, higher_priority_overtakes_queued_jobs, .timeout = 30)
{
	atomic_store(&log_n, 0);
	gates_reset();
	struct sb_rt *rt = t_rt("priority", 1, NULL);
	sb_thread_attach(rt);
	struct sb_job *g = submit_gate(rt, (struct jspec){ 0 }, 0, -1);
	wait_started(rt, 0);
	struct { int prio, tag; } spec[] = { { -1, 10 }, { -1, 11 }, { 0, 20 }, { -1, 12 }, { 3, 30 }, { 0, 21 },
					     { 3, 31 }, { 100, 40 } };
	enum { N = sizeof spec / sizeof spec[0] };
	struct sb_job *jobs[N];
	for (unsigned k = 0; k < N; k++)
		jobs[k] = submit(rt, (struct jspec){ .priority = spec[k].prio }, tagged, (uint64_t)spec[k].tag, 0);
	atomic_store(&gate_open[0], 1);
	wait_put(rt, g);
	for (unsigned k = 0; k < N; k++)
		wait_put(rt, jobs[k]);
	static const int want[] = { 40, 30, 31, 20, 21, 10, 11, 12 };
	cr_assert_eq(atomic_load(&log_n), N);
	for (unsigned i = 0; i < N; i++)
		cr_assert_eq(atomic_load(&log_tags[i]), want[i], "start %u is job %d, expected %d", i,
			     atomic_load(&log_tags[i]), want[i]);
	cr_assert_eq(t_policy_stat(rt, "clamped_priorities"), 1);
	sb_thread_detach();
	t_done(rt);
}

enum { YH_ROOT = 100, YH_HIGH = 200 };

static enum sb_result yh_root(struct sb_task *t)
{
	log_tag(YH_ROOT);
	sb_spawn(task_u(t->job, gate_body, 0, 1)); /* subtask 0: gate 0, logged as tag 0 */
	for (int i = 1; i <= 5; i++)
		sb_spawn(task_u(t->job, tagged, (uint64_t)i, 0));
	return SB_DONE;
}

ParameterizedTestParameters(priority, waiting_higher_job)
{
	return cr_make_param_array(struct onoff, onoff_cases, 2);
}

/*
 * One worker serves a normal job of six subtasks; while it is inside the first (a gate), a
 * high-priority job arrives. With yield_to_higher the worker puts the normal job back after
 * that subtask and the high job starts next; without, it finishes the normal job first.
 */
ParameterizedTest(struct onoff *yield, priority, waiting_higher_job, .timeout = 30)
{
	atomic_store(&log_n, 0);
	gates_reset();
	static const char *const on[] = { "yield_to_higher=true", NULL }, *const off[] = { "yield_to_higher=false", NULL };
	struct sb_rt *rt = t_rt("priority", 1, yield->on ? on : off);
	sb_thread_attach(rt);
	struct sb_job *low = submit(rt, (struct jspec){ 0 }, yh_root, 0, 0);
	wait_started(rt, 0);
	struct sb_job *high = submit(rt, (struct jspec){ .priority = 3 }, tagged, YH_HIGH, 0);
	atomic_store(&gate_open[0], 1);
	wait_put(rt, low);
	wait_put(rt, high);
	cr_assert_eq(atomic_load(&log_n), 8);
	cr_assert_eq(log_pos(YH_ROOT), 0);
	cr_assert_eq(log_pos(0), 1);
	cr_assert_eq(log_pos(YH_HIGH), yield->on ? 2 : 7, "yield_to_higher=%d: the high job started at %d",
		     yield->on, log_pos(YH_HIGH));
	for (int i = 2; i <= 5; i++)
		cr_assert_lt(log_pos(i - 1), log_pos(i), "the job's own subtasks stay FIFO");
	sb_rt_stop(rt, SB_STOP_DRAIN);
	cr_assert_eq(t_policy_stat(rt, "yields_to_higher"), yield->on ? 1 : 0);
	sb_thread_detach();
	t_done(rt);
}

/* ---- priority: per-job concurrency (memo 004, N workers per job) ---- */

struct cc_job {
	_Atomic int inflight;
	_Atomic unsigned overlaps, ran, peak;
};

static enum sb_result cc_sub(struct sb_task *t)
{
	struct cc_job *cj = t->job->arg;
	unsigned now = (unsigned)atomic_fetch_add(&cj->inflight, 1) + 1;
	unsigned peak = atomic_load(&cj->peak);
	while (now > peak && !atomic_compare_exchange_weak(&cj->peak, &peak, now))
		;
	sb_work_ns(20000);
	atomic_fetch_add(&cj->ran, 1);
	atomic_fetch_sub(&cj->inflight, 1);
	return SB_DONE;
}

static enum sb_result cc_root(struct sb_task *t)
{
	for (unsigned i = 0; i < 40; i++)
		sb_spawn(sb_task_new(t->job, cc_sub, NULL));
	return SB_DONE;
}

struct cc_case {
	unsigned job_concurrency;
	char set[32];
	unsigned limit;
};

ParameterizedTestParameters(priority, concurrency_limit_holds)
{
	static struct cc_case cases[] = {
		{ 1, "", 1 },
		{ 0, "concurrency=1", 1 },
		{ 2, "", 2 },
	};
	return cr_make_param_array(struct cc_case, cases, 3);
}

/* Three workers, three jobs of forty subtasks at once: none of a job's subtasks overlap beyond
 * its limit, given by the job or by the policy's default. */
ParameterizedTest(struct cc_case *c, priority, concurrency_limit_holds, .timeout = 60)
{
	const char *sets[] = { c->set[0] ? c->set : NULL, NULL };
	struct sb_rt *rt = t_rt("priority", 3, sets);
	sb_thread_attach(rt);
	struct cc_job cj[3];
	struct sb_job *jobs[3];
	for (unsigned k = 0; k < 3; k++) {
		cj[k] = (struct cc_job){ 0 };
		jobs[k] = submit(rt, (struct jspec){ .concurrency = c->job_concurrency, .arg = &cj[k] }, cc_root, 0, 0);
	}
	for (unsigned k = 0; k < 3; k++) {
		wait_put(rt, jobs[k]);
		cr_assert_eq(atomic_load(&cj[k].ran), 40);
		cr_assert_leq(atomic_load(&cj[k].peak), c->limit, "job %u: %u subtasks ran at once, limit %u", k,
			      atomic_load(&cj[k].peak), c->limit);
	}
	sb_thread_detach();
	t_done(rt);
}

static _Atomic unsigned rv_arrived;

static enum sb_result rv_sub(struct sb_task *t)
{
	(void)t;
	atomic_fetch_add(&rv_arrived, 1);
	while (atomic_load(&rv_arrived) < 2)
		sched_yield();
	return SB_DONE;
}

static enum sb_result rv_root(struct sb_task *t)
{
	sb_spawn(sb_task_new(t->job, rv_sub, NULL));
	sb_spawn(sb_task_new(t->job, rv_sub, NULL));
	return SB_DONE;
}

/* Two subtasks that only finish together: the job's two workers must serve it at once (a
 * policy that let only one worker serve would hang here until the timeout). */
Test(priority, two_workers_share_one_job, .timeout = 30)
{
	atomic_store(&rv_arrived, 0);
	struct sb_rt *rt = t_rt("priority", 2, NULL);
	sb_thread_attach(rt);
	wait_put(rt, submit(rt, (struct jspec){ .concurrency = 2 }, rv_root, 0, 0));
	cr_assert_eq(atomic_load(&rv_arrived), 2);
	sb_thread_detach();
	t_done(rt);
}

static _Atomic unsigned pp_ran;

static enum sb_result pp_sub(struct sb_task *t)
{
	(void)t;
	atomic_fetch_add(&pp_ran, 1);
	return SB_DONE;
}

/*
 * Ping-pong: this thread submits a subtask the moment the previous one has run, which is when
 * the job's worker finds the queue empty and drops its handle. Every submit races with a
 * drop, thousands of times; a lost race leaves a subtask with no handle out and the loop stuck
 * (the test's timeout ends it).
 */
Test(priority, handle_drop_races_submit, .timeout = 60)
{
	atomic_store(&pp_ran, 0);
	struct sb_rt *rt = t_rt("priority", 2, NULL);
	sb_thread_attach(rt);
	struct sb_job_desc d = { .work_level = SB_WL_INFINITY };
	struct sb_job *j = sb_job_create(rt, &d);
	sb_job_hold(j); /* keeps the job open between subtasks */
	sb_job_submit(j, sb_task_new(j, pp_sub, NULL));
	enum { ROUNDS = 20000 };
	for (unsigned i = 1; i <= ROUNDS && !sb_rt_failure(rt); i++) {
		while (atomic_load(&pp_ran) < i && !sb_rt_failure(rt))
			;
		/* a delay that sweeps the submit across the worker's drop */
		for (volatile unsigned k = (i * 7919u) % 1024u; k; k--)
			;
		sb_spawn(sb_task_new(j, pp_sub, NULL));
		if (i % 7 == 0) /* sometimes two, so that a second handle is put out and dropped too */
			sb_spawn(sb_task_new(j, pp_sub, NULL));
	}
	sb_job_release(j);
	wait_put(rt, j);
	cr_assert_eq(atomic_load(&pp_ran), 1 + ROUNDS + ROUNDS / 7);
	sb_thread_detach();
	t_done(rt);
}

/* The queues refuse nothing: 40 jobs of 40 subtasks queued behind a busy worker all run on the
 * worker, none on the thread that spawned them. */
Test(priority, queues_refuse_nothing, .timeout = 30)
{
	gates_reset();
	struct sb_rt *rt = t_rt("priority", 1, NULL);
	sb_thread_attach(rt);
	struct sb_job *g = submit_gate(rt, (struct jspec){ 0 }, 0, -1);
	wait_started(rt, 0);
	struct cc_job cj[40];
	struct sb_job *jobs[40];
	for (unsigned k = 0; k < 40; k++) {
		cj[k] = (struct cc_job){ 0 };
		jobs[k] = submit(rt, (struct jspec){ .arg = &cj[k] }, cc_root, 0, 0);
	}
	atomic_store(&gate_open[0], 1);
	wait_put(rt, g);
	for (unsigned k = 0; k < 40; k++) {
		wait_put(rt, jobs[k]);
		cr_assert_eq(atomic_load(&cj[k].ran), 40);
	}
	sb_rt_stop(rt, SB_STOP_DRAIN);
	cr_assert_eq(core_count(rt, SB_C_RUN, false), core_count(rt, SB_C_RUN, true),
		     "every subtask ran on the worker, none on a submitter");
	sb_thread_detach();
	t_done(rt);
}

/* ---- priority: cancellation by handle (memo 004) ---- */

struct cn_job {
	_Atomic unsigned teardowns, ran;
	_Atomic int status;
};

static void cn_done(struct sb_job *j)
{
	struct cn_job *cj = j->arg;
	atomic_store(&cj->status, (int)sb_job_status(j));
	atomic_fetch_add(&cj->teardowns, 1);
}

static enum sb_result cn_body(struct sb_task *t)
{
	atomic_fetch_add(&((struct cn_job *)t->job->arg)->ran, 1);
	return SB_DONE;
}

/*
 * One worker held by gate 0. A low-priority job (-3) with six queued subtasks is cancelled
 * while a high-priority job (3, a second gate) waits. When gate 0 opens, the cancel handle
 * hands the six subtasks to the core, which drops them, and the job's in-place teardown runs
 * when the worker moves on, before the high job's body starts: cancellation does not wait for
 * the job's own handle to come up behind higher priorities. That handle is skipped later.
 */
Test(priority, cancelled_job_is_dropped_promptly, .timeout = 30)
{
	gates_reset();
	struct sb_rt *rt = t_rt("priority", 1, NULL);
	sb_thread_attach(rt);
	struct sb_job *g = submit_gate(rt, (struct jspec){ 0 }, 0, -1);
	wait_started(rt, 0);
	struct cn_job cj = { 0 };
	struct sb_job *c = submit(rt, (struct jspec){ .priority = -3, .teardown = SB_TEARDOWN_INPLACE, .done = cn_done, .arg = &cj },
				  cn_body, 0, 0);
	for (unsigned i = 0; i < 5; i++)
		sb_spawn(sb_task_new(c, cn_body, NULL)); /* more subtasks, from this request thread */
	struct sb_job *h = submit_gate(rt, (struct jspec){ .priority = 3, .teardown = SB_TEARDOWN_INPLACE }, 1, -1);
	sb_job_cancel(c);
	atomic_store(&gate_open[0], 1);
	wait_started(rt, 1);
	cr_assert(sb_job_done(c), "the cancelled job finished before the high-priority job's body started");
	cr_assert_eq(atomic_load(&cj.teardowns), 1);
	cr_assert_eq(atomic_load(&cj.status), SB_JOB_CANCELLED, "the callback saw status %d", atomic_load(&cj.status));
	cr_assert_eq(atomic_load(&cj.ran), 0, "%u subtasks of the cancelled job ran", atomic_load(&cj.ran));
	atomic_store(&gate_open[1], 1);
	wait_put(rt, h);
	wait_put(rt, g);
	cr_assert_eq(sb_job_status(c), SB_JOB_CANCELLED);
	sb_job_put(c);
	sb_rt_stop(rt, SB_STOP_DRAIN);
	cr_assert_eq(core_count(rt, SB_C_DROPPED, false), 6);
	cr_assert_eq(t_policy_stat(rt, "cancel_handles"), 1);
	cr_assert_geq(t_policy_stat(rt, "stale_handles"), 1, "the job's own handle was skipped when it surfaced");
	cr_assert_eq(atomic_load(&cj.teardowns), 1);
	sb_thread_detach();
	t_done(rt);
}

static enum sb_result cn_root(struct sb_task *t)
{
	atomic_fetch_add(&((struct cn_job *)t->job->arg)->ran, 1);
	for (unsigned i = 0; i < 200; i++)
		sb_spawn(sb_task_new(t->job, cn_body, NULL));
	sb_job_cancel(t->job); /* the job cancels itself with its subtasks queued */
	for (unsigned i = 0; i < 20; i++)
		sb_spawn(sb_task_new(t->job, cn_body, NULL)); /* submitted after the cancel: never run */
	return SB_DONE;
}

/* A job cancelled while it runs, with a teardown task: every subtask either ran or was dropped,
 * none submitted after the cancel ran (check mode fails the run otherwise), the teardown ran
 * once and saw the job cancelled. */
Test(priority, cancel_in_flight_tears_down_once, .timeout = 30)
{
	struct sb_rt *rt = t_rt("priority", 3, NULL);
	sb_thread_attach(rt);
	struct cn_job cj = { 0 };
	struct sb_job *c = submit(rt, (struct jspec){ .teardown = SB_TEARDOWN_TASK, .done = cn_done, .arg = &cj }, cn_root, 0, 0);
	cr_assert(sb_job_wait(c), "job finished (runtime failure: %s)", sb_rt_failure(rt) ? sb_rt_failure(rt) : "none");
	cr_assert_eq(atomic_load(&cj.teardowns), 1);
	cr_assert_eq(atomic_load(&cj.status), SB_JOB_CANCELLED);
	sb_rt_stop(rt, SB_STOP_DRAIN);
	uint64_t dropped = core_count(rt, SB_C_DROPPED, false);
	cr_assert_eq(atomic_load(&cj.ran) + dropped, 1 + 200 + 20, "%u ran, %llu dropped", atomic_load(&cj.ran),
		     (unsigned long long)dropped);
	cr_assert_geq(dropped, 20);
	sb_job_put(c);
	sb_thread_detach();
	t_done(rt);
}

/* ---- parameters: bad values get one line naming the parameter and what is valid ---- */

Test(gp, bad_parameters_are_refused_with_the_valid_range)
{
	struct {
		const char *policy, *name, *value, *mention;
		int err;
	} bad[] = {
		{ "global", "batch", "0", "1..1024", -ERANGE },
		{ "global", "producer_tokens", "maybe", "producer_tokens", -EINVAL },
		{ "global", "producer_slots", "-1", "1..4096", -ERANGE },
		{ "priority", "max_priority", "99", "0..31", -ERANGE },
		{ "priority", "concurrency", "x", "concurrency", -EINVAL },
		{ "priority", "no_such", "1", "max_priority", -ENOENT },
	};
	for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const struct sb_policy_ops *ops = sb_policy_find(bad[i].policy);
		cr_assert_not_null(ops);
		void *pp = calloc(1, ops->params_size);
		sb_param_defaults(ops->params, pp);
		char err[256] = "";
		int r = sb_param_set(ops->params, pp, bad[i].name, bad[i].value, err, sizeof err);
		cr_assert_eq(r, bad[i].err, "%s %s=%s: returned %d", bad[i].policy, bad[i].name, bad[i].value, r);
		cr_assert(strstr(err, bad[i].mention), "%s %s=%s: message '%s' mentions '%s'", bad[i].policy, bad[i].name,
			  bad[i].value, err, bad[i].mention);
		cr_assert_null(strchr(err, '\n'), "one line");
		free(pp);
	}
}
