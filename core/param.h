/*
 * param.h - named parameters: one table format for the core, every policy and every workload.
 *
 * A table is an array of struct sb_param ending with {0}. Each entry names a field of a plain
 * struct (by offset), its type, default, valid range and a one-line help. The same table
 * fills defaults, parses `name=value`, validates, prints `schedbed list` and writes meta.json,
 * so a parameter exists in exactly one place. SB_P_INCLUDE splices another table in at an
 * offset (hybrid's parameters are stealing's plus one).
 *
 * Not thread-safe and not meant to be: parameters are parsed before any thread starts.
 */
#ifndef SB_PARAM_H
#define SB_PARAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum sb_param_type { SB_P_END = 0, SB_P_INT, SB_P_BOOL, SB_P_ENUM, SB_P_DOUBLE, SB_P_STR, SB_P_INCLUDE };

struct sb_param {
	const char *name;
	enum sb_param_type type;
	size_t offset;              /* of the field in the parameter struct */
	int64_t def, min, max;      /* INT, BOOL (0/1), ENUM (index into choices) */
	double ddef, dmin, dmax;    /* DOUBLE */
	const char *sdef;           /* STR */
	const char *const *choices; /* ENUM: NULL-terminated */
	const char *help;
	const struct sb_param *include; /* INCLUDE */
};

#define SB_PARAM_INT(st, f, d, lo, hi, h) \
	{ .name = #f, .type = SB_P_INT, .offset = offsetof(st, f), .def = (d), .min = (lo), .max = (hi), .help = (h) }
#define SB_PARAM_BOOL(st, f, d, h) \
	{ .name = #f, .type = SB_P_BOOL, .offset = offsetof(st, f), .def = (d), .min = 0, .max = 1, .help = (h) }
#define SB_PARAM_ENUM(st, f, d, ch, h) \
	{ .name = #f, .type = SB_P_ENUM, .offset = offsetof(st, f), .def = (d), .choices = (ch), .help = (h) }
#define SB_PARAM_DOUBLE(st, f, d, lo, hi, h) \
	{ .name = #f, .type = SB_P_DOUBLE, .offset = offsetof(st, f), .ddef = (d), .dmin = (lo), .dmax = (hi), .help = (h) }
#define SB_PARAM_STR(st, f, d, h) \
	{ .name = #f, .type = SB_P_STR, .offset = offsetof(st, f), .sdef = (d), .help = (h) }
#define SB_PARAM_INCLUDE(st, f, tbl) \
	{ .name = #f, .type = SB_P_INCLUDE, .offset = offsetof(st, f), .include = (tbl) }
#define SB_PARAM_END { 0 }

/* Write every default into `obj`. */
void sb_param_defaults(const struct sb_param *tbl, void *obj);
/* Find a parameter by name (searching included tables). */
const struct sb_param *sb_param_find(const struct sb_param *tbl, const char *name, size_t *offset);
/*
 * Parse and store one `value` for `name`. Returns 0, or -ENOENT for an unknown name and
 * -EINVAL / -ERANGE for a bad value; in every error case `err` gets one line naming the
 * parameter and what is valid.
 */
int sb_param_set(const struct sb_param *tbl, void *obj, const char *name, const char *value,
		 char *err, size_t errlen);
/* One table a `name=value` may reach (the core's, a policy's, a workload's) and the block it
 * fills. */
struct sb_param_scope {
	const char *prefix;         /* "core": the name may be written core.NAME */
	const char *label;          /* for messages: "policy hybrid" */
	const struct sb_param *tbl; /* NULL: no parameters */
	void *obj;
};
/*
 * Route one `name=value` (or `prefix.name=value`) to the one scope whose table has the name and
 * set it there: the only place that decides where a setting goes. Returns 0 with *stored (when
 * stored is not NULL) at the parameter's storage; -ENOENT when no scope has the name (err lists
 * every scope's parameters); -EINVAL for a setting without '=', an unknown prefix or a name two
 * scopes have (err says how to write it); or sb_param_set's error, prefixed with the scope.
 */
int sb_param_route(const struct sb_param_scope *sc, size_t n, const char *arg, void **stored, char *err,
		   size_t errlen);
/*
 * Check a table: names present and unique (included tables too), defaults inside their ranges,
 * enum choices present, and every field inside a block of `size` bytes. 0, or -EINVAL with one
 * line naming the entry.
 */
int sb_param_check(const struct sb_param *tbl, size_t size, char *err, size_t errlen);
/* One registry entry's start-up verdict (the policy and workload registries): `bad`, what is wrong
 * with the entry (NULL: nothing), else its table's sb_param_check. 0, or -EINVAL with one line
 * "KIND NAME ...". */
int sb_param_check_entry(const char *kind, const char *name, const char *bad, const struct sb_param *tbl,
			 size_t size, char *err, size_t errlen);
/* The parameter whose name is closest to `name` (a typo away: a few letters added, dropped or
 * changed), or NULL when none is; *dist (may be NULL) gets how many letters differ. */
const char *sb_param_nearest(const struct sb_param *tbl, const char *name, size_t *dist);
/* Comma-separated names, for "valid parameters are: ..." messages. */
void sb_param_names(const struct sb_param *tbl, char *buf, size_t len);
/* One line per parameter: name, type, default, range, help. `indent` prefixes each line.
 * `includes` false leaves out included tables (the caller names them once instead). */
void sb_param_print(const struct sb_param *tbl, FILE *f, const char *indent, bool includes);
/* The same, machine-readable, included tables in place: one line per parameter, tab-separated:
 * scope, name, type (int|double|bool|enum|text), default, min, max (numbers only), choices (bool
 * and enum, '|'-separated). Numbers are printed exactly (%.17g for doubles). */
void sb_param_print_tsv(const struct sb_param *tbl, FILE *f, const char *scope);
/* `"name": value` members for a JSON object (no braces), values taken from `obj`. */
void sb_param_json(const struct sb_param *tbl, const void *obj, FILE *f, const char *indent);
/* A JSON string literal for s (escaped; NULL is written as null). */
void sb_json_string(FILE *f, const char *s);
/* A double as JSON: null when not finite, whole numbers as integers, anything else in the
 * shortest form that reads back exactly (0.1 rather than 0.10000000000000001). */
void sb_json_double(FILE *f, double v);
/* Count entries (after includes), for tests. */
size_t sb_param_count(const struct sb_param *tbl);

#endif
