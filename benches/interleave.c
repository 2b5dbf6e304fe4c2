/* The timing loop of `benches/compare.sh`: every command, interleaved.
 *
 *   cc -O2 -o interleave benches/interleave.c
 *   ./interleave ROUNDS STDIN_FILE LABEL CMD [ARG...] ::: LABEL CMD [ARG...] ::: ...
 *
 * Timing each command in one series after another (as hyperfine does) lets a small shared
 * machine drift between series by more than the difference being measured. This runs round after round of all
 * the commands in turn (each posix_spawned by absolute path, stdin from STDIN_FILE, stdout and
 * stderr on /dev/null, timed from spawn to waitpid), after 20 untimed rounds, so every command
 * sees the same drift. It prints one line per command: label, median ms, 10th and 90th
 * percentile ms, median × the first command's median. Exits 1 when a command cannot be started or
 * exits non-zero.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_COMMANDS 32
#define WARMUP 20

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Run argv once; its time in ms, or -1 when it cannot start or fails. */
static double run_once(char **argv, const char *stdin_file, int devnull) {
  int in = open(stdin_file, O_RDONLY | O_CLOEXEC);
  if (in < 0)
    return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in, 0);
  posix_spawn_file_actions_adddup2(&fa, devnull, 1);
  posix_spawn_file_actions_adddup2(&fa, devnull, 2);
  pid_t pid;
  int status;
  double start = now_ms();
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  if (rc == 0 && waitpid(pid, &status, 0) < 0)
    rc = -1;
  double elapsed = now_ms() - start;
  posix_spawn_file_actions_destroy(&fa);
  close(in);
  if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return -1;
  return elapsed;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s ROUNDS STDIN_FILE LABEL CMD [ARG...] [::: LABEL CMD ...]\n", argv[0]);
    return 1;
  }
  char *end;
  long rounds_arg = strtol(argv[1], &end, 10);
  if (*end || rounds_arg < 10 || rounds_arg > 1000000) {
    fprintf(stderr, "interleave: ROUNDS must be a number from 10 to 1000000, not %s\n", argv[1]);
    return 1;
  }
  int rounds = (int)rounds_arg;
  const char *stdin_file = argv[2];
  char *labels[MAX_COMMANDS];
  char **commands[MAX_COMMANDS];
  int n = 0;
  for (int i = 3; i < argc;) {
    if (n == MAX_COMMANDS) {
      fprintf(stderr, "interleave: more than %d commands\n", MAX_COMMANDS);
      return 1;
    }
    if (i + 1 >= argc || !strcmp(argv[i + 1], ":::")) {
      fprintf(stderr, "interleave: label %s has no command\n", argv[i]);
      return 1;
    }
    labels[n] = argv[i];
    commands[n++] = &argv[i + 1];
    int j = i + 1;
    while (j < argc && strcmp(argv[j], ":::"))
      j++;
    if (j < argc)
      argv[j] = NULL; /* ends this command's argv; argv[argc] is NULL already */
    i = j + 1;
  }
  if (n == 0) {
    fprintf(stderr, "interleave: no command\n");
    return 1;
  }
  double *times = malloc(sizeof(double) * (size_t)rounds * (size_t)n);
  int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (!times || devnull < 0) {
    perror("interleave");
    return 1;
  }
  for (int r = -WARMUP; r < rounds; r++) {
    for (int c = 0; c < n; c++) {
      double t = run_once(commands[c], stdin_file, devnull);
      if (t < 0) {
        fprintf(stderr, "interleave: %s (%s) failed\n", labels[c], commands[c][0]);
        return 1;
      }
      if (r >= 0)
        times[(size_t)c * rounds + r] = t;
    }
  }
  double first = 0;
  for (int c = 0; c < n; c++) {
    double *t = times + (size_t)c * rounds;
    qsort(t, (size_t)rounds, sizeof(double), compare);
    double median = t[rounds / 2];
    if (c == 0)
      first = median;
    printf("%s\t%.3f\t%.3f\t%.3f\t%.2f\n", labels[c], median, t[rounds / 10],
           t[(size_t)rounds * 9 / 10], median / first);
  }
  return 0;
}
