#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/policy.h"
#include "src/spec.h"

/*
 * The contract's rules, then two deviations (docs/macos-contract.md): writes
 * to /dev/null, which nearly every tool needs, and signals within the job's
 * own sandbox, so a shell can manage its children. Paths arrive only as
 * parameters, so no scratch root can close a string and add a rule.
 */
static const char sbpl_head[] =
    "(version 1)\n"
    "(deny default)\n"
    "(allow process-exec)\n"
    "(allow process-fork)\n"
    "(allow file-read*)\n"
    "(allow sysctl-read)\n"
    "(allow mach-lookup)\n"
    "(allow signal (target same-sandbox))\n"
    "(allow file-write* (literal \"/dev/null\"))\n"
    "(allow file-write* (subpath (param \"" POLICY_SBPL_SCRATCH "\")))\n"
    "(allow file-write* (subpath (param \"" POLICY_SBPL_TMP "\")))\n";

int
policy_sbpl_profile(size_t ndevices, char *buf, size_t size)
{
	size_t len = sizeof(sbpl_head) - 1, i;
	int n;

	if (ndevices > SPEC_MAX_DEVICES || size <= len)
		return -ENOSPC;
	memcpy(buf, sbpl_head, len + 1);
	for (i = 0; i < ndevices; i++) {
		n = snprintf(buf + len, size - len,
		    "(allow file-write* (literal (param \"%s%zu\")))\n",
		    POLICY_SBPL_DEVICE, i);
		if (n < 0 || (size_t)n >= size - len)
			return -ENOSPC;
		len += (size_t)n;
	}
	return (int)len;
}

/* Bytes for "NAME=VALUE\0" with a device index of up to two digits. */
static size_t
param_len(const char *value)
{
	return sizeof(POLICY_SBPL_DEVICE) + 2 + 1 + strlen(value) + 1;
}

int
policy_sbpl_argv(const struct policy *p, const char *launcher,
    const char *exe, const char *const *argv, size_t argc, char ***out)
{
	const char *tmp = p->tmp != NULL ? p->tmp : p->scratch;
	char profile[4096], **v, *s;
	size_t nv, i, k = 0, bytes;
	int plen;

	*out = NULL;
	plen = policy_sbpl_profile(p->ndevices, profile, sizeof(profile));
	if (plen < 0)
		return plen;
	/* launcher -p P -D S -D T [-D D]* -- exe argv[1..] NULL */
	nv = 3 + 2 * (2 + p->ndevices) + 2 + (argc - 1) + 1;
	bytes = (size_t)plen + 1 + param_len(p->scratch) + param_len(tmp);
	for (i = 0; i < p->ndevices; i++)
		bytes += param_len(p->devices[i]);
	if (bytes > SIZE_MAX / 2 - nv * sizeof(*v))
		return -ENOMEM;
	v = malloc(nv * sizeof(*v) + bytes);
	if (v == NULL)
		return -ENOMEM;
	s = (char *)(v + nv);
	v[k++] = (char *)(uintptr_t)launcher;
	v[k++] = (char *)(uintptr_t)"-p";
	v[k++] = memcpy(s, profile, (size_t)plen + 1);
	s += plen + 1;
	v[k++] = (char *)(uintptr_t)"-D";
	v[k++] = s;
	s += sprintf(s, "%s=%s", POLICY_SBPL_SCRATCH, p->scratch) + 1;
	v[k++] = (char *)(uintptr_t)"-D";
	v[k++] = s;
	s += sprintf(s, "%s=%s", POLICY_SBPL_TMP, tmp) + 1;
	for (i = 0; i < p->ndevices; i++) {
		v[k++] = (char *)(uintptr_t)"-D";
		v[k++] = s;
		s += sprintf(s, "%s%zu=%s", POLICY_SBPL_DEVICE, i,
		    p->devices[i]) + 1;
	}
	v[k++] = (char *)(uintptr_t)"--";
	v[k++] = (char *)(uintptr_t)exe;
	for (i = 1; i < argc; i++)
		v[k++] = (char *)(uintptr_t)argv[i];
	v[k] = NULL;
	*out = v;
	return 0;
}
