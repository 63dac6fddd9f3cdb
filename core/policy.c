/*
 * policy.c - the only place that calls through struct sb_policy_ops.
 *
 * Every call from the core to the policy goes through a wrapper here, so this is where:
 *   - optional callbacks are tested for NULL once,
 *   - chaos mode (chaos=SEED) injects yields and short delays right before and after policy
 *     calls, to shake out races in policies and in the core around them,
 *   - check mode validates what a policy returns (placements in range, tasks that were
 *     really queued, markers never leaking to the core).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt.h"

static SB_COLD void chaos_now(void)
{
	uint64_t r = sb_rand();
	switch (r & 31) {
	case 0:
		sb_exec_yield();
		break;
	case 1:
	case 2: {
		/* a short delay: up to ~4 us of spinning */
		for (uint64_t i = (r >> 8) & 4095; i; i--)
			sb_cpu_relax();
		break;
	}
	default:
		break;
	}
}

static inline void chaos(struct sb_rt *rt)
{
	if (__builtin_expect(rt->chaos_seed != 0, 0) && sb_self)
		chaos_now();
}

static SB_COLD struct sb_task *check_returned(struct sb_rt *rt, struct sb_task *t, unsigned self, const char *op)
{
	/* help answers a request thread (self is its id); every other op a worker */
	const char *who = strcmp(op, "help") ? "worker" : "thread";
	if (t->flags & SB_TF_MARKER) {
		sb_fail(rt, "policy %s returned its own marker entry from %s to %s %u", rt->ops->name, op, who, self);
		return NULL;
	}
	uint32_t cs = atomic_load_explicit(&t->cstate, memory_order_relaxed);
	if (cs != SB_CS_QUEUED) {
		sb_fail(rt, "invariant 'each task runs exactly once' violated: policy %s returned task %llu of job "
			"%llu from %s to %s %u in state %u (expected queued)", rt->ops->name,
			(unsigned long long)t->seq, (unsigned long long)t->job->id, op, who, self, cs);
		return NULL; /* running it would corrupt the job's accounting; the run has failed */
	}
	return t;
}

static inline struct sb_task *checked(struct sb_rt *rt, struct sb_task *t, unsigned self, const char *op)
{
	if (__builtin_expect(t && rt->cfg.check, 0))
		return check_returned(rt, t, self, op);
	return t;
}

/* The defaults of the optional ops that a caller cannot simply skip (sched_ext's way: a policy
 * writes only what it decides). The rest are tested for NULL where they are called, on paths
 * that are not hot. */
static struct sb_task *default_pop(void *state, unsigned self)
{
	(void)state;
	(void)self;
	return NULL; /* the policy never queues work for a worker (serial) */
}

void sb_policy_bind(struct sb_rt *rt, const struct sb_policy_ops *ops)
{
	rt->ops_own = *ops;
	if (!rt->ops_own.pop)
		rt->ops_own.pop = default_pop;
	rt->ops = &rt->ops_own;
}

int sb_policy_create(struct sb_rt *rt, const void *params, char *err, size_t errlen)
{
	const struct sb_policy_ops *ops = rt->ops;
	if (ops->params_size) {
		rt->pparams = calloc(1, ops->params_size);
		if (!rt->pparams) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		if (params)
			memcpy(rt->pparams, params, ops->params_size);
		else if (ops->params)
			sb_param_defaults(ops->params, rt->pparams);
	}
	if (!ops->create) {
		rt->pstate = rt; /* no state of its own: the runtime stands for it (non-NULL: created) */
		return 0;
	}
	int e = ops->create(rt, rt->pparams, &rt->pstate, err, errlen);
	if (e > 0 || e < -4095) {
		snprintf(err, errlen, "policy %s broke the contract 'create returns 0 or a negative errno': it returned %d",
			 ops->name, e);
		return -EPROTO;
	}
	if (e && !*err)
		snprintf(err, errlen, "policy %s could not start: %s", ops->name, strerror(-e));
	return e;
}

int sb_policy_error(char *err, size_t errlen, int neg_errno, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return neg_errno < 0 ? neg_errno : -EPROTO;
}

void sb_policy_fatal(const struct sb_rt *rt, int neg_errno, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "schedbed: policy %s: %s (%s)\n", rt->ops->name, msg, strerror(-neg_errno));
	fflush(stderr);
	_exit(1); /* other threads are running: no atexit handlers, no half-written result moved into place */
}

void sb_policy_destroy(struct sb_rt *rt)
{
	/* a policy may still use its queues here, and sb_fifo needs a thread registered with
	 * liburcu; the destroying thread may have detached already */
	bool reg = !sb_self;
	if (reg)
		sb_exec_rcu_register();
	if (rt->ops->destroy)
		rt->ops->destroy(rt->pstate);
	if (reg)
		sb_exec_rcu_unregister();
	rt->pstate = NULL;
}

/* A virtual executor's price of a push is paid on the line of the queue every later taker of the
 * task contends on: the target worker's; the one every worker shares (n) for SB_TO_ANY, which
 * under SB_POLICY_JOB_QUEUES is the queue of the job's handles (priority puts one out there);
 * else, under SB_POLICY_JOB_QUEUES, the job's own queue (n + 1 + the job's id modulo
 * SB_EXEC_JOB_LINES: two jobs that many ids apart share a line, which costs only while both are
 * busy at once). t->job is read after t was pushed, when another thread may have run and freed
 * it natively; under a virtual executor only this actor runs until it charges. */
static int push_line(const struct sb_rt *rt, const struct sb_task *t, int where)
{
	if (where >= 0)
		return where;
	if (where == SB_TO_ANY)
		return (int)rt->n;
	if (where == SB_TO_NOWAKE && (rt->ops->flags & SB_POLICY_JOB_QUEUES) && t->job)
		return (int)rt->n + 1 + (int)(t->job->id % SB_EXEC_JOB_LINES);
	return -1;
}

/* `wrapped` is a constant at each call site: sb_place has already tested rt->slow once for
 * check, chaos and a virtual executor, and calls with true only from its cold path. The result
 * is checked by sb_place: a placement on the caller's own worker is valid by construction, so
 * only the others are compared with the worker count. */
SB_HOT_INLINE int sb_policy_submit(struct sb_thread *tc, struct sb_task *t, bool wrapped)
{
	struct sb_rt *rt = tc->rt;
	if (wrapped)
		chaos(rt);
	int where = rt->ops->submit(rt->pstate, tc, t);
	if (wrapped) {
		chaos(rt);
		if (sb_exec_virtual())
			sb_exec_charge(SB_COST_PUSH, push_line(rt, t, where), tc->worker, t);
	}
	return where;
}

/* Chaos and check mode's pop, and a virtual executor's (which charges it). */
static SB_COLD struct sb_task *pop_wrapped(struct sb_rt *rt, unsigned self)
{
	chaos(rt);
	struct sb_task *t = rt->ops->pop(rt->pstate, self);
	sb_exec_charge(t ? SB_COST_POP : SB_COST_POP_EMPTY, (int)self, (int)self, t);
	return checked(rt, t, self, "pop");
}

SB_HOT_INLINE struct sb_task *sb_policy_pop(struct sb_rt *rt, unsigned self)
{
	/* relaxed: configuration bits, set before the workers start */
	if (__builtin_expect(atomic_load_explicit(&rt->slow, memory_order_relaxed) & SB_SLOW_WRAP, 0))
		return pop_wrapped(rt, self);
	return rt->ops->pop(rt->pstate, self);
}

bool sb_policy_can_steal(const struct sb_rt *rt)
{
	return rt->ops->steal != NULL;
}

struct sb_task *sb_policy_steal(struct sb_rt *rt, unsigned self)
{
	chaos(rt);
	struct sb_task *t = rt->ops->steal(rt->pstate, self);
	/* the victim is the policy's choice, unknown here: the executor knows the stolen task's line */
	sb_exec_charge(t ? SB_COST_STEAL : SB_COST_STEAL_EMPTY, -1, (int)self, t);
	return checked(rt, t, self, "steal");
}

struct sb_task *sb_policy_idle(struct sb_rt *rt, unsigned self, struct sb_idle *out)
{
	if (!rt->ops->idle)
		return NULL;
	chaos(rt);
	return checked(rt, rt->ops->idle(rt->pstate, self, out), self, "idle");
}

/* A waiting request thread's call, off every worker's path. Only a task found is charged: an
 * empty look comes just before a park, whose cost a virtual executor charges anyway, and a
 * policy without external threads then costs the simulated run nothing. */
struct sb_task *sb_policy_help(struct sb_thread *tc)
{
	struct sb_rt *rt = tc->rt;
	if (!rt->ops->help)
		return NULL;
	chaos(rt);
	struct sb_task *t = rt->ops->help(rt->pstate, tc);
	if (t)
		sb_exec_charge(SB_COST_POP, -1, tc->worker, t);
	return checked(rt, t, tc->id, "help");
}

void sb_policy_job_start(struct sb_thread *tc, struct sb_job *j)
{
	if (tc->rt->ops->job_start)
		tc->rt->ops->job_start(tc->rt->pstate, j, tc);
}

void sb_policy_job_end(struct sb_rt *rt, struct sb_job *j)
{
	if (rt->ops->job_end)
		rt->ops->job_end(rt->pstate, j);
}

void sb_policy_job_cancel(struct sb_rt *rt, struct sb_job *j)
{
	if (rt->ops->job_cancel)
		rt->ops->job_cancel(rt->pstate, j);
}

int sb_policy_txn_init(struct sb_rt *rt, struct sb_txn *x)
{
	return rt->ops->txn_init ? rt->ops->txn_init(rt->pstate, x) : 0;
}

void sb_policy_txn_fini(struct sb_rt *rt, struct sb_txn *x)
{
	if (rt->ops->txn_fini)
		rt->ops->txn_fini(rt->pstate, x);
}

size_t sb_policy_queued(const struct sb_rt *rt, int w)
{
	return rt->ops->queued && rt->pstate ? rt->ops->queued(rt->pstate, w) : 0;
}

void sb_rt_policy_stats(const struct sb_rt *rt, void (*emit)(void *ctx, const char *key, double v), void *ctx)
{
	/* which half of the wake protocol pays for its ordering (core/worker.c) */
	emit(ctx, "wake_membarrier", rt->membarrier ? 1 : 0);
	if (rt->ops->stats && rt->pstate)
		rt->ops->stats(rt->pstate, emit, ctx);
}
