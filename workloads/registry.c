/*
 * registry.c - the list of workloads. Adding a workload: its file, and one line here.
 */
#include <stdio.h>
#include <string.h>

#include "workload.h"

extern const struct sb_workload oltp_workload, mixed_workload, forkjoin_workload, wake_workload, tiny_workload,
	load_workload, micro_workload, patterns_workload;

/* oltp first: the default workload */
const struct sb_workload *const sb_workloads[] = {
	&oltp_workload,
	&mixed_workload,
	&forkjoin_workload,
	&wake_workload,
	&tiny_workload,
	&load_workload,
	&micro_workload,
	&patterns_workload,
	NULL,
};

const struct sb_workload *sb_workload_find(const char *name)
{
	for (const struct sb_workload *const *w = sb_workloads; *w; w++)
		if (strcmp((*w)->name, name) == 0)
			return *w;
	return NULL;
}

void sb_workload_names(char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (const struct sb_workload *const *w = sb_workloads; *w && used + 1 < len; w++) {
		int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", (*w)->name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}
