/*
 * The Buildbarn runner benchmark's gRPC side (bb_grpc.cc), C++ behind a C
 * interface: a client of the Runner service, and a plain runner to set
 * confine-bb-runner beside, which runs each action as bb_runner does,
 * posix_spawn and wait4, confining nothing.
 */
#ifndef CONFINE_TOOLS_BENCH_BB_GRPC_H
#define CONFINE_TOOLS_BENCH_BB_GRPC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bbg_client;

/* A client of the runner on socket_path, once it answers (60 s at most). */
struct bbg_client *bbg_connect(const char *socket_path);
void bbg_close(struct bbg_client *c);

/*
 * One Run of argv in action directory act of the build directory (its
 * root/ and tmp/; stdout and stderr made in act, named after n). 0 with
 * *exit_code, or -1 with the status in msg.
 */
int bbg_run(struct bbg_client *c, const char *act, int n,
    const char *const *argv, int64_t *exit_code, char *msg, size_t len);

/*
 * Serves the plain runner on socket_path for build_dir until SIGTERM:
 * argv[0] must be absolute. Returns main's exit status.
 */
int bbg_plain_runner(const char *socket_path, const char *build_dir);

#ifdef __cplusplus
}
#endif

#endif
