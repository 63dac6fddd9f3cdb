/*
 * worker.c - the worker threads (core/worker.c): a failure to create one is reported in one
 * clear line with a resource's errno, and no runtime comes up.
 */
#include <sys/resource.h>

#include "../common.h"
Test(faults, thread_creation_failure_is_reported, .timeout = 30)
{
	/* Leave the address space almost full, so worker stacks cannot be mapped. */
	struct rlimit old, lim;
	getrlimit(RLIMIT_AS, &old);
	FILE *f = fopen("/proc/self/statm", "r");
	cr_assert(f);
	unsigned long pages = 0;
	cr_assert_eq(fscanf(f, "%lu", &pages), 1);
	fclose(f);
	lim.rlim_cur = pages * 4096ul + (64ul << 20);
	lim.rlim_max = old.rlim_max;
	cr_assert_eq(setrlimit(RLIMIT_AS, &lim), 0);
	struct sb_config cfg;
	sb_config_default(&cfg);
	cfg.thread_count = 64; /* 64 x 8 MiB stacks cannot fit in 64 MiB (fifo's own queue is small) */
	char err[256] = "";
	struct sb_rt *rt;
	int rc = sb_rt_create(&rt, &cfg, sb_policy_find("fifo"), NULL, err, sizeof err);
	setrlimit(RLIMIT_AS, &old);
	cr_assert_null(rt, "the runtime came up although its threads could not");
	cr_assert(rc < 0 && rc != -EINVAL && rc != -ERANGE, "a resource's errno, not bad input: %d", rc);
	cr_assert(strstr(err, "cannot create worker thread"), "one clear line: %s", err);
	cr_assert_null(strchr(err, '\n'), "one line: %s", err);
}
