/*
 * work.c - busy work: a task that spends a given time, and one that yields while it does (common.h).
 */
#include "common.h"


enum sb_result wl_work_task(struct sb_task *t)
{
	sb_work_ns(t->u[0]);
	return SB_DONE;
}

struct sb_task *wl_work(struct wl_clients *cs, struct sb_job *j, uint64_t ns, uint32_t flags)
{
	struct sb_task *t = wl_task(cs, j, wl_work_task, NULL);
	t->u[0] = ns;
	t->flags = j->txn ? flags : flags & ~(uint32_t)SB_TF_STICKY;
	return t;
}

/* Work between two looks at the yield request: short enough that a yield comes promptly. */
#define WL_SLICE_NS 10000

enum sb_result wl_spend(struct sb_task *t, bool yields, uint64_t yield_ns)
{
	uint64_t left = t->u[0];
	uint64_t t0 = yields && yield_ns ? sb_now_ns() : 0;
	while (left) {
		uint64_t s = left < WL_SLICE_NS ? left : WL_SLICE_NS;
		sb_work_ns(s);
		left -= s;
		if (!yields || !left)
			continue;
		if (sb_should_yield() || (yield_ns && sb_now_ns() - t0 >= yield_ns)) {
			t->u[0] = left;
			return SB_YIELD;
		}
	}
	return SB_DONE;
}
