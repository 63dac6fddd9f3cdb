/*
 * serial.c - jogasaki's serial scheduler (memo 000).
 *
 * Algorithm. Every task goes to the calling thread's own queue (SB_TO_CALLER) and runs there,
 * on that thread, when it waits for the job (sb_job_wait) or drains its queue. A task spawned
 * by a task runs on the same thread, so a whole job runs on the request thread that submitted
 * it. Conditional tasks are checked in the same loop and pushed back while not ready (the core's
 * serial drain does this). Workers get nothing and stay suspended.
 *
 * Invariants. A job's tasks all run on one thread; no task is ever queued where another thread
 * could take it.
 *
 * Limits. A request thread that never waits never runs its jobs; jobs of one thread never run
 * in parallel.
 */
#include "../core/policy.h"

static int serial_submit(void *state, struct sb_thread *caller, struct sb_task *t)
{
	(void)state;
	(void)caller;
	(void)t;
	return SB_TO_CALLER;
}

const struct sb_policy_ops serial_ops = {
	.submit = serial_submit, /* no state, and nothing for workers to pop: the core's defaults */
	.name = "serial",
	.description = "jogasaki's serial scheduler (memo 000): a job runs on the thread that submits and waits for it",
	.version = 1,
};
