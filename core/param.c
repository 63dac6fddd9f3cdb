/*
 * param.c - parsing, validation and printing of parameter tables (see param.h).
 *
 * Values are parsed strictly: the whole string must be consumed, integers must fit the
 * declared range, booleans are true/false/1/0/yes/no/on/off, enums must name a choice. Every
 * error message names the parameter and the valid range or choices, so the harness can print
 * it as the one line the user sees.
 */
#include "param.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void *field(void *obj, size_t off) { return (char *)obj + off; }
static const void *cfield(const void *obj, size_t off) { return (const char *)obj + off; }

void sb_param_defaults(const struct sb_param *tbl, void *obj)
{
	for (const struct sb_param *p = tbl; p->type != SB_P_END; p++) {
		void *f = field(obj, p->offset);
		switch (p->type) {
		case SB_P_INT: *(int64_t *)f = p->def; break;
		case SB_P_BOOL: *(bool *)f = p->def != 0; break;
		case SB_P_ENUM: *(int *)f = (int)p->def; break;
		case SB_P_DOUBLE: *(double *)f = p->ddef; break;
		case SB_P_STR: *(const char **)f = p->sdef ? p->sdef : ""; break;
		case SB_P_INCLUDE: sb_param_defaults(p->include, f); break;
		case SB_P_END: break;
		}
	}
}

const struct sb_param *sb_param_find(const struct sb_param *tbl, const char *name, size_t *offset)
{
	for (const struct sb_param *p = tbl; p->type != SB_P_END; p++) {
		if (p->type == SB_P_INCLUDE) {
			size_t inner = 0;
			const struct sb_param *q = sb_param_find(p->include, name, &inner);
			if (q) {
				if (offset)
					*offset = p->offset + inner;
				return q;
			}
		} else if (strcmp(p->name, name) == 0) {
			if (offset)
				*offset = p->offset;
			return p;
		}
	}
	return NULL;
}

static void names_into(const struct sb_param *tbl, char *buf, size_t len, size_t *used)
{
	for (const struct sb_param *p = tbl; p->type != SB_P_END; p++) {
		if (p->type == SB_P_INCLUDE) {
			names_into(p->include, buf, len, used);
			continue;
		}
		int n = snprintf(buf + *used, len - *used, "%s%s", *used ? ", " : "", p->name);
		if (n < 0 || (size_t)n >= len - *used) {
			*used = len - 1;
			return;
		}
		*used += (size_t)n;
	}
}

void sb_param_names(const struct sb_param *tbl, char *buf, size_t len)
{
	size_t used = 0;
	if (!len)
		return;
	buf[0] = 0;
	names_into(tbl, buf, len, &used);
	if (used == 0)
		snprintf(buf, len, "(none)");
}

static void choices_into(const char *const *ch, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (; *ch && used + 1 < len; ch++) {
		int n = snprintf(buf + used, len - used, "%s%s", used ? "|" : "", *ch);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

/* Exactly what the listing says, true|false: a yes or a 1 accepted here would be refused by every
 * other reader of the listing (the fuzz, the sweep descriptions). */
static bool parse_bool(const char *v, bool *out)
{
	if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
		return false;
	*out = v[0] == 't';
	return true;
}

/* Levenshtein distance of two names, for "did you mean"; names are short (< 64 bytes). */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[64];
	if (la >= 64 || lb >= 64)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static void nearest_in(const struct sb_param *tbl, const char *name, const char **best, size_t *dist)
{
	for (const struct sb_param *p = tbl; p && p->type != SB_P_END; p++) {
		if (p->type == SB_P_INCLUDE) {
			nearest_in(p->include, name, best, dist);
			continue;
		}
		size_t d = edit_distance(name, p->name);
		if (d < *dist) {
			*dist = d;
			*best = p->name;
		}
	}
}

const char *sb_param_nearest(const struct sb_param *tbl, const char *name, size_t *dist)
{
	const char *best = NULL;
	size_t d = SIZE_MAX;
	nearest_in(tbl, name, &best, &d);
	/* a third of the name's letters wrong (at least one, at most four) is still a typo */
	size_t most = strlen(name) / 3;
	most = most < 1 ? 1 : most > 4 ? 4 : most;
	if (!best || d > most)
		return NULL;
	if (dist)
		*dist = d;
	return best;
}

static int set_int(const struct sb_param *p, int64_t *f, const char *name, const char *value, char *err,
		   size_t errlen)
{
	char *end = NULL;
	errno = 0;
	long long v = strtoll(value, &end, 10);
	if (end == value || *end) {
		snprintf(err, errlen, "parameter '%s': '%s' is not an integer; valid range is %lld..%lld", name, value,
			 (long long)p->min, (long long)p->max);
		return -EINVAL;
	}
	if (errno == ERANGE || v < p->min || v > p->max) {
		snprintf(err, errlen, "parameter '%s': %s is out of range; valid range is %lld..%lld", name, value,
			 (long long)p->min, (long long)p->max);
		return -ERANGE;
	}
	*f = v;
	return 0;
}

static int set_double(const struct sb_param *p, double *f, const char *name, const char *value, char *err,
		      size_t errlen)
{
	char *end = NULL;
	errno = 0;
	double v = strtod(value, &end);
	if (end == value || *end || isnan(v)) {
		snprintf(err, errlen, "parameter '%s': '%s' is not a number; valid range is %g..%g", name, value, p->dmin, p->dmax);
		return -EINVAL;
	}
	if (errno == ERANGE || v < p->dmin || v > p->dmax) {
		snprintf(err, errlen, "parameter '%s': %s is out of range; valid range is %g..%g", name, value, p->dmin, p->dmax);
		return -ERANGE;
	}
	*f = v;
	return 0;
}

static int set_enum(const struct sb_param *p, int *f, const char *name, const char *value, char *err, size_t errlen)
{
	for (int i = 0; p->choices[i]; i++) {
		if (strcmp(p->choices[i], value) == 0) {
			*f = i;
			return 0;
		}
	}
	char ch[512];
	choices_into(p->choices, ch, sizeof ch);
	snprintf(err, errlen, "parameter '%s': '%s' is not a valid choice; valid choices are %s", name, value, ch);
	return -EINVAL;
}

int sb_param_set(const struct sb_param *tbl, void *obj, const char *name, const char *value,
		 char *err, size_t errlen)
{
	size_t off = 0;
	const struct sb_param *p = sb_param_find(tbl, name, &off);
	if (!p) {
		const char *near = sb_param_nearest(tbl, name, NULL);
		char names[2048];
		sb_param_names(tbl, names, sizeof names);
		if (near)
			snprintf(err, errlen, "unknown parameter '%s'; did you mean '%s'?", name, near);
		else
			snprintf(err, errlen, "unknown parameter '%s'; valid parameters are: %s", name, names);
		return -ENOENT;
	}
	void *f = field(obj, off);
	/* an empty text is a value (topology's default); an empty number or choice is not */
	if (!value || (!*value && p->type != SB_P_STR)) {
		snprintf(err, errlen, "parameter '%s' needs a value", name);
		return -EINVAL;
	}
	switch (p->type) {
	case SB_P_INT:
		return set_int(p, f, name, value, err, errlen);
	case SB_P_BOOL:
		if (!parse_bool(value, f)) {
			snprintf(err, errlen, "parameter '%s': '%s' is not a boolean; valid values are true|false", name, value);
			return -EINVAL;
		}
		return 0;
	case SB_P_ENUM:
		return set_enum(p, f, name, value, err, errlen);
	case SB_P_DOUBLE:
		return set_double(p, f, name, value, err, errlen);
	case SB_P_STR:
		/* The string is borrowed: parameters are set from argv, which outlives the run. */
		*(const char **)f = value;
		return 0;
	case SB_P_INCLUDE:
	case SB_P_END:
		break;
	}
	snprintf(err, errlen, "parameter '%s' cannot be set", name);
	return -EINVAL;
}

/* The scope a prefixed name names ("policy.x" -> the policy's), or NULL after writing why. */
static const struct sb_param_scope *by_prefix(const struct sb_param_scope *sc, size_t n, const char *name,
					      size_t plen, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(sc[i].prefix) == plen && strncmp(name, sc[i].prefix, plen) == 0) {
			if (!sc[i].tbl) {
				snprintf(err, errlen, "%s has no parameters", sc[i].label);
				return NULL;
			}
			return &sc[i];
		}
	size_t used = (size_t)snprintf(err, errlen, "unknown prefix '%.*s'; valid prefixes are", (int)plen, name);
	for (size_t i = 0; i < n && used < errlen; i++)
		used += (size_t)snprintf(err + used, errlen - used, "%s %s.", i ? "," : "", sc[i].prefix);
	return NULL;
}

/* "unknown parameter 'x'; valid parameters are: core: a, b; policy hybrid: c" */
static void unknown(const struct sb_param_scope *sc, size_t n, const char *name, char *err, size_t errlen)
{
	size_t used = (size_t)snprintf(err, errlen, "unknown parameter '%s'; valid parameters are: ", name);
	for (size_t i = 0; i < n && used < errlen; i++) {
		char names[2048] = "(none)";
		if (sc[i].tbl)
			sb_param_names(sc[i].tbl, names, sizeof names);
		used += (size_t)snprintf(err + used, errlen - used, "%s%s: %s", i ? "; " : "", sc[i].label, names);
	}
}

int sb_param_route(const struct sb_param_scope *sc, size_t n, const char *arg, void **stored, char *err,
		   size_t errlen)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg) {
		snprintf(err, errlen, "expected NAME=VALUE, e.g. thread_count=4");
		return -EINVAL;
	}
	char name[256];
	if ((size_t)(eq - arg) >= sizeof name) {
		snprintf(err, errlen, "parameter name '%.40s...' is too long", arg);
		return -EINVAL;
	}
	snprintf(name, sizeof name, "%.*s", (int)(eq - arg), arg);
	const char *value = eq + 1, *pname = name, *dot = strchr(name, '.');
	const struct sb_param_scope *hit = NULL;
	if (dot) {
		if (!(hit = by_prefix(sc, n, name, (size_t)(dot - name), err, errlen)))
			return -EINVAL;
		pname = dot + 1;
	} else {
		for (size_t i = 0; i < n; i++) {
			if (!sc[i].tbl || !sb_param_find(sc[i].tbl, name, NULL))
				continue;
			if (hit) {
				snprintf(err, errlen, "parameter '%s' exists in %s and %s; write %s.%s=%s or %s.%s=%s", name,
					 hit->label, sc[i].label, hit->prefix, name, value, sc[i].prefix, name, value);
				return -EINVAL;
			}
			hit = &sc[i];
		}
		if (!hit) {
			unknown(sc, n, name, err, errlen);
			return -ENOENT;
		}
	}
	char why[2048];
	int r = sb_param_set(hit->tbl, hit->obj, pname, value, why, sizeof why);
	if (r) {
		snprintf(err, errlen, "%s: %s", hit->label, why);
		return r;
	}
	size_t off = 0;
	sb_param_find(hit->tbl, pname, &off);
	if (stored)
		*stored = field(hit->obj, off);
	return 0;
}

/* Bytes a parameter's field takes in its block. */
static size_t field_size(enum sb_param_type t)
{
	switch (t) {
	case SB_P_INT: return sizeof(int64_t);
	case SB_P_BOOL: return sizeof(bool);
	case SB_P_ENUM: return sizeof(int);
	case SB_P_DOUBLE: return sizeof(double);
	case SB_P_STR: return sizeof(const char *);
	default: return 0;
	}
}

/* One entry's own checks (not its name's uniqueness). */
static bool entry_ok(const struct sb_param *p, size_t base, size_t size, char *err, size_t errlen)
{
	size_t nch = 0;
	if (p->type == SB_P_ENUM)
		for (; p->choices && p->choices[nch]; nch++)
			;
	if (!p->name || !*p->name)
		snprintf(err, errlen, "an entry at offset %zu has no name", base + p->offset);
	else if (p->type > SB_P_INCLUDE)
		snprintf(err, errlen, "parameter '%s' has no valid type", p->name);
	else if (p->type == SB_P_INCLUDE && !p->include)
		snprintf(err, errlen, "parameter '%s' includes no table", p->name);
	else if (base + p->offset + field_size(p->type) > size)
		snprintf(err, errlen, "parameter '%s' lies outside its %zu-byte block", p->name, size);
	else if ((p->type == SB_P_INT || p->type == SB_P_BOOL) && !(p->min <= p->def && p->def <= p->max))
		snprintf(err, errlen, "parameter '%s': default %lld is outside %lld..%lld", p->name, (long long)p->def,
			 (long long)p->min, (long long)p->max);
	else if (p->type == SB_P_DOUBLE && !(p->dmin <= p->ddef && p->ddef <= p->dmax))
		snprintf(err, errlen, "parameter '%s': default %g is outside %g..%g", p->name, p->ddef, p->dmin, p->dmax);
	else if (p->type == SB_P_ENUM && (p->def < 0 || (size_t)p->def >= nch))
		snprintf(err, errlen, "parameter '%s': default choice %lld is not one of its %zu choices", p->name,
			 (long long)p->def, nch);
	else
		return true;
	return false;
}

static int check_into(const struct sb_param *top, const struct sb_param *tbl, size_t base, size_t size,
		      char *err, size_t errlen)
{
	for (const struct sb_param *p = tbl; p->type != SB_P_END; p++) {
		if (!entry_ok(p, base, size, err, errlen))
			return -EINVAL;
		if (p->type == SB_P_INCLUDE) {
			int r = check_into(top, p->include, base + p->offset, size, err, errlen);
			if (r)
				return r;
			continue;
		}
		/* sb_param_find returns the first entry of a name: a later one could never be set */
		size_t off = 0;
		if (sb_param_find(top, p->name, &off) != p || off != base + p->offset) {
			snprintf(err, errlen, "parameter '%s' appears twice", p->name);
			return -EINVAL;
		}
	}
	return 0;
}

int sb_param_check(const struct sb_param *tbl, size_t size, char *err, size_t errlen)
{
	return tbl ? check_into(tbl, tbl, 0, size, err, errlen) : 0;
}

int sb_param_check_entry(const char *kind, const char *name, const char *bad, const struct sb_param *tbl,
			 size_t size, char *err, size_t errlen)
{
	char why[512];
	if (bad)
		snprintf(err, errlen, "%s %s %s", kind, name && *name ? name : "(no name)", bad);
	else if (sb_param_check(tbl, size, why, sizeof why))
		snprintf(err, errlen, "%s %s: %s", kind, name, why);
	else
		return 0;
	return -EINVAL;
}

static void print_one(const struct sb_param *p, FILE *f, const char *indent)
{
	char range[512];
	char def[128];
	switch (p->type) {
	case SB_P_INT:
		snprintf(def, sizeof def, "%lld", (long long)p->def);
		snprintf(range, sizeof range, "%lld..%lld", (long long)p->min, (long long)p->max);
		break;
	case SB_P_BOOL:
		snprintf(def, sizeof def, "%s", p->def ? "true" : "false");
		snprintf(range, sizeof range, "true|false");
		break;
	case SB_P_ENUM:
		snprintf(def, sizeof def, "%s", p->choices[p->def]);
		choices_into(p->choices, range, sizeof range);
		break;
	case SB_P_DOUBLE:
		snprintf(def, sizeof def, "%g", p->ddef);
		snprintf(range, sizeof range, "%g..%g", p->dmin, p->dmax);
		break;
	case SB_P_STR:
		snprintf(def, sizeof def, "\"%s\"", p->sdef ? p->sdef : "");
		snprintf(range, sizeof range, "text");
		break;
	default:
		return;
	}
	fprintf(f, "%s%-40s default %-10s range %-20s %s\n", indent, p->name, def, range, p->help ? p->help : "");
}

/* Every parameter of tbl to one line printer; included tables in place when `includes`. */
static void print_each(const struct sb_param *tbl, FILE *f, const char *arg, bool includes,
		       void (*one)(const struct sb_param *, FILE *, const char *))
{
	for (const struct sb_param *p = tbl; p->type != SB_P_END; p++) {
		if (p->type == SB_P_INCLUDE) {
			if (includes)
				print_each(p->include, f, arg, true, one);
		} else {
			one(p, f, arg);
		}
	}
}

void sb_param_print(const struct sb_param *tbl, FILE *f, const char *indent, bool includes)
{
	print_each(tbl, f, indent, includes, print_one);
}

static void tsv_one(const struct sb_param *p, FILE *f, const char *scope)
{
	char ch[512] = "";
	fprintf(f, "%s\t%s\t", scope, p->name);
	switch (p->type) {
	case SB_P_INT:
		fprintf(f, "int\t%lld\t%lld\t%lld\t", (long long)p->def, (long long)p->min, (long long)p->max);
		break;
	case SB_P_BOOL:
		fprintf(f, "bool\t%s\t\t\ttrue|false", p->def ? "true" : "false");
		break;
	case SB_P_ENUM:
		choices_into(p->choices, ch, sizeof ch);
		fprintf(f, "enum\t%s\t\t\t%s", p->choices[p->def], ch);
		break;
	case SB_P_DOUBLE:
		/* %.17g: read back, the printed numbers are the table's exactly */
		fprintf(f, "double\t%.17g\t%.17g\t%.17g\t", p->ddef, p->dmin, p->dmax);
		break;
	case SB_P_STR:
		fprintf(f, "text\t%s\t\t\t", p->sdef ? p->sdef : "");
		break;
	default:
		return;
	}
	fputc('\n', f);
}

void sb_param_print_tsv(const struct sb_param *tbl, FILE *f, const char *scope)
{
	print_each(tbl, f, scope, true, tsv_one);
}

void sb_json_string(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void sb_json_double(FILE *f, double v)
{
	/* JSON has no NaN or infinity; a rate over an empty window is "no value" */
	if (!isfinite(v)) {
		fputs("null", f);
		return;
	}
	if (v == floor(v) && fabs(v) < 9e15) { /* whole numbers as integers: 150791, not 1.50791e+05 */
		fprintf(f, "%.0f", v);
		return;
	}
	/* the shortest form that reads back as the same double: 0.1, not %.17g's 0.10000000000000001 */
	char buf[40];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, f);
}

static void json_into(const struct sb_param *tbl, const void *obj, FILE *f, const char *indent, bool *first)
{
	for (const struct sb_param *p = tbl; p->type != SB_P_END; p++) {
		const void *v = cfield(obj, p->offset);
		if (p->type == SB_P_INCLUDE) {
			json_into(p->include, v, f, indent, first);
			continue;
		}
		fprintf(f, "%s%s\"%s\": ", *first ? "" : ",\n", indent, p->name);
		*first = false;
		switch (p->type) {
		case SB_P_INT: fprintf(f, "%lld", (long long)*(const int64_t *)v); break;
		case SB_P_BOOL: fprintf(f, "%s", *(const bool *)v ? "true" : "false"); break;
		case SB_P_ENUM: sb_json_string(f, p->choices[*(const int *)v]); break;
		case SB_P_DOUBLE: sb_json_double(f, *(const double *)v); break;
		case SB_P_STR: sb_json_string(f, *(const char *const *)v); break;
		default: break;
		}
	}
}

void sb_param_json(const struct sb_param *tbl, const void *obj, FILE *f, const char *indent)
{
	bool first = true;
	json_into(tbl, obj, f, indent, &first);
	if (!first)
		fputc('\n', f);
}

size_t sb_param_count(const struct sb_param *tbl)
{
	size_t n = 0;
	for (const struct sb_param *p = tbl; p->type != SB_P_END; p++)
		n += p->type == SB_P_INCLUDE ? sb_param_count(p->include) : 1;
	return n;
}
