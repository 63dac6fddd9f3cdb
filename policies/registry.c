/*
 * registry.c - the list of policies, and its start-up check. Adding a policy: its file, and one
 * line here.
 */
#include "registry.h"

#include <stdio.h>
#include <string.h>

extern const struct sb_policy_ops serial_ops, stealing_ops, hybrid_ops, fifo_ops;
extern const struct sb_policy_ops distribution_ops, lanes_ops, txslot_ops;
extern const struct sb_policy_ops global_ops, priority_ops;

const struct sb_policy_ops *const sb_policies[] = {
	&serial_ops,
	&stealing_ops,
	&hybrid_ops,
	&distribution_ops,
	&lanes_ops,
	&txslot_ops,
	&fifo_ops,
	&global_ops,
	&priority_ops,
	NULL,
};

const struct sb_policy_ops *sb_policy_find(const char *name)
{
	for (const struct sb_policy_ops *const *p = sb_policies; *p; p++)
		if (strcmp((*p)->name, name) == 0)
			return *p;
	return NULL;
}

void sb_policy_names(char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (const struct sb_policy_ops *const *p = sb_policies; *p && used + 1 < len; p++) {
		int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", (*p)->name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

int sb_policies_check(const struct sb_policy_ops *const *list, char *err, size_t errlen)
{
	for (const struct sb_policy_ops *const *p = list; *p; p++) {
		const struct sb_policy_ops *o = *p;
		const char *bad = !o->name || !*o->name ? "has no name"
				  : !o->description ? "has no description"
				  : !o->submit ? "has no submit"
				  : !o->create != !o->destroy ? "has create or destroy without the other" : NULL;
		for (const struct sb_policy_ops *const *q = list; !bad && q < p; q++)
			if (!strcmp((*q)->name, o->name))
				bad = "is registered twice";
		int e = sb_param_check_entry("policy", o->name, bad, o->params, o->params_size, err, errlen);
		if (e)
			return e;
	}
	return 0;
}
