/*
 * ws.h - the work-stealing family's base (ws.c, ws_take.c): jogasaki's stealing scheduler as a
 * component that the `stealing` policy exposes directly and that hybrid, distribution, lanes and
 * txslot build on.
 *
 * A family member embeds a `struct ws *` and calls these functions directly (composition, not
 * the ops table). Every function is non-blocking. Thread rules are those of the ops callbacks
 * they implement: ws_submit from any thread, ws_pop / ws_steal / ws_idle by worker `self` only.
 */
#ifndef SB_POLICIES_WS_H
#define SB_POLICIES_WS_H

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

#endif
