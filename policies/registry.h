/*
 * registry.h - every policy, by name.
 */
#ifndef SB_POLICIES_REGISTRY_H
#define SB_POLICIES_REGISTRY_H

#include "../core/policy.h"

/* NULL-terminated, in the order `schedbed list` prints them. */
extern const struct sb_policy_ops *const sb_policies[];

/* The policy called `name`, or NULL. */
const struct sb_policy_ops *sb_policy_find(const char *name);
/* "serial, stealing, ..." for error messages. */
void sb_policy_names(char *buf, size_t len);
/* The start-up check of a policy list (sb_policies, or a test's): names present and unique, a
 * description, the required ops (submit; create and destroy together), parameter tables
 * well-formed (sb_param_check). 0, or -EINVAL with one line naming the entry. */
int sb_policies_check(const struct sb_policy_ops *const *list, char *err, size_t errlen);

#endif
