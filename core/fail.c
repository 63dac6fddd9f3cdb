/*
 * fail.c - how a run fails: the first failure (a check-mode violation, a stall, a policy's
 * answer out of range) is kept, printed once, and read back through sb_rt_failure. A leaf that
 * every core file may call.
 */
#include <stdarg.h>
#include <stdio.h>

#include "rt.h"

void sb_fail(struct sb_rt *rt, const char *fmt, ...)
{
	/* acq_rel: one thread writes the message */
	if (atomic_exchange_explicit(&rt->fail_claim, 1, memory_order_acq_rel))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rt->failure, sizeof rt->failure, fmt, ap);
	va_end(ap);
	/* release: pairs with the acquire in sb_rt_failure, which then reads the text */
	atomic_store_explicit(&rt->failed, 1, memory_order_release);
	fprintf(stderr, "schedbed: %s\n", rt->failure);
}

const char *sb_rt_failure(const struct sb_rt *rt)
{
	/* acquire: pairs with the release in sb_fail, which wrote the text first */
	return atomic_load_explicit(&((struct sb_rt *)rt)->failed, memory_order_acquire) ? rt->failure : NULL;
}
