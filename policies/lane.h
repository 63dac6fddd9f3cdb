/*
 * lane.h - the lane protocol that memo 001's task processing lanes (lanes.c) and transaction
 * slots (txslot.c) share (lane.c).
 */
#ifndef SB_POLICIES_LANE_H
#define SB_POLICIES_LANE_H

#include "../core/policy.h"
#include "../core/queue.h"

/*
 * Occupancy-guarded queues: memo 001's task processing lanes and transaction slots. A lane
 * holds tasks and one occupancy right; only the holder of the right takes tasks out, so the
 * lane's tasks run one at a time, and `marker` (an SB_TF_MARKER entry: the lane task, or the
 * slot's ticket) is what a member puts in a queue to say "someone should hold this lane".
 *
 * One word holds both the queue (a stack of pushed tasks, newest on top) and the right (a low
 * bit of the same word). Pushing is one CAS that adds the task and sets the right, so the pusher
 * learns at once whether it took the right; giving the right back is one CAS that succeeds only
 * while no task is pushed. "Tasks queued and nobody holding the right" is therefore not a value
 * the word can take, which is the memo's stall hazard ruled out without a Dekker pair of fences.
 *
 * Concurrency: ws_lane_push from any thread at any time; ws_lane_take and ws_lane_give_back
 * only by the holder (the thread whose push took the right, or whoever later got the marker out
 * of a queue), never two at once because there is one holder; ws_lane_txn_fini once, after the
 * last push, concurrently with the holder. The holder's private list (`mine`) passes from
 * holder to holder with the right: release by give_back, acquire by the push that takes it, and
 * from there through whichever queue carries the marker.
 */
struct ws_lane {
	_Alignas(SB_CACHELINE) _Atomic uintptr_t word; /* newest pushed task | WS_LANE_HELD | WS_LANE_ENDED */
	_Alignas(SB_CACHELINE) struct sb_list mine;    /* holder only: tasks taken off the word, oldest first */
	struct sb_task marker;                         /* the lane task / ticket; never run by the core */
};

/* A lane-based member's txn_init / txn_fini: transaction x's lane lives in its pdata.
 * ws_lane_txn_init returns 0 or -ENOMEM. ws_lane_txn_fini may run after the member's destroy
 * (the core ends leftover transactions last), so it touches nothing but the lane: it frees it
 * now, or lets its holder free it when the right is given back. */
int ws_lane_txn_init(struct sb_txn *x);
void ws_lane_txn_fini(struct sb_txn *x);
/* A lane item: a task that works on its transaction (sticky, with a txn). A conditional one
 * waits outside its lane (watcher or PTL, as under stealing) and is not an item. */
static inline bool ws_lane_item(const struct sb_task *t)
{
	return (t->flags & (SB_TF_STICKY | SB_TF_COND)) == SB_TF_STICKY && t->txn;
}
/* Add t (a lane item) to the lane of its transaction; true when this push took the right: the
 * caller is now the holder and must make the marker findable (or serve the lane itself). */
bool ws_lane_push(struct sb_task *t);
/* Holder only: the oldest task, or NULL when none is queued. */
struct sb_task *ws_lane_take(struct ws_lane *l);
/* Holder only: give the right back. Refused (false, still the holder) while any task is queued;
 * after true the caller must not touch the lane again (it may already be freed). */
bool ws_lane_give_back(struct ws_lane *l);

static inline struct ws_lane *ws_lane_of(struct sb_task *marker)
{
	return (struct ws_lane *)(void *)((char *)marker - offsetof(struct ws_lane, marker));
}

#endif
