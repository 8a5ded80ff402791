/*
 * The gRPC side of confine-bb-runner, C++ behind a C interface
 * (server.cc): Buildbarn's Runner service on a unix socket, each call
 * handed to runner.h. The only C++ of the project.
 */
#ifndef CONFINE_BB_SERVER_H
#define CONFINE_BB_SERVER_H

#include <stddef.h>

#include "bb/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bbserve;

/*
 * Serves r's Runner service on the unix socket path (made with mode), on
 * gRPC's threads, until bbserve_stop. 0, or -1 with why in words.
 */
int bbserve_start(struct bbserve **s, struct bbrun *r, const char *path,
    unsigned mode, char *why, size_t whylen);

/*
 * Stops serving: new calls are refused, every call in flight is cancelled
 * (its job settles Cancelled) and answered; returns once all are. Then
 * releases s.
 */
void bbserve_stop(struct bbserve *s);

#ifdef __cplusplus
}
#endif

#endif
