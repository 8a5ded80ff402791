#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confine/confine.h"
#include "src/client/errmsg.h"
#include "src/core/wire.h"

static _Thread_local char errmsg[1024];

/* The calling thread's last refusal, where it named a layer. */
static _Thread_local struct {
	bool set;
	int error;
	char layer[64], call[128], hint[512];
} last;

struct refusal {
	char *message, *layer, *call, *hint;
	int call_err;
};

int
bail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errmsg, sizeof(errmsg), fmt, ap);
	va_end(ap);
	last.set = false;
	return -err;
}

void
bail_clear(void)
{
	errmsg[0] = '\0';
	last.set = false;
}

void
refusal_free(struct refusal *r)
{
	if (r == NULL)
		return;
	free(r->message);
	free(r->layer);
	free(r->call);
	free(r->hint);
	free(r);
}

struct refusal *
refusal_new(const struct wire_error *e)
{
	struct refusal *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->call_err = e->call_err;
	if ((r->message = strdup(e->message ? e->message : "")) == NULL ||
	    (r->layer = strdup(e->layer ? e->layer : "")) == NULL ||
	    (r->call = strdup(e->call ? e->call : "")) == NULL ||
	    (r->hint = strdup(e->hint ? e->hint : "")) == NULL) {
		refusal_free(r);
		return NULL;
	}
	return r;
}

int
bail_refusal(int err, const struct refusal *r)
{
	(void)bail(err, "%s", r->message);
	if (r->layer[0] != '\0') {
		last.set = true;
		last.error = r->call_err;
		snprintf(last.layer, sizeof(last.layer), "%s", r->layer);
		snprintf(last.call, sizeof(last.call), "%s", r->call);
		snprintf(last.hint, sizeof(last.hint), "%s", r->hint);
	}
	return -err;
}

const char *
confine_error_message(void)
{
	return errmsg[0] ? errmsg : "no error";
}

int
confine_last_refusal(struct confine_refusal *r)
{
	if (!last.set)
		return -ENOENT;
	r->layer = last.layer;
	r->call = last.call;
	r->error = last.error;
	r->hint = last.hint;
	return 0;
}
