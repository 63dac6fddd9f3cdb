/*
 * txn.c - transactions: the sticky word, the transaction lock and the transaction map.
 *
 * Sticky word (memo 000, jogasaki's worker_manager): one 64-bit atomic, upper 32 bits = sticky
 * tasks of the transaction queued or running, lower 32 bits = the worker they are bound to
 * (all ones when unbound). A policy binds with sb_txn_bind() when it places a sticky task; the
 * core unbinds when that task's run ends. While the count is above zero every new sticky task
 * goes to the bound worker.
 *
 * Transaction lock: recursive, like jogasaki's std::recursive_mutex, because a hybrid serial
 * job holds it for its whole run on the request thread while its own sticky tasks take it
 * again there. A futex mutex (0 free, 1 held, 2 held with waiters) plus an owner pointer.
 *
 * Transaction map: liburcu's rculfhash keyed by id (memb flavour, every core thread is
 * registered). liburcu's own atomics are invisible to ThreadSanitizer, so the entry's txn
 * pointer is published with a C11 release store and read with an acquire load: that pair is
 * the happens-before edge the sanitizer sees, and the one this code relies on. Entries are
 * freed through call_rcu after removal.
 */
#include <stdlib.h>

#include <urcu/urcu-memb.h>
#include <urcu/rculfhash.h>

#include "thread.h"

#define TXN_UNBOUND 0xffffffffull

struct txn_entry {
	struct cds_lfht_node node;
	struct rcu_head rcu;
	uint64_t key;
	_Atomic(struct sb_txn *) x; /* release-published, see the file comment */
};
SB_ASSERT_MALLOC_ALIGNED(struct txn_entry);
SB_ASSERT_MALLOC_ALIGNED(struct sb_txn);

int sb_txn_map_init(struct sb_rt *rt)
{
	rt->txns = cds_lfht_new_flavor(64, 64, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING, &urcu_memb_flavor, NULL);
	return rt->txns ? 0 : -1;
}

static void free_entry(struct rcu_head *h)
{
	struct txn_entry *e = caa_container_of(h, struct txn_entry, rcu);
	/* acquire: pairs with the release in sb_txn_end; orders the free after every use the
	 * ending thread knew about */
	struct sb_txn *x = atomic_load_explicit(&e->x, memory_order_acquire);
	free(x);
	free(e);
}

void sb_txn_map_fini(struct sb_rt *rt)
{
	if (!rt->txns)
		return;
	/* Transactions the workload never ended are removed here, freed after the iteration
	 * (through call_rcu) and waited for with the barrier; no reader is left by now. */
	struct cds_lfht_iter it;
	struct cds_lfht_node *n;
	bool reg = !sb_self; /* the destroying thread may have detached already */
	if (reg)
		sb_exec_rcu_register();
	urcu_memb_read_lock();
	cds_lfht_for_each(rt->txns, &it, n) {
		struct txn_entry *e = caa_container_of(n, struct txn_entry, node);
		if (!cds_lfht_del(rt->txns, n)) {
			struct sb_txn *x = atomic_load_explicit(&e->x, memory_order_acquire);
			sb_policy_txn_fini(rt, x);
			/* release: pairs with the acquire in free_entry (see sb_txn_end) */
			atomic_store_explicit(&e->x, x, memory_order_release);
			urcu_memb_call_rcu(&e->rcu, free_entry);
		}
	}
	urcu_memb_read_unlock();
	urcu_memb_barrier();
	cds_lfht_destroy(rt->txns, NULL);
	if (reg)
		sb_exec_rcu_unregister();
	rt->txns = NULL;
}

static unsigned long hash_id(uint64_t id)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdull;
	id ^= id >> 33;
	return (unsigned long)id;
}

static int match(struct cds_lfht_node *n, const void *key)
{
	return caa_container_of(n, struct txn_entry, node)->key == *(const uint64_t *)key;
}

struct sb_txn *sb_txn_begin(struct sb_rt *rt, uint64_t id)
{
	sb_tc(); /* must be an attached thread: it is registered with RCU */
	struct sb_txn *x = calloc(1, sizeof *x);
	struct txn_entry *e = calloc(1, sizeof *e);
	if (!x || !e) {
		fprintf(stderr, "%s:%d: out of memory allocating a transaction\n", __FILE__, __LINE__);
		abort();
	}
	atomic_init(&x->sticky, TXN_UNBOUND);
	x->rt = rt;
	if (sb_policy_txn_init(rt, x) != 0) {
		fprintf(stderr, "%s:%d: policy %s could not set up transaction %llu\n", __FILE__, __LINE__,
			rt->ops->name, (unsigned long long)id);
		abort();
	}
	/* release: the fields above are visible to whoever reads the id with acquire */
	atomic_store_explicit(&x->id, id, memory_order_release);
	e->key = id;
	x->hnode = &e->node;
	cds_lfht_node_init(&e->node);
	/* release: publishes the txn to finders (see the file comment) */
	atomic_store_explicit(&e->x, x, memory_order_release);
	urcu_memb_read_lock();
	struct cds_lfht_node *old = cds_lfht_add_unique(rt->txns, hash_id(id), match, &id, &e->node);
	urcu_memb_read_unlock();
	if (old != &e->node) {
		fprintf(stderr, "%s:%d: transaction id %llu is already in use\n", __FILE__, __LINE__,
			(unsigned long long)id);
		abort();
	}
	return x;
}

struct sb_txn *sb_txn_find(struct sb_rt *rt, uint64_t id)
{
	struct cds_lfht_iter it;
	struct sb_txn *x = NULL;
	urcu_memb_read_lock();
	cds_lfht_lookup(rt->txns, hash_id(id), match, &id, &it);
	struct cds_lfht_node *n = cds_lfht_iter_get_node(&it);
	if (n) {
		/* acquire: pairs with the release store in sb_txn_begin */
		x = atomic_load_explicit(&caa_container_of(n, struct txn_entry, node)->x, memory_order_acquire);
	}
	urcu_memb_read_unlock();
	return x;
}

void sb_txn_end(struct sb_txn *x)
{
	struct sb_rt *rt = x->rt;
	struct txn_entry *e = caa_container_of(x->hnode, struct txn_entry, node);
	if (rt->cfg.check && (atomic_load_explicit(&x->sticky, memory_order_relaxed) >> 32))
		sb_fail(rt, "transaction %llu ended with sticky tasks still queued or running",
			(unsigned long long)sb_txn_id(x));
	sb_policy_txn_fini(rt, x);
	urcu_memb_read_lock();
	int gone = cds_lfht_del(rt->txns, &e->node);
	urcu_memb_read_unlock();
	if (gone) {
		fprintf(stderr, "%s:%d: transaction %llu ended twice\n", __FILE__, __LINE__,
			(unsigned long long)sb_txn_id(x));
		abort();
	}
	/* release: pairs with the acquire in free_entry */
	atomic_store_explicit(&e->x, x, memory_order_release);
	urcu_memb_call_rcu(&e->rcu, free_entry);
}

uint64_t sb_txn_id(const struct sb_txn *x)
{
	return atomic_load_explicit(&((struct sb_txn *)x)->id, memory_order_relaxed);
}

void *sb_txn_pdata(const struct sb_txn *x)
{
	return x->pdata;
}

void sb_txn_set_pdata(struct sb_txn *x, void *p)
{
	x->pdata = p;
}

/* ---- sticky word ---- */

unsigned sb_txn_bind(struct sb_task *t, unsigned candidate)
{
	struct sb_txn *x = t->txn;
	/* relaxed: the CAS below re-reads */
	uint64_t w = atomic_load_explicit(&x->sticky, memory_order_relaxed);
	for (;;) {
		uint64_t cnt = w >> 32;
		uint64_t nw = cnt == 0 ? ((uint64_t)1 << 32) | candidate : w + ((uint64_t)1 << 32);
		/* acq_rel: bind/unbind form one total order per transaction */
		if (atomic_compare_exchange_weak_explicit(&x->sticky, &w, nw, memory_order_acq_rel,
							  memory_order_relaxed)) {
			t->flags |= SB_TF_BOUND;
			return cnt == 0 ? candidate : (unsigned)(w & 0xffffffffu);
		}
	}
}

void sb_txn_unbind(struct sb_txn *x)
{
	uint64_t w = atomic_load_explicit(&x->sticky, memory_order_relaxed);
	for (;;) {
		uint64_t cnt = w >> 32;
		uint64_t nw = cnt <= 1 ? TXN_UNBOUND : w - ((uint64_t)1 << 32);
		if (cnt == 0) {
			sb_fail(x->rt, "invariant 'sticky count' violated: transaction %llu unbound below zero",
				(unsigned long long)sb_txn_id(x));
			return;
		}
		/* acq_rel: see sb_txn_bind */
		if (atomic_compare_exchange_weak_explicit(&x->sticky, &w, nw, memory_order_acq_rel,
							  memory_order_relaxed))
			return;
	}
}

/* ---- the transaction lock ---- */

bool sb_txn_try_lock_as(struct sb_thread *tc, struct sb_txn *x)
{
	/* relaxed: only this thread ever stores itself as owner */
	if (atomic_load_explicit(&x->owner, memory_order_relaxed) == tc) {
		x->depth++;
		return true;
	}
	uint32_t z = 0;
	/* acquire: pairs with the release in sb_txn_unlock */
	if (atomic_compare_exchange_strong_explicit(&x->lock, &z, 1, memory_order_acquire, memory_order_relaxed)) {
		atomic_store_explicit(&x->owner, tc, memory_order_relaxed);
		x->depth = 1;
		return true;
	}
	return false;
}

bool sb_txn_try_lock(struct sb_txn *x)
{
	return sb_txn_try_lock_as(sb_tc(), x);
}

void sb_txn_lock(struct sb_thread *tc, struct sb_txn *x)
{
	if (sb_txn_try_lock_as(tc, x))
		return;
	for (int i = 0; i < 100; i++) {
		sb_cpu_relax();
		if (sb_txn_try_lock_as(tc, x))
			return;
	}
	/* acquire: pairs with the release in sb_txn_unlock */
	while (atomic_exchange_explicit(&x->lock, 2, memory_order_acquire) != 0)
		sb_exec_park(&x->lock, 2, 0);
	atomic_store_explicit(&x->owner, tc, memory_order_relaxed);
	x->depth = 1;
}

void sb_txn_unlock(struct sb_txn *x)
{
	if (--x->depth)
		return;
	atomic_store_explicit(&x->owner, NULL, memory_order_relaxed);
	/* release: the holder's work happens before the next holder's acquire */
	if (atomic_exchange_explicit(&x->lock, 0, memory_order_release) == 2)
		sb_exec_unpark(&x->lock, 1);
}
