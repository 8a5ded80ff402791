/* Small descriptor helpers shared by the client and the helper. */
#ifndef CONFINE_FD_H
#define CONFINE_FD_H

#include <stddef.h>
#include <sys/types.h>
#include <unistd.h>

int fd_cloexec(int fd);
int fd_nonblock(int fd);

/* A pipe and a unix stream socketpair, both ends close-on-exec. */
int fd_pipe(int fds[2]);
int fd_socketpair(int fds[2]);
/* A socket of domain and type, close-on-exec: the descriptor or -errno.
 * Sockets of both (the library's and the helper's own, never a job's)
 * raise no SIGPIPE where the system can say so per socket (macOS, which
 * has no MSG_NOSIGNAL): a write to a gone peer is EPIPE. */
int fd_socket(int domain, int type);

/*
 * Closes every descriptor that is not in keep[0..n). Safe after fork: no
 * allocation. keep may hold -1 entries, which are ignored.
 */
void fd_close_except(const int *keep, size_t n);

/* Whole-buffer read and write, retried on EINTR. Return 0 or -errno;
 * fd_read_full gives -EPIPE on end of file before len bytes. */
int fd_read_full(int fd, void *buf, size_t len);
/*
 * A small file (a /proc one) at path from dir (or AT_FDCWD), in one read
 * of at most size - 1 bytes, NUL-terminated in buf: its length, or -1
 * (errno set; 0 bytes is -1 too, errno EIO).
 */
ssize_t fd_read_small(int dir, const char *path, char *buf, size_t size);
int fd_write_full(int fd, const void *buf, size_t len);

/*
 * sendmsg with up to 16 descriptors riding on the first byte; returns bytes
 * sent or -errno. recvmsg that keeps at most maxfds descriptors in fds
 * (close-on-exec where the system can) and closes any beyond: *nfds says
 * how many were kept, *excess whether any were closed or truncated.
 * Returns bytes read, 0 at end of file, or -errno.
 */
ssize_t fd_send_with(int fd, const void *buf, size_t len, const int *fds,
    size_t nfds);
ssize_t fd_recv_with(int fd, void *buf, size_t len, int flags, int *fds,
    size_t maxfds, size_t *nfds, int *excess);

/* Closes *fd if it is open and sets it to -1, keeping errno. */
void fd_closep(int *fd);

#endif
