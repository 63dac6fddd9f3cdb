/*
 * stealing.c - jogasaki's stealing scheduler (memo 000), the default policy: the work-stealing
 * family's base (ws.c, ws_take.c) exposed as it is.
 *
 * Algorithm. Each worker has a main queue (its LTQ) and a sticky queue. A task goes to the
 * submitting thread's preferred worker (a worker's own queue for its own spawns); a sticky task
 * goes to its transaction's bound worker through the sticky word; a conditional task goes to
 * the watcher. A worker checks main and sticky in the order given by
 * dev_thousandths_ratio_check_local_first (100: main first one time in ten, sticky first
 * otherwise); the core then tries stealing_wait x thread_count more times and calls ws_steal:
 * one sweep over the other workers' main queues (never sticky), from the worker after the last
 * successful victim; the stolen task runs at once.
 *
 * Invariants. Those of the family's base (ws.c): a sticky task is only ever in the sticky queue
 * of its transaction's bound worker; nothing is stolen from sticky queues; every task is in
 * exactly one queue.
 *
 * Limits. The sweep in jogasaki skips the last victim itself, this one visits it last.
 */
#include "ws_impl.h"

static int stealing_create(struct sb_rt *rt, const void *params, void **state, char *err, size_t errlen)
{
	return ws_create(rt, params, (struct ws **)state, err, errlen);
}

static void stealing_destroy(void *st) { ws_destroy(st); }
static struct sb_task *stealing_steal(void *st, unsigned self) { return ws_steal(st, self); }
static struct sb_task *stealing_idle(void *st, unsigned self, struct sb_idle *o) { return ws_idle(st, self, o); }
static size_t stealing_queued(void *st, int w) { return ws_queued(st, w); }
static void stealing_stats(void *st, sb_stat_emit_fn e, void *c) { ws_stats(st, e, c); }

const struct sb_policy_ops stealing_ops = {
	.create = stealing_create,
	.destroy = stealing_destroy,
	.submit = ws_op_submit,
	.pop = ws_op_pop,
	.steal = stealing_steal,
	.idle = stealing_idle,
	.queued = stealing_queued,
	.stats = stealing_stats,
	.name = "stealing",
	.description = "jogasaki's default (memo 000): per-worker main+sticky queues, steal sweep after the last victim",
	.version = 1,
	.flags = SB_POLICY_STICKY_EXCLUSIVE,
	.params = ws_param_table,
	.params_size = sizeof(struct ws_params),
};
