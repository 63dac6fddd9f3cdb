/*
 * ws.c - the work-stealing family's base (policies/ws.c, ws_take.c; ws.h): its options,
 * on a standalone `struct ws` driven from the test thread (the runtime runs the serial policy,
 * whose workers never look at it): steal_half, victim_order=next and =distance, and
 * conditional=ptl. Asserted on behaviour, not speed.
 */
#include "../common.h"
#include "../../policies/ws.h"
static uint64_t ws_stat(struct ws *ws, const char *key)
{
	struct t_stat s = { key, 0, false };
	ws_stats(ws, t_stat_emit, &s);
	cr_assert(s.found, "the family base reports %s", key);
	return (uint64_t)s.v;
}
/* ---- the family's options on a standalone ws ---- */

/* A runtime whose workers never touch the ws the test makes: serial keeps to its callers. */
struct standalone {
	struct sb_rt *rt;
	struct sb_job *job; /* never submitted: only the owner of the test's tasks */
	struct ws *ws;
};

static struct standalone standalone(int threads, const char *const *sets, const struct ws_params *p)
{
	struct standalone s = { .rt = t_rt("serial", threads, sets) };
	sb_thread_attach(s.rt);
	struct sb_job_desc d = { .work_level = SB_WL_JOIN };
	s.job = sb_job_create(s.rt, &d);
	char err[256] = "";
	cr_assert_eq(ws_create(s.rt, p, &s.ws, err, sizeof err), 0, "%s", err);
	return s;
}

static void standalone_done(struct standalone *s)
{
	ws_destroy(s->ws);
	sb_job_put(s->job);
	sb_thread_detach();
	t_done(s->rt);
}

static struct ws_params ws_defaults(void)
{
	struct ws_params p;
	sb_param_defaults(ws_param_table, &p);
	return p;
}

/* Queue `k` tasks on worker w's LTQ, tagged id0, id0+1, ... */
static void put(struct standalone *s, unsigned w, uint64_t id0, unsigned k)
{
	for (unsigned i = 0; i < k; i++) {
		struct sb_task *t = sb_task_new(s->job, t_noop, NULL);
		t->u[0] = id0 + i;
		cr_assert_eq(ws_push(s->ws, w, sb_thread_self(), t), (int)w);
	}
}

static uint64_t id_of(const struct sb_task *t)
{
	cr_assert_not_null(t, "a task was taken");
	return t->u[0];
}

Test(family, steal_half_takes_half, .timeout = 30)
{
	struct ws_params p = ws_defaults();
	p.steal_half = true;
	struct standalone s = standalone(2, NULL, &p);
	put(&s, 1, 0, 10);
	/* Go's rule: half of 10, the oldest first; one comes back to run, four join the thief */
	cr_assert_eq(id_of(ws_steal_from(s.ws, 0, 1)), 0);
	cr_assert_eq(ws_main_len(s.ws, 1), 5);
	cr_assert_eq(ws_main_len(s.ws, 0), 4);
	cr_assert_eq(ws_stat(s.ws, "steal_half_extra"), 4);
	for (uint64_t id = 1; id <= 4; id++)
		cr_assert_eq(id_of(ws_pop(s.ws, 0)), id, "the extras keep their order in the thief's queue");
	cr_assert_null(ws_pop(s.ws, 0));
	/* an odd count rounds up: 3 of 5 */
	cr_assert_eq(id_of(ws_steal_from(s.ws, 0, 1)), 5);
	cr_assert_eq(ws_main_len(s.ws, 1), 2);
	cr_assert_eq(ws_main_len(s.ws, 0), 2);
	standalone_done(&s);

	/* without the option a steal takes exactly one */
	p.steal_half = false;
	s = standalone(2, NULL, &p);
	put(&s, 1, 0, 10);
	cr_assert_eq(id_of(ws_steal_from(s.ws, 0, 1)), 0);
	cr_assert_eq(ws_main_len(s.ws, 1), 9);
	cr_assert_eq(ws_main_len(s.ws, 0), 0);
	standalone_done(&s);
}

/* Worker 0 sweeps four workers; workers 2 and 3 have two tasks each (ids 2x and 3x). */
static void sweep_order(int victim_order, const uint64_t expect[4])
{
	struct ws_params p = ws_defaults();
	p.victim_order = victim_order;
	struct standalone s = standalone(4, NULL, &p);
	put(&s, 2, 20, 2);
	put(&s, 3, 30, 2);
	for (unsigned k = 0; k < 4; k++)
		cr_assert_eq(id_of(ws_steal(s.ws, 0)), expect[k], "steal %u", k);
	cr_assert_null(ws_steal(s.ws, 0));
	standalone_done(&s);
}

Test(family, victim_order_next_starts_after_last_victim, .timeout = 30)
{
	/* next: each sweep starts after the last victim, so the two victims alternate */
	static const uint64_t next[4] = { 20, 30, 21, 31 };
	sweep_order(WS_VICTIM_NEXT, next);
	/* same: a sweep starts at the last victim, which is drained first */
	static const uint64_t same[4] = { 20, 21, 30, 31 };
	sweep_order(WS_VICTIM_SAME, same);
}

Test(family, victim_order_distance_prefers_nearest, .timeout = 30)
{
	/* two packages of two cores, worker i on core i: worker 1's neighbour is worker 0 */
	static const char *const topo[] = { "topology=package:2 core:2 pu:1", "initial_core=0", NULL };
	struct ws_params p = ws_defaults();
	p.victim_order = WS_VICTIM_DISTANCE;
	struct standalone s = standalone(4, topo, &p);
	cr_assert_lt(sb_worker_distance(s.rt, 1, 0), sb_worker_distance(s.rt, 1, 2), "the synthetic topology is in use");
	cr_assert_eq(sb_worker_distance(s.rt, 1, 2), sb_worker_distance(s.rt, 1, 3));
	put(&s, 3, 30, 1);
	put(&s, 2, 20, 1);
	put(&s, 0, 0, 1);
	/* worker 1 visits 0 (same package) before 2 and 3, although "next" would start at 2 */
	cr_assert_eq(id_of(ws_steal(s.ws, 1)), 0);
	cr_assert_eq(id_of(ws_steal(s.ws, 1)), 20);
	cr_assert_eq(id_of(ws_steal(s.ws, 1)), 30);
	cr_assert_null(ws_steal(s.ws, 1));
	standalone_done(&s);
}

static _Atomic int ptl_flag;

static bool ptl_check(struct sb_task *t)
{
	(void)t;
	return atomic_load(&ptl_flag) != 0;
}

Test(family, conditional_ptl_parks_and_requeues, .timeout = 30)
{
	atomic_store(&ptl_flag, 0);
	struct ws_params p = ws_defaults();
	p.conditional = WS_COND_PTL;
	p.ptl_requeue = 3;
	struct standalone s = standalone(2, NULL, &p);
	struct sb_task *c = sb_task_new(s.job, t_noop, NULL);
	c->flags |= SB_TF_COND;
	c->check = ptl_check;
	c->u[0] = 99;
	cr_assert_eq(ws_push(s.ws, 0, sb_thread_self(), c), 0);
	/* taken before its time: parked in worker 0's PTL, out of the LTQ and out of thieves' reach */
	cr_assert_null(ws_pop(s.ws, 0));
	cr_assert_eq(ws_main_len(s.ws, 0), 0);
	cr_assert_null(ws_steal_from(s.ws, 1, 0));
	/* two more failed checks, one per pop, while other work runs */
	put(&s, 0, 1, 2);
	cr_assert_eq(id_of(ws_pop(s.ws, 0)), 1);
	cr_assert_eq(id_of(ws_pop(s.ws, 0)), 2);
	cr_assert_eq(ws_stat(s.ws, "ptl_requeues"), 0);
	/* the third failed check sends it back to the LTQ, behind what is queued there */
	put(&s, 0, 3, 2);
	cr_assert_eq(id_of(ws_pop(s.ws, 0)), 3);
	cr_assert_eq(ws_stat(s.ws, "ptl_requeues"), 1);
	cr_assert_eq(ws_main_len(s.ws, 0), 2);
	/* where a thief can now reach it */
	cr_assert_eq(id_of(ws_steal_from(s.ws, 1, 0)), 4);
	cr_assert_eq(ws_steal_from(s.ws, 1, 0), c);
	/* parked again, then ready: the owner's next pop returns it with the check done */
	cr_assert_eq(ws_push(s.ws, 0, sb_thread_self(), c), 0);
	cr_assert_null(ws_pop(s.ws, 0));
	atomic_store(&ptl_flag, 1);
	cr_assert_eq(ws_pop(s.ws, 0), c);
	cr_assert_eq(c->flags & SB_TF_COND, 0, "a PTL task leaves with its check done");
	standalone_done(&s);
}
