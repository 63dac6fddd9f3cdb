/*
 * json.c - the JSON value writers the result files need beyond core/param.h's (which writes
 * parameter blocks and strings, sb_json_string): numbers, and key/value pairs.
 *
 * The writers print JSON directly (no document tree): the files are written once, in order.
 */
#include <math.h>

#include "bench.h"

void bench_json_num(FILE *f, double v)
{
	/* JSON has no NaN or infinity; a rate over an empty window is "no value" */
	if (!isfinite(v))
		fputs("null", f);
	else if (v == floor(v) && fabs(v) < 9e15)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.10g", v);
}

void bench_json_kv(FILE *f, const char *prefix, const char *s)
{
	fputs(prefix, f);
	sb_json_string(f, s);
}

void bench_json_kn(FILE *f, const char *prefix, double v)
{
	fputs(prefix, f);
	bench_json_num(f, v);
}
