/*
 * lane.c - occupancy-guarded queues, the lane protocol of lanes.c and txslot.c (lane.h explains
 * the one-word protocol).
 */
#include <errno.h>
#include <stdlib.h>

#include "lane.h"

#define WS_LANE_HELD ((uintptr_t)1)
#define WS_LANE_ENDED ((uintptr_t)2)
#define WS_LANE_FLAGS (WS_LANE_HELD | WS_LANE_ENDED)
_Static_assert(_Alignof(struct sb_task) > WS_LANE_FLAGS, "a task pointer leaves the lane's flag bits free");

int ws_lane_txn_init(struct sb_txn *x)
{
	struct ws_lane *l = sb_alloc_lines(sizeof *l);
	if (!l)
		return -ENOMEM;
	atomic_init(&l->word, 0);
	l->marker.flags = SB_TF_MARKER;
	sb_txn_set_pdata(x, l);
	return 0;
}

bool ws_lane_push(struct sb_task *t)
{
	struct ws_lane *l = sb_txn_pdata(t->txn);
	uintptr_t old = atomic_load_explicit(&l->word, memory_order_relaxed);
	for (;;) {
		/* relaxed: the link is published by the CAS below */
		atomic_store_explicit(&t->node.next, (struct sb_node *)(old & ~WS_LANE_FLAGS), memory_order_relaxed);
		/* acq_rel. release: publishes t and its link; pairs with the acquire in ws_lane_take.
		 * acquire: when this push takes the right it reads the value the last holder's
		 * give_back CAS wrote (release), so the new holder sees that holder's `mine`. */
		if (atomic_compare_exchange_weak_explicit(&l->word, &old, (uintptr_t)t | (old & WS_LANE_FLAGS) | WS_LANE_HELD,
							  memory_order_acq_rel, memory_order_relaxed))
			return !(old & WS_LANE_HELD);
	}
}

struct sb_task *ws_lane_take(struct ws_lane *l)
{
	struct sb_task *t = sb_list_pop(&l->mine);
	if (t || !(atomic_load_explicit(&l->word, memory_order_relaxed) & ~WS_LANE_FLAGS))
		return t;
	/* acquire: pairs with the pushers' release; takes the whole stack and keeps the flag bits
	 * (the right stays held), so no CAS loop is needed */
	uintptr_t w = atomic_fetch_and_explicit(&l->word, WS_LANE_FLAGS, memory_order_acquire);
	struct sb_node *top = (struct sb_node *)(w & ~WS_LANE_FLAGS), *n = top, *rev = NULL;
	size_t k = 0;
	/* newest first on the stack: reverse it so that the lane runs oldest first */
	while (n) {
		struct sb_node *next = atomic_load_explicit(&n->next, memory_order_relaxed);
		atomic_store_explicit(&n->next, rev, memory_order_relaxed);
		rev = n;
		n = next;
		k++;
	}
	l->mine.head = rev;
	l->mine.tail = top;
	l->mine.len = k;
	return sb_list_pop(&l->mine);
}

bool ws_lane_give_back(struct ws_lane *l)
{
	if (l->mine.len)
		return false;
	uintptr_t old = atomic_load_explicit(&l->word, memory_order_relaxed);
	do {
		if (old & ~WS_LANE_FLAGS)
			return false; /* the lane refuses while tasks remain (memo 001, C-3-1) */
		/* acq_rel. release: the next holder's push (acquire) sees this holder's `mine`.
		 * acquire: when ws_lane_txn_fini came first, the free below follows all it did. */
	} while (!atomic_compare_exchange_weak_explicit(&l->word, &old, old & WS_LANE_ENDED, memory_order_acq_rel,
							memory_order_relaxed));
	if (old & WS_LANE_ENDED)
		free(l); /* the transaction ended while we held the right: the lane is ours to free */
	return true;
}

void ws_lane_txn_fini(struct sb_txn *x)
{
	struct ws_lane *l = sb_txn_pdata(x);
	/* acq_rel: exactly one of this and the holder's give_back sees the other's bit; whoever
	 * frees has acquired the other side's last accesses */
	if (!(atomic_fetch_or_explicit(&l->word, WS_LANE_ENDED, memory_order_acq_rel) & WS_LANE_HELD))
		free(l);
}
