/*
 * deque.h - sb_deque, the owner-private growable work-stealing deque (a split deque after
 * Lace: van Dijk and van de Pol, "Lace: non-blocking split deque for work-stealing", 2014).
 * Included through queue.h; its cold paths (growth) are in queue.c.
 *
 * The array holds one worker's tasks between `tail` (oldest) and `head` (newest). A split point
 * divides it: [tail, split) is the *shared* part, which thieves take from the tail end with a
 * CAS; [split, head) is the *private* part, which only the owner touches. The owner pushes and
 * pops at the head with plain loads and stores: no locked instruction and no fence. Thieves
 * that find the shared part empty raise `splitreq`; the owner, at its next push or pop, moves
 * the split up and publishes the older half of its private tasks (at least one). When the owner
 * has no private task left it takes back the newer half of the shared part with one CAS, or the
 * last shared task with a thief's CAS: the only place where owner and thieves race. The tail only
 * grows, and a slot is reused only after the tail has passed it, so a (tail, split) word that
 * comes back to an old value never hides a changed slot (no ABA).
 *
 *   op                 who           cost
 *   sb_deque_push      owner         plain stores (+ one CAS when it publishes)
 *   sb_deque_pop       owner         plain loads (+ one CAS when the private part is empty
 *                                    and the shared part is not, or when it publishes)
 *   sb_deque_steal     anyone        one CAS on success
 *   sb_deque_len       anyone        two relaxed loads; approximate
 *
 * Concurrency: push || steal, pop || steal, steal || steal; push and pop by the owner only.
 *
 * tail and split share one 64-bit word (`ts`: tail in the low 32 bits, split in the high 32),
 * so a thief's CAS that advances the tail also checks that the split did not move under it,
 * and the owner's CAS that moves the split also checks the tail. Indices are 32-bit and wrap;
 * every comparison is on differences, so the array (at most 2^30 slots) can be used for ever.
 *
 * Growth: a push that finds the array full copies the live range into an array twice as large
 * and publishes it (release); the old array is kept, chained to the new one, until
 * sb_deque_fini, so a thief still reading it reads valid memory. The old arrays add up to less
 * than the current one, so the deque never holds more than twice its largest live size.
 *
 * Publication: the owner's CAS that moves the split up is a release, paired with the thieves'
 * acquire load of `ts`; so a thief that sees a task in the shared part sees the slot and the
 * task's fields. A thief that takes slot i from an array that the owner has since replaced (or
 * a slot the owner has since reused) fails its CAS, because the tail moved past i first.
 *
 * What "private" costs: a task that is private is invisible to thieves until the owner's next
 * push or pop. A worker that runs a long task while the siblings it spawned are private keeps
 * them to itself for that long, unless they were published when spawned: the caller passes
 * `eager` (some worker is idle, sb_nidle) to publish at once, as Lace publishes on request.
 */
#ifndef SB_QUEUE_H
#error "include queue.h, not deque.h"
#endif
#ifndef SB_DEQUE_H
#define SB_DEQUE_H

enum { SB_STEAL_OK, SB_STEAL_EMPTY, SB_STEAL_RETRY };

struct sb_deque_buf {
	struct sb_deque_buf *older; /* the array this one replaced (kept until fini) */
	uint32_t mask;
	_Atomic(struct sb_task *) slot[];
};

struct sb_deque {
	/* shared: thieves CAS ts and raise splitreq; the owner moves the split */
	_Alignas(SB_CACHELINE) _Atomic uint64_t ts;   /* tail | split << 32 */
	_Atomic uint32_t splitreq;                     /* a thief found the shared part empty */
	/* read by thieves: the current array, replaced by the owner when it grows */
	_Alignas(SB_CACHELINE) _Atomic(struct sb_deque_buf *) buf;
	_Atomic uint32_t head;                         /* owner writes (relaxed), sb_deque_len reads */
	/* owner-private */
	_Alignas(SB_CACHELINE) struct sb_deque_buf *obuf; /* == buf */
	uint32_t omask;                                /* == obuf->mask, one dependent load less */
	uint32_t osplit;                               /* == the split in ts */
	uint32_t otail;                                /* a tail the owner saw: <= the real tail */
	uint64_t nr_publish;                           /* times the split moved up (owner counts) */
};
_Static_assert(offsetof(struct sb_deque, obuf) % SB_CACHELINE == 0, "owner-private state on its own line");

static inline uint32_t sb_ts_tail(uint64_t ts) { return (uint32_t)ts; }
static inline uint32_t sb_ts_split(uint64_t ts) { return (uint32_t)(ts >> 32); }
static inline uint64_t sb_ts(uint32_t tail, uint32_t split) { return (uint64_t)split << 32 | tail; }

/* 0 or -ENOMEM. The array starts with 2^log2cap slots and doubles as needed. */
int sb_deque_init(struct sb_deque *d, unsigned log2cap);
void sb_deque_fini(struct sb_deque *d);
/* Owner, cold: double the array (0 or -ENOMEM; the deque is unchanged on failure). */
int sb_deque_grow(struct sb_deque *d);

/* Owner: move the split up over the older half of the private part (at least one task).
 * Returns true: the caller must tell the core that work became available. */
static __attribute__((noinline, cold)) bool sb_deque_publish(struct sb_deque *d)
{
	uint32_t h = atomic_load_explicit(&d->head, memory_order_relaxed);
	uint32_t s = d->osplit;
	if (h == s)
		return false; /* nothing private to give */
	uint32_t ns = s + (h - s + 1) / 2;
	/* relaxed: the request is served by this publication; a thief that raises it again after
	 * this store finds the tasks published below or asks again */
	atomic_store_explicit(&d->splitreq, 0, memory_order_relaxed);
	uint64_t old = atomic_load_explicit(&d->ts, memory_order_relaxed);
	/* release: publishes the slots [s, ns) and their tasks' fields; pairs with the acquire load
	 * of ts in sb_deque_steal. Only thieves change ts meanwhile (the tail), so this retries
	 * only when a steal lands between the load and the CAS. */
	while (!atomic_compare_exchange_weak_explicit(&d->ts, &old, sb_ts(sb_ts_tail(old), ns), memory_order_release,
						      memory_order_relaxed))
		;
	d->osplit = ns;
	d->nr_publish++;
	return true;
}

/* Owner. `eager`: publish now (some worker is idle). Returns 1 when tasks were published (the
 * caller tells the core), 0 when not, -ENOMEM when the array could not grow (t not queued). */
static inline __attribute__((always_inline)) int sb_deque_push(struct sb_deque *d, struct sb_task *t, bool eager)
{
	uint32_t h = atomic_load_explicit(&d->head, memory_order_relaxed);
	if (__builtin_expect(h - d->otail > d->omask, 0)) {
		/* acquire: pairs with the thieves' CAS on ts, so the slots they took are free again */
		d->otail = sb_ts_tail(atomic_load_explicit(&d->ts, memory_order_acquire));
		if (h - d->otail > d->omask && sb_deque_grow(d))
			return -ENOMEM;
	}
	/* relaxed: the slot is private until the split moves over it (release, above) */
	atomic_store_explicit(&d->obuf->slot[h & d->omask], t, memory_order_relaxed);
	/* relaxed: head is owner-written; others read it only for length estimates */
	atomic_store_explicit(&d->head, h + 1, memory_order_relaxed);
	/* acquire: pairs with the thief's release store of the request, so that what the thief did
	 * before asking (a sleeper announcing itself suspended) is visible to the wake-up check the
	 * caller makes after publishing. A request seen late is served at the next push or pop. */
	if (__builtin_expect(eager || atomic_load_explicit(&d->splitreq, memory_order_acquire), 0))
		return sb_deque_publish(d);
	return 0;
}

/* Owner, cold: the private part is empty; take back the newer half of the shared part and
 * return the newest, or NULL when thieves took everything. The last shared task is taken as a
 * thief takes one, by advancing the tail: so a slot is only ever reused after the tail has
 * passed it, and a thief's CAS that read (tail, split) earlier cannot succeed on a slot that
 * was emptied and refilled while the word came back to the same value (ABA). */
static __attribute__((noinline, cold)) struct sb_task *sb_deque_pop_shared(struct sb_deque *d)
{
	/* acquire: pairs with the thieves' CAS, as in sb_deque_push */
	uint64_t old = atomic_load_explicit(&d->ts, memory_order_acquire);
	uint32_t tl, s = d->osplit;
	for (;;) {
		tl = sb_ts_tail(old);
		if (tl == s) {
			d->otail = tl;
			return NULL;
		}
		struct sb_deque_buf *b = d->obuf;
		if (s - tl == 1) {
			struct sb_task *t = atomic_load_explicit(&b->slot[tl & b->mask], memory_order_relaxed);
			/* acquire: as above. The same CAS as a thief's: exactly one of us gets it */
			if (atomic_compare_exchange_weak_explicit(&d->ts, &old, sb_ts(tl + 1, s), memory_order_acquire,
								  memory_order_acquire)) {
				d->otail = tl + 1;
				return t;
			}
			continue;
		}
		uint32_t ns = tl + (s - tl) / 2; /* > tl: slot tl stays shared */
		/* acquire: as above. Fails when a thief advanced the tail meanwhile */
		if (atomic_compare_exchange_weak_explicit(&d->ts, &old, sb_ts(tl, ns), memory_order_acquire,
							  memory_order_acquire)) {
			d->osplit = ns;
			d->otail = tl;
			uint32_t h = s - 1;
			atomic_store_explicit(&d->head, h, memory_order_relaxed);
			return atomic_load_explicit(&b->slot[h & b->mask], memory_order_relaxed);
		}
	}
}

/* Owner: the newest task (LIFO), or NULL. *published is set when the pop served a thief's
 * request by publishing (the caller tells the core that work became available). */
static inline __attribute__((always_inline)) struct sb_task *sb_deque_pop(struct sb_deque *d, bool *published)
{
	uint32_t h = atomic_load_explicit(&d->head, memory_order_relaxed);
	if (__builtin_expect(h == d->osplit, 0))
		return sb_deque_pop_shared(d);
	h--;
	struct sb_task *t = atomic_load_explicit(&d->obuf->slot[h & d->omask], memory_order_relaxed);
	atomic_store_explicit(&d->head, h, memory_order_relaxed);
	/* acquire: as in push */
	if (__builtin_expect(atomic_load_explicit(&d->splitreq, memory_order_acquire), 0))
		*published = sb_deque_publish(d);
	return t;
}

/* Anyone: take the oldest shared task. */
static inline int sb_deque_steal(struct sb_deque *d, struct sb_task **out)
{
	/* acquire: pairs with the owner's release CAS in sb_deque_publish */
	uint64_t old = atomic_load_explicit(&d->ts, memory_order_acquire);
	uint32_t tl = sb_ts_tail(old), s = sb_ts_split(old);
	if ((int32_t)(s - tl) <= 0) {
		/* release: pairs with the owner's acquire load in push and pop (a suspending thief
		 * is counted suspended before it asks). The load first keeps an idle thief from
		 * writing the owner's line over and over (relaxed: only a filter). */
		if (!atomic_load_explicit(&d->splitreq, memory_order_relaxed))
			atomic_store_explicit(&d->splitreq, 1, memory_order_release);
		return SB_STEAL_EMPTY;
	}
	/* acquire: pairs with the release store of a grown array in sb_deque_grow */
	struct sb_deque_buf *b = atomic_load_explicit(&d->buf, memory_order_acquire);
	struct sb_task *t = atomic_load_explicit(&b->slot[tl & b->mask], memory_order_relaxed);
	/* acq_rel: claims slot tl against other thieves and the owner's take-back; the release
	 * half hands the slot back to the owner (its acquire loads of ts) */
	if (!atomic_compare_exchange_strong_explicit(&d->ts, &old, sb_ts(tl + 1, s), memory_order_acq_rel,
						     memory_order_relaxed))
		return SB_STEAL_RETRY;
	*out = t;
	return SB_STEAL_OK;
}

/* Steal, retrying lost races until the shared part is seen empty. */
static inline struct sb_task *sb_deque_take(struct sb_deque *d)
{
	struct sb_task *t = NULL;
	int r;
	while ((r = sb_deque_steal(d, &t)) == SB_STEAL_RETRY)
		;
	return r == SB_STEAL_OK ? t : NULL;
}

/* Approximate length (private and shared), any thread. */
static inline size_t sb_deque_len(struct sb_deque *d)
{
	uint32_t h = atomic_load_explicit(&d->head, memory_order_relaxed);
	uint32_t tl = sb_ts_tail(atomic_load_explicit(&d->ts, memory_order_relaxed));
	return (int32_t)(h - tl) > 0 ? (size_t)(h - tl) : 0;
}

/* Tasks thieves can take now (the shared part), any thread; approximate. */
static inline size_t sb_deque_shared(struct sb_deque *d)
{
	uint64_t ts = atomic_load_explicit(&d->ts, memory_order_relaxed);
	int32_t n = (int32_t)(sb_ts_split(ts) - sb_ts_tail(ts));
	return n > 0 ? (size_t)n : 0;
}

#endif
