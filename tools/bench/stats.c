/*
 * Samples and their percentiles; every result as a row, kept for the
 * targets and written as one TSV that tools/bench/plot reads.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench/bench.h"

int
stats_add(struct samples *s, double x)
{
	double *v;
	size_t cap;

	if (s->n == s->cap) {
		cap = s->cap ? s->cap * 2 : 64;
		v = realloc(s->v, cap * sizeof(*v));
		if (v == NULL)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = x;
	return 0;
}

void
stats_free(struct samples *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Nearest rank: the value below which pct percent of the samples lie. */
static double
rank(const struct samples *s, double pct)
{
	size_t k = (size_t)(pct / 100.0 * (double)s->n + 0.999999);

	if (k < 1)
		k = 1;
	if (k > s->n)
		k = s->n;
	return s->v[k - 1];
}

void
stats_summary(struct samples *s, struct summary *o)
{
	double sum = 0;
	size_t i;

	memset(o, 0, sizeof(*o));
	o->n = s->n;
	if (s->n == 0)
		return;
	qsort(s->v, s->n, sizeof(*s->v), cmp);
	for (i = 0; i < s->n; i++)
		sum += s->v[i];
	o->p50 = rank(s, 50);
	o->p90 = rank(s, 90);
	o->p99 = rank(s, 99);
	o->min = s->v[0];
	o->max = s->v[s->n - 1];
	o->mean = sum / (double)s->n;
}

/* ---- rows ---- */

static struct row *rows;
static size_t nrows, caprows;

struct row *
stats_row(const char *section, const char *method, const char *variant,
    long host_mib, long threads, long jobs, const struct summary *s,
    const char *unit)
{
	struct row *r;
	size_t cap;

	if (nrows == caprows) {
		cap = caprows ? caprows * 2 : 128;
		r = realloc(rows, cap * sizeof(*r));
		if (r == NULL) {
			fprintf(stderr, "bench: out of memory for results\n");
			exit(1);
		}
		rows = r;
		caprows = cap;
	}
	r = &rows[nrows++];
	memset(r, 0, sizeof(*r));
	snprintf(r->section, sizeof(r->section), "%s", section);
	snprintf(r->method, sizeof(r->method), "%s", method);
	snprintf(r->variant, sizeof(r->variant), "%s", variant);
	snprintf(r->unit, sizeof(r->unit), "%s", unit);
	r->host_mib = host_mib;
	r->threads = threads;
	r->jobs = jobs;
	r->s = *s;
	return r;
}

struct row *
stats_value(const char *section, const char *method, const char *variant,
    long host_mib, long threads, long jobs, double value, const char *unit)
{
	struct summary s = { 1, value, value, value, value, value, value };

	return stats_row(section, method, variant, host_mib, threads, jobs, &s,
	    unit);
}

static int
str_ok(const char *want, const char *have)
{
	return want == NULL || strcmp(want, have) == 0;
}

const struct row *
stats_find(const char *section, const char *method, const char *variant,
    long host_mib, long threads, long jobs)
{
	size_t i;

	for (i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];

		if (str_ok(section, r->section) && str_ok(method, r->method) &&
		    str_ok(variant, r->variant) &&
		    (host_mib < 0 || host_mib == r->host_mib) &&
		    (threads < 0 || threads == r->threads) &&
		    (jobs < 0 || jobs == r->jobs))
			return r;
	}
	return NULL;
}

int
stats_write_tsv(const char *path)
{
	FILE *f = fopen(path, "w");
	size_t i;

	if (f == NULL) {
		fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "section\tmethod\tvariant\thost_mib\tthreads\tjobs\tn\t"
	    "p50\tp90\tp99\tmin\tmax\tmean\tunit\n");
	for (i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];

		fprintf(f, "%s\t%s\t%s\t%ld\t%ld\t%ld\t%zu\t%.3f\t%.3f\t%.3f\t"
		    "%.3f\t%.3f\t%.3f\t%s\n", r->section, r->method,
		    r->variant[0] ? r->variant : "-", r->host_mib, r->threads,
		    r->jobs, r->s.n, r->s.p50, r->s.p90, r->s.p99, r->s.min,
		    r->s.max, r->s.mean, r->unit);
	}
	if (fclose(f) != 0) {
		fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

void
stats_reset(void)
{
	free(rows);
	rows = NULL;
	nrows = caprows = 0;
}

void
stats_title(const char *fmt, ...)
{
	va_list ap;

	printf("\n== ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void
stats_line(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}
