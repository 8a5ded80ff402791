#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helper/backend/policy.h"
#include "src/core/spec.h"

/*
 * The contract's rules, then two deviations (docs/macos-contract.md): writes
 * to /dev/null, which nearly every tool needs, and signals within the job's
 * own sandbox, so a shell can manage its children. Paths arrive only as
 * parameters, so no scratch root can close a string and add a rule.
 * Narrowed, reads and exec are granted per tree; metadata stays readable
 * everywhere, as on Linux (path resolution needs it).
 */
#define SCRATCH_P "(param \"" POLICY_SBPL_SCRATCH "\")"
#define TMP_P "(param \"" POLICY_SBPL_TMP "\")"

static const char sbpl_writes[] =
    "(allow sysctl-read)\n"
    "(allow mach-lookup)\n"
    "(allow signal (target same-sandbox))\n"
    "(allow file-write* (literal \"/dev/null\"))\n"
    "(allow file-write* (subpath " SCRATCH_P "))\n"
    "(allow file-write* (subpath " TMP_P "))\n";

static const char sbpl_narrow[] =
    "(allow file-read* process-exec (literal \"/dev/null\")\n"
    "    (subpath " SCRATCH_P ") (subpath " TMP_P "))\n";

/*
 * What Apple's dyld and a program of the base system read (unverified
 * without a Mac: docs/macos-contract.md). /etc and /var are /private's.
 */
static const char sbpl_system[] =
    "(allow file-read* process-exec\n"
    "    (subpath \"/System\") (subpath \"/usr/lib\") (subpath \"/usr/libexec\")\n"
    "    (subpath \"/usr/share\") (subpath \"/usr/bin\") (subpath \"/usr/sbin\")\n"
    "    (subpath \"/bin\") (subpath \"/sbin\") (subpath \"/Library/Preferences\")\n"
    "    (subpath \"/private/var/db/dyld\") (subpath \"/private/var/db/timezone\")\n"
    "    (literal \"/private/etc/passwd\") (literal \"/private/etc/group\")\n"
    "    (literal \"/private/etc/hosts\") (literal \"/private/etc/localtime\")\n"
    "    (subpath \"/private/etc/ssl\")\n"
    "    (literal \"/dev/zero\") (literal \"/dev/random\") (literal \"/dev/urandom\"))\n";

/*
 * Linux's system trees (CONFINE_READ_SYSTEM): the programs and their
 * libraries, what the loader, libc's locale, time and name services and
 * TLS read in /etc, the toolchains' own files there, /proc (other
 * processes' entries stay behind ptrace's checks), the CPU list that
 * nproc and runtimes read, and the harmless devices. Not /etc as a whole:
 * it holds shadow, ssh host keys and TLS private keys, which a root job
 * without capabilities could still read as their owner.
 */
const char *const policy_system_reads[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/ld.so.preload", "/etc/localtime", "/etc/timezone",
	"/etc/locale.alias", "/etc/locale.conf", "/etc/default/locale",
	"/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/hosts",
	"/etc/host.conf", "/etc/gai.conf", "/etc/resolv.conf",
	"/etc/ssl/certs", "/etc/ssl/openssl.cnf", "/etc/terminfo",
	"/etc/mime.types", "/etc/debian_version", "/etc/*-release",
	"/etc/gitconfig", "/etc/python3*", "/etc/perl",
	"/proc", "/sys/devices/system/cpu",
	"/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
	NULL,
};

struct text {
	char *buf;
	size_t size, len;
	int err;
};

static void __attribute__((format(printf, 2, 3)))
add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->err != 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= t->size - t->len)
		t->err = -ENOSPC;
	else
		t->len += (size_t)n;
}

int
policy_sbpl_profile(const struct policy *p, char *buf, size_t size)
{
	struct text t = { buf, size, 0, 0 };
	size_t i;

	if (p->ndevices > SPEC_MAX_DEVICES || p->nreadable > SPEC_MAX_READABLE ||
	    size == 0)
		return -ENOSPC;
	add(&t, "(version 1)\n(deny default)\n%s(allow process-fork)\n%s%s",
	    p->read_narrow ? "" : "(allow process-exec)\n",
	    p->read_narrow ? "(allow file-read-metadata)\n" : "(allow file-read*)\n",
	    sbpl_writes);
	for (i = 0; i < p->ndevices; i++)
		add(&t, "(allow file-write* (literal (param \"%s%zu\")))\n",
		    POLICY_SBPL_DEVICE, i);
	if (p->read_narrow) {
		add(&t, "%s", sbpl_narrow);
		for (i = 0; i < p->ndevices; i++)
			add(&t, "(allow file-read* (literal (param \"%s%zu\")))\n",
			    POLICY_SBPL_DEVICE, i);
		for (i = 0; i < p->nreadable; i++)
			add(&t, "(allow file-read* process-exec (subpath (param "
			    "\"%s%zu\")))\n", POLICY_SBPL_READ, i);
		if (p->read_system)
			add(&t, "%s", sbpl_system);
	}
	return t.err != 0 ? t.err : (int)t.len;
}

/* Bytes for "NAME=VALUE\0" with an index of up to two digits. */
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
	char profile[16384], **v, *s;
	size_t nv, i, k = 0, bytes;
	int plen;

	*out = NULL;
	plen = policy_sbpl_profile(p, profile, sizeof(profile));
	if (plen < 0)
		return plen;
	/* launcher -p P -D S -D T [-D D]* [-D R]* -- exe argv[1..] NULL */
	nv = 3 + 2 * (2 + p->ndevices + p->nreadable) + 2 + (argc - 1) + 1;
	bytes = (size_t)plen + 1 + param_len(p->scratch) + param_len(tmp);
	for (i = 0; i < p->ndevices; i++)
		bytes += param_len(p->devices[i]);
	for (i = 0; i < p->nreadable; i++)
		bytes += param_len(p->readable[i]);
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
	for (i = 0; i < p->nreadable; i++) {
		v[k++] = (char *)(uintptr_t)"-D";
		v[k++] = s;
		s += sprintf(s, "%s%zu=%s", POLICY_SBPL_READ, i,
		    p->readable[i]) + 1;
	}
	v[k++] = (char *)(uintptr_t)"--";
	v[k++] = (char *)(uintptr_t)exe;
	for (i = 1; i < argc; i++)
		v[k++] = (char *)(uintptr_t)argv[i];
	v[k] = NULL;
	*out = v;
	return 0;
}
