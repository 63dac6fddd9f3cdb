/*
 * helper.c - starting and stopping a helper thread (helper.h has the protocol).
 */
#include "helper.h"

#include <stdio.h>
#include <string.h>

int sb_helper_start(struct sb_helper *h, const char *name, void *(*fn)(void *), void *arg, char *err,
		    size_t errlen)
{
	/* relaxed: the thread's creation orders these before its first read */
	atomic_store_explicit(&h->stop, false, memory_order_relaxed);
	int e = sb_exec_thread_start(&h->th, name, fn, arg);
	if (e) {
		snprintf(err, errlen, "cannot create the %s thread: %s", name, strerror(-e));
		return e;
	}
	h->started = true;
	return 0;
}

void sb_helper_stop(struct sb_helper *h)
{
	if (!h->started)
		return;
	/* relaxed: published by the kick's release increment (H2) */
	atomic_store_explicit(&h->stop, true, memory_order_relaxed);
	sb_helper_kick(h);
	sb_exec_thread_join(&h->th);
	h->started = false;
}
