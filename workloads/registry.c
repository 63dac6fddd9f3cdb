/*
 * registry.c - the list of workloads, and its start-up check. Adding a workload: its file, and
 * one line here.
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

int sb_workloads_check(const struct sb_workload *const *list, char *err, size_t errlen)
{
	for (const struct sb_workload *const *p = list; *p; p++) {
		const struct sb_workload *w = *p;
		const char *bad = !w->name || !*w->name ? "has no name"
				  : !w->description ? "has no description"
				  : !w->classes || !w->classes[0] ? "has no job classes"
				  : !w->start || !w->done || !w->stop || !w->counts || !w->destroy
					  ? "lacks one of start, done, stop, counts, destroy" : NULL;
		for (const struct sb_workload *const *q = list; !bad && q < p; q++)
			if (!strcmp((*q)->name, w->name))
				bad = "is registered twice";
		int e = sb_param_check_entry("workload", w->name, bad, w->params, w->params_size, err, errlen);
		if (e)
			return e;
	}
	return 0;
}
