/*
 * exec_none.c - the SimGrid executor's entry points in a program built without SimGrid
 * (make NOSIM=1): a build for a machine that only runs natively, such as a cluster's compute
 * nodes or a lent many-core machine, whose carried libraries then leave out SimGrid and the
 * dozen libraries it loads. `--executor sim` says so and exits as a usage error; nothing else
 * changes.
 */
#include <errno.h>
#include <stdio.h>

#include "../core/exec.h"

int sb_sim_run(const char *costs_path, unsigned cores, const char *const *policies, const char *policy,
	       int (*body)(void *), void *arg, char *err, size_t errlen)
{
	(void)costs_path, (void)cores, (void)policies, (void)policy, (void)body, (void)arg;
	snprintf(err, errlen, "this schedbed was built without the SimGrid executor (make NOSIM=1): "
			      "--executor native is the one it has; build without NOSIM for --executor sim");
	return -EINVAL;
}

bool sb_sim_built(void)
{
	return false;
}

/* never called: sb_sim_run never starts a simulation here */
const char *sb_sim_platform(void)
{
	return "";
}

double sb_sim_cost(enum sb_cost c)
{
	(void)c;
	return 0.0;
}

void sb_sim_shared_line(struct sb_sim_line *out)
{
	*out = (struct sb_sim_line){ 0 };
}

uint64_t sb_sim_cpu_ns(void)
{
	return 0;
}

void sb_sim_preemptions(uint64_t *workers, uint64_t *clients)
{
	*workers = *clients = 0;
}

const char *sb_sim_costs_version(void)
{
	return "";
}
