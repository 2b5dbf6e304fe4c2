/* The floor of `benches/compare.sh`: the least a hook runner can do to run one hook.
 *
 *   cc -O2 -o floor benches/floor.c && ./floor "$PAYLOAD"
 *
 * posix_spawn `/bin/sh -c true` with its stdin, stdout and stderr on three pipes, write the payload
 * (argv[1]: the ~1 KB that the benchmark gives ka-hooks with
 * `--input`) to its stdin and close it, drain stdout and stderr with
 * a poll loop until both reach EOF, then waitpid. No configuration, no parsing, no output. Exits 0
 * when the child exits 0, 1 on any failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int fail(const char *what) {
  perror(what);
  return 1;
}

int main(int argc, char **argv) {
  const char *payload = argc > 1 ? argv[1] : "";
  size_t payload_len = strlen(payload);
  /* A hook that exits early must not kill the runner with SIGPIPE. */
  signal(SIGPIPE, SIG_IGN);

  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
    return fail("pipe2");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  char *child_argv[] = {"sh", "-c", "true", NULL};
  pid_t pid;
  int rc = posix_spawn(&pid, "/bin/sh", &fa, NULL, child_argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    errno = rc;
    return fail("posix_spawn");
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);

  int stdin_fd = in[1];
  fcntl(stdin_fd, F_SETFL, O_NONBLOCK);
  size_t written = 0;
  if (payload_len == 0) {
    close(stdin_fd);
    stdin_fd = -1;
  }
  struct pollfd fds[3] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}, {stdin_fd, POLLOUT, 0}};
  int open_readers = 2;
  char buf[4096];
  while (open_readers > 0 || fds[2].fd >= 0) {
    if (poll(fds, 3, -1) < 0) {
      if (errno == EINTR)
        continue;
      return fail("poll");
    }
    for (int i = 0; i < 2; i++) {
      if (fds[i].fd >= 0 && fds[i].revents) {
        ssize_t n = read(fds[i].fd, buf, sizeof buf);
        if (n <= 0 && !(n < 0 && (errno == EINTR || errno == EAGAIN))) {
          close(fds[i].fd);
          fds[i].fd = -1;
          open_readers--;
        }
      }
    }
    if (fds[2].fd >= 0 && fds[2].revents) {
      ssize_t n = write(fds[2].fd, payload + written, payload_len - written);
      if (n > 0)
        written += (size_t)n;
      if ((n < 0 && errno != EINTR && errno != EAGAIN) || written == payload_len) {
        close(fds[2].fd);
        fds[2].fd = -1;
      }
    }
  }
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return fail("waitpid");
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
