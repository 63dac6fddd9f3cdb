/*
 * stealing.h - the work-stealing family: jogasaki's stealing scheduler as a component that the
 * `stealing` policy exposes directly and that hybrid, distribution, lanes and txslot build on.
 *
 * A family member embeds a `struct ws *` and calls these functions directly (composition, not
 * the ops table). Every function is non-blocking. Thread rules are those of the ops callbacks
 * they implement: ws_submit from any thread, ws_pop / ws_steal / ws_idle by worker `self` only.
 */
#ifndef SB_POLICIES_STEALING_H
#define SB_POLICIES_STEALING_H

#include "../core/policy.h"
#include "../core/queue.h"

enum ws_order { WS_FIFO, WS_LIFO };
enum ws_victims { WS_VICTIM_NEXT, WS_VICTIM_SAME, WS_VICTIM_RANDOM, WS_VICTIM_DISTANCE };
enum ws_cond { WS_COND_WATCHER, WS_COND_PTL };

struct ws_params {
	int64_t dev_thousandths_ratio_check_local_first;
	int local_order;   /* enum ws_order */
	bool steal_half;
	int victim_order;  /* enum ws_victims */
	int conditional;   /* enum ws_cond */
	int64_t ptl_requeue;
	bool least_loaded;
	int64_t queue_log2;  /* the lifo deque's initial capacity */
};

extern const struct sb_param ws_param_table[];

struct ws;

int ws_create(struct sb_rt *rt, const struct ws_params *p, struct ws **out, char *err, size_t errlen);
void ws_destroy(struct ws *ws);
/* The stealing placement: sticky -> the transaction's bound worker, conditional -> watcher or
 * LTQ, otherwise the caller's preferred worker (or a suspended one for SB_TF_URGENT). */
int ws_submit(struct ws *ws, struct sb_thread *caller, struct sb_task *t);
/* The worker ws_submit would choose for t before stickiness: SB_TF_URGENT -> a suspended one,
 * least_loaded -> the least loaded, otherwise the caller's preferred worker. */
unsigned ws_pick(struct ws *ws, struct sb_thread *caller, const struct sb_task *t);
/* ws_submit with the worker chosen by the caller (a member with its own placement rule):
 * conditional tasks still go to the watcher (conditional=watcher), a sticky task binds its
 * transaction with w as the candidate, anything else goes to w's main queue. */
int ws_submit_to(struct ws *ws, unsigned w, struct sb_thread *caller, struct sb_task *t);
/* Put a non-sticky task on worker w's main queue (LTQ): the owner's own new task into its
 * deque (local_order=lifo), anything else into its FIFO. Returns w; the queues never refuse. */
int ws_push(struct ws *ws, unsigned w, struct sb_thread *caller, struct sb_task *t);
/* Worker self: pending list, then main and sticky in the configured check order. */
struct sb_task *ws_pop(struct ws *ws, unsigned self);
/* Worker self: one sweep over the other workers' main queues. */
struct sb_task *ws_steal(struct ws *ws, unsigned self);
/* Take one task (or half, with steal_half) from one victim's main queue; NULL if none. */
struct sb_task *ws_steal_from(struct ws *ws, unsigned self, unsigned victim);
/* Idle hint: with pending conditional tasks, cap the suspension at watcher_interval. */
struct sb_task *ws_idle(struct ws *ws, unsigned self, struct sb_idle *out);
size_t ws_queued(struct ws *ws, int w);
size_t ws_main_len(struct ws *ws, unsigned w);
void ws_stats(struct ws *ws, sb_stat_emit_fn emit, void *ctx);
/* `size` bytes of zeroes, cache-line aligned and rounded up to whole lines, so that shared state
 * never shares a line with its neighbours; release with free(). NULL when out of memory. */
void *ws_alloc_lines(size_t size);

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
