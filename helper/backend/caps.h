/*
 * No capability for the job (Linux). A root helper's job would otherwise
 * keep every one: rename the machine, set its clock, load modules. The
 * bounding set goes first (it needs CAP_SETPCAP, which goes with the
 * rest), so that exec can give none back, not even to a root uid or a
 * file with capabilities; then the permitted, effective, inheritable and
 * ambient sets. In the job's process, after fork; no allocation.
 */
#ifndef CONFINE_CAPS_H
#define CONFINE_CAPS_H

/* Empties the bounding set. Returns 0 or -errno. */
int caps_drop_bounding(void);
/* Empties every other set. Returns 0 or -errno. */
int caps_clear(void);

#endif
