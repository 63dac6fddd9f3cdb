/*
 * helper.h - a helper thread of the runtime (the watcher, the monitor): one start, one stop and
 * one wake-up protocol for both, so their memory orders are one set.
 *
 * The protocol is an eventcount on `seq`. The helper's loop takes a snapshot of seq
 * (sb_helper_next), looks for work, and parks while seq still equals the snapshot
 * (sb_helper_wait). Whoever gives it something to do publishes that first and then bumps seq
 * (sb_helper_kick); the stop does the same with the stop flag. A kick after the snapshot makes
 * the park return at once, a kick before it is seen by the work that follows the snapshot: no
 * wake-up and no stop is lost, whatever the park's timeout.
 */
#ifndef SB_HELPER_H
#define SB_HELPER_H

#include <stdatomic.h>
#include <stdbool.h>

#include "exec.h"

struct sb_helper {
	struct sb_xthread th;
	_Atomic uint32_t seq; /* futex word: bumped by every kick and by the stop */
	_Atomic bool stop;    /* this helper exits (the workers' flag is rt->stopping, apart) */
	bool started;
};

/* Start fn(arg) as helper `name`. 0, or -errno with one line in err. */
int sb_helper_start(struct sb_helper *h, const char *name, void *(*fn)(void *), void *arg, char *err,
		    size_t errlen);
/* Stop the helper and join it; nothing when it was never started (or is stopped already). */
void sb_helper_stop(struct sb_helper *h);

/* The top of the helper's loop: the snapshot for sb_helper_wait, and false once stopped. */
static inline bool sb_helper_next(struct sb_helper *h, uint32_t *seq)
{
	/* (H1) acquire: pairs with the release increment (H2) in sb_helper_kick, which follows
	 * what the kicker published (a conditional task queued, the stop flag) */
	*seq = atomic_load_explicit(&h->seq, memory_order_acquire);
	/* relaxed: read after (H1); a stop this misses bumped seq after the snapshot, so the
	 * helper's next park returns at once and the next round sees it */
	return !atomic_load_explicit(&h->stop, memory_order_relaxed);
}

/* Park while seq equals the snapshot, at most timeout_ns (0: until kicked). */
static inline void sb_helper_wait(struct sb_helper *h, uint32_t seq, uint64_t timeout_ns)
{
	sb_exec_park(&h->seq, seq, timeout_ns);
}

/* Something for the helper was published: wake it. */
static inline void sb_helper_kick(struct sb_helper *h)
{
	/* (H2) release: pairs with the acquire (H1) in sb_helper_next */
	atomic_fetch_add_explicit(&h->seq, 1, memory_order_release);
	sb_exec_unpark(&h->seq, 1);
}

#endif
