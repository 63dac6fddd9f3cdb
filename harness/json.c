/*
 * json.c - the two JSON value writers the result files need: strings and numbers.
 *
 * The writers print JSON directly (no document tree): the files are written once, in order.
 * Parameter values are written by core/param.h's sb_param_json; this covers everything else.
 */
#include <math.h>

#include "bench.h"

void bench_json_str(FILE *f, const char *s)
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
	bench_json_str(f, s);
}

void bench_json_kn(FILE *f, const char *prefix, double v)
{
	fputs(prefix, f);
	bench_json_num(f, v);
}
