/*
 * json.c - the JSON key/value writers the result files need beyond core/param.h's (which writes
 * parameter blocks, strings with sb_json_string and numbers with sb_json_double).
 *
 * The writers print JSON directly (no document tree): the files are written once, in order.
 */
#include "bench.h"

void bench_json_kv(FILE *f, const char *prefix, const char *s)
{
	fputs(prefix, f);
	sb_json_string(f, s);
}

void bench_json_kn(FILE *f, const char *prefix, double v)
{
	fputs(prefix, f);
	sb_json_double(f, v);
}
