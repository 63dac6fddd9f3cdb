/*
 * check.c - check mode (core/check.c) catches what it claims to, and a policy's create keeps
 * the error contract (core/policy.h: 0 or a negative errno).
 *
 * Check mode is only worth its cost if a broken policy is caught by it: each test here plugs a
 * deliberately broken policy (defined here, never registered) into the core and asserts that the
 * run fails with a message naming the invariant, the task, the job and the worker. The faults a
 * run must survive are tested where they live: tests/core/job.c (an erroring task, a cancel),
 * worker.c (thread creation), task.c (ten million tasks).
 */
#include <pthread.h>

#include "../common.h"

/* ---- a policy with one shared FIFO, that can be told to misbehave ---- */

enum bug { BUG_NONE, BUG_DUP, BUG_MARKER, BUG_RANGE, BUG_OFF_BOUND };

struct broken {
	struct sb_fifo q;
	enum bug bug;
	struct sb_task *last;  /* BUG_DUP: hands this one out a second time */
	struct sb_task marker;
	_Atomic int fired;
};

static enum bug want_bug;

static int broken_create(struct sb_rt *rt, const void *params, void **state, char *err, size_t errlen)
{
	(void)rt;
	(void)params;
	struct broken *b = calloc(1, sizeof *b);
	if (!b || sb_fifo_init(&b->q)) {
		snprintf(err, errlen, "out of memory");
		free(b);
		return -1;
	}
	b->bug = want_bug;
	b->marker.flags = SB_TF_MARKER;
	*state = b;
	return 0;
}

static void broken_destroy(void *st)
{
	struct broken *b = st;
	sb_fifo_fini(&b->q);
	free(b);
}

static int broken_submit(void *st, struct sb_thread *caller, struct sb_task *t)
{
	struct broken *b = st;
	if (b->bug == BUG_RANGE && !atomic_exchange(&b->fired, 1)) {
		sb_fifo_push(&b->q, t);
		return 1000; /* no such worker */
	}
	if (b->bug == BUG_OFF_BOUND && (t->flags & SB_TF_STICKY)) {
		unsigned bound = sb_txn_bind(t, 0);
		(void)bound; /* bound to worker 0, but queued where anyone may take it */
	}
	(void)caller;
	sb_fifo_push(&b->q, t);
	return SB_TO_ANY;
}

static struct sb_task *broken_pop(void *st, unsigned self)
{
	struct broken *b = st;
	(void)self;
	if (b->bug == BUG_MARKER && !atomic_exchange(&b->fired, 1))
		return &b->marker;
	struct sb_task *t = sb_fifo_pop(&b->q);
	if (b->bug == BUG_DUP && t && !atomic_exchange(&b->fired, 1)) {
		/* hand the same task out twice: once now, once again on the next pop */
		sb_fifo_push(&b->q, t);
	}
	return t;
}

static const struct sb_policy_ops broken_ops = {
	.create = broken_create,
	.destroy = broken_destroy,
	.submit = broken_submit,
	.pop = broken_pop,
	.name = "broken",
	.description = "test-only policy with a chosen bug",
	.version = 1,
};

/* The same policy claiming SB_POLICY_STICKY_EXCLUSIVE, which its shared queue does not keep. */
static const struct sb_policy_ops broken_exclusive_ops = {
	.create = broken_create,
	.destroy = broken_destroy,
	.submit = broken_submit,
	.pop = broken_pop,
	.name = "broken_exclusive",
	.description = "test-only policy that promises exclusive sticky tasks and breaks the promise",
	.version = 1,
	.flags = SB_POLICY_STICKY_EXCLUSIVE,
};

static struct sb_rt *broken_rt_ops(const struct sb_policy_ops *ops, enum bug bug, int threads)
{
	want_bug = bug;
	struct sb_config cfg;
	sb_config_default(&cfg);
	cfg.thread_count = threads;
	cfg.check = true;
	cfg.stall_limit = 3000;
	char err[256] = "";
	struct sb_rt *rt;
	int rc = sb_rt_create(&rt, &cfg, ops, NULL, err, sizeof err);
	cr_assert(rt && rc == 0, "%s", err);
	return rt;
}

static struct sb_rt *broken_rt(enum bug bug, int threads)
{
	return broken_rt_ops(&broken_ops, bug, threads);
}

static enum sb_result fan(struct sb_task *t)
{
	for (unsigned i = 0; i < 64; i++) {
		struct sb_task *c = sb_task_new(t->job, t_work_leaf, NULL);
		c->flags |= (uint32_t)t->u[0];
		sb_spawn(c);
	}
	return SB_DONE;
}

/* Run one fan-out job; the runtime is expected to fail. Returns the failure text. */
static const char *expect_failure(struct sb_rt *rt, uint32_t child_flags, struct sb_txn *txn)
{
	struct sb_job_desc d = { .txn = txn };
	struct sb_job *j = sb_job_create(rt, &d);
	struct sb_task *r = sb_task_new(j, fan, NULL);
	r->u[0] = child_flags;
	sb_job_submit(j, r);
	sb_job_wait(j); /* returns false once the run has failed */
	const char *f = sb_rt_failure(rt);
	cr_assert_not_null(f, "check mode noticed nothing");
	return f;
}

/* One broken policy per case, and what the failure message must say. */
struct bug_case {
	int bug;
	char expect[48];
	bool names_task; /* the message names the task, its job and the worker */
};

ParameterizedTestParameters(check, broken_policy_is_caught)
{
	static struct bug_case cases[] = {
		{ BUG_DUP, "each task runs exactly once", true }, /* a task handed out twice */
		{ BUG_MARKER, "marker", false },                  /* a policy's own entry leaking out */
		{ BUG_RANGE, "valid workers are 0..1", true },    /* a placement on no such worker */
	};
	return cr_make_param_array(struct bug_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bug_case *c, check, broken_policy_is_caught, .timeout = 30)
{
	struct sb_rt *rt = broken_rt((enum bug)c->bug, 2);
	sb_thread_attach(rt);
	const char *f = expect_failure(rt, 0, NULL);
	cr_assert(strstr(f, c->expect), "%s", f);
	if (c->names_task)
		cr_assert(strstr(f, "task") && strstr(f, "job") && strstr(f, "worker"), "names task, job and worker: %s", f);
	sb_thread_detach();
	/* the run failed: stop does not wait for jobs a broken policy may have lost */
	sb_rt_stop(rt, SB_STOP_CANCEL);
}

/* The run sticky_rounds watches, and until when (sb_now_ns). */
static struct sb_rt *caught_rt;
static uint64_t caught_by;

/* A sticky task that keeps its worker, and its transaction's lock, until check mode has failed
 * the run (or caught_by): while it holds, the transaction's other sticky tasks can only go to the
 * other worker, which is what the broken policies allow and the check must catch. The catch so
 * follows from the policies' logic, not from two workers happening to overlap in time. */
static enum sb_result hold_until_caught(struct sb_task *t)
{
	(void)t;
	while (!sb_rt_failure(caught_rt) && sb_now_ns() < caught_by)
		t_sleep_us(100);
	return SB_DONE;
}

static enum sb_result fan_holding(struct sb_task *t)
{
	for (unsigned i = 0; i < 64; i++) {
		struct sb_task *c = sb_task_new(t->job, hold_until_caught, NULL);
		c->flags |= SB_TF_STICKY;
		sb_spawn(c);
	}
	return SB_DONE;
}

/* Run fan-out jobs of 64 sticky tasks of one transaction until the run fails or 20 s have
 * passed (the first job fails it unless the check is broken: the bound only covers a machine
 * that keeps the other worker off its CPU for that long). */
static const char *sticky_rounds(struct sb_rt *rt, struct sb_txn *x)
{
	const char *f = NULL;
	caught_rt = rt;
	caught_by = sb_now_ns() + 20000000000ull;
	while (!f && sb_now_ns() < caught_by) {
		struct sb_job_desc d = { .txn = x };
		struct sb_job *j = sb_job_create(rt, &d);
		sb_job_submit(j, sb_task_new(j, fan_holding, NULL));
		sb_job_wait(j);
		sb_job_put(j);
		f = sb_rt_failure(rt);
	}
	return f;
}

Test(check, sticky_off_the_bound_worker_is_caught, .timeout = 60)
{
	/* two workers take sticky tasks bound to worker 0 from a shared queue: worker 1 runs the
	 * first one, or the next one while the first holds worker 0 */
	struct sb_rt *rt = broken_rt(BUG_OFF_BOUND, 2);
	sb_thread_attach(rt);
	struct sb_txn *x = sb_txn_begin(rt, 7);
	const char *f = sticky_rounds(rt, x);
	cr_assert_not_null(f, "20 s without a sticky task on worker 1");
	cr_assert(strstr(f, "sticky tasks run on the bound worker"), "%s", f);
	cr_assert(strstr(f, "transaction 7"), "%s", f);
	sb_thread_detach();
	sb_rt_stop(rt, SB_STOP_CANCEL);
}

Test(check, sticky_overlap_under_an_exclusive_promise_is_caught, .timeout = 60)
{
	/* the transaction lock keeps the bodies apart, so only the count taken before the lock
	 * can see that the policy let two of them go at once: the first sticky task holds its
	 * worker and the lock, and the other worker starts the next one meanwhile */
	struct sb_rt *rt = broken_rt_ops(&broken_exclusive_ops, BUG_NONE, 2);
	sb_thread_attach(rt);
	struct sb_txn *x = sb_txn_begin(rt, 9);
	const char *f = sticky_rounds(rt, x);
	cr_assert_not_null(f, "20 s without two sticky tasks at once");
	cr_assert(strstr(f, "sticky tasks of a transaction never overlap"), "%s", f);
	sb_thread_detach();
	sb_rt_stop(rt, SB_STOP_CANCEL);
}

Test(check, correct_policy_passes, .timeout = 30)
{
	struct sb_rt *rt = broken_rt(BUG_NONE, 2);
	sb_thread_attach(rt);
	for (int i = 0; i < 20; i++) {
		struct sb_job *j = t_run_job(rt, &(struct sb_job_desc){ 0 }, fan, NULL);
		sb_job_put(j);
	}
	sb_thread_detach();
	t_done(rt);
}
/* ---- the error contract: a policy's create returns 0 or a negative errno ---- */

static int positive_create(struct sb_rt *rt, const void *params, void **state, char *err, size_t errlen)
{
	(void)rt, (void)params, (void)state, (void)err, (void)errlen;
	return 1; /* neither success nor a negative errno */
}

static int nomem_create(struct sb_rt *rt, const void *params, void **state, char *err, size_t errlen)
{
	(void)rt, (void)params, (void)state;
	return sb_policy_error(err, errlen, -ENOMEM, "out of memory for %d things", 3);
}

static int create_with(int (*create)(struct sb_rt *, const void *, void **, char *, size_t), char *err, size_t errlen)
{
	struct sb_policy_ops ops = *sb_policy_find("fifo");
	ops.create = create;
	ops.name = "contract";
	struct sb_config cfg;
	sb_config_default(&cfg);
	cfg.thread_count = 1;
	struct sb_rt *rt;
	int rc = sb_rt_create(&rt, &cfg, &ops, NULL, err, errlen);
	cr_assert_null(rt, "a runtime whose policy did not start");
	return rc;
}

Test(check, policy_error_contract)
{
	char err[256] = "";
	int rc = create_with(positive_create, err, sizeof err);
	cr_assert_eq(rc, -EPROTO, "a create that breaks the contract: %d", rc);
	cr_assert(strstr(err, "policy contract broke the contract 'create returns 0 or a negative errno'"),
		  "the message names the rule: %s", err);
	err[0] = 0;
	rc = create_with(nomem_create, err, sizeof err);
	cr_assert_eq(rc, -ENOMEM, "the policy's errno comes back as it was: %d", rc);
	cr_assert_str_eq(err, "out of memory for 3 things");
}
