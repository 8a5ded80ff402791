#include <stdarg.h>
#include <stdio.h>

#include "confine/confine.h"
#include "src/errmsg.h"

static _Thread_local char errmsg[256];

int
bail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errmsg, sizeof(errmsg), fmt, ap);
	va_end(ap);
	return -err;
}

void
bail_clear(void)
{
	errmsg[0] = '\0';
}

const char *
confine_error_message(void)
{
	return errmsg[0] ? errmsg : "no error";
}
