/* The fixture's probes of what could reach past a job (tests/probes.c). */
#ifndef CONFINE_PROBES_H
#define CONFINE_PROBES_H

/* socket32's exit when int 0x80 faults: the kernel has no IA-32 entry. */
#define FIXTURE_NO_IA32 200

int probe_meta(int argc, char **argv);     /* meta OP PATH */
int probe_setid(int argc, char **argv);    /* setid OP PATH */
int probe_host(int argc, char **argv);     /* host OP */
int probe_surface(int argc, char **argv);  /* surface OP */
int probe_proc(int argc, char **argv);     /* proc OP self|child|PID [ARG] */
int probe_pair(int argc, char **argv);     /* pair OP [PATH] */
int probe_caps(int argc, char **argv);     /* caps: prints the five sets */
int probe_creds(int argc, char **argv);    /* creds: prints ids and groups */
int probe_ipc(int argc, char **argv);      /* ipc OP ARG */
int probe_loop(int argc, char **argv);     /* loop KIND [ADDR] */

#endif
