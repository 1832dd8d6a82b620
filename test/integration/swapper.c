/* swapper SECONDS A1 B1 [A2 B2 ...]  (runc_swap_race.sh; static, runs
 * inside a container that shares its rootfs directory with the containers
 * under test)
 *
 * Exchanges each pair of names Ai <-> Bi with renameat2(RENAME_EXCHANGE),
 * round robin, as fast as it can, for SECONDS or until SIGTERM/SIGINT. In
 * the race test each pair is a real directory or file the hook resolves (a
 * target's parent like /usr/lib64, or a target like /usr/bin/onload) and a
 * symlink to a host marker directory: every exchange atomically turns the
 * hook's path into a symlink to the host, or back.
 *
 * Before exiting, every pair is put back the way it was (an even number of
 * exchanges). Prints one line: "swapper: N exchanges, E errors (first: ...)".
 * Exit 0 if at least one exchange worked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static volatile sig_atomic_t g_stop;

static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
}

static int exchange(const char* a, const char* b) {
  return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  if (argc < 4 || (argc - 2) % 2 != 0) {
    fprintf(stderr, "usage: %s SECONDS A1 B1 [A2 B2 ...]\n", argv[0]);
    return 2;
  }
  double end = now() + atof(argv[1]);
  int npairs = (argc - 2) / 2, i;
  unsigned long long* swaps = calloc((size_t)npairs, sizeof *swaps);
  unsigned long long total = 0, errors = 0, iter = 0;
  char first_error[512] = "";
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);

  while (!g_stop) {
    for (i = 0; i < npairs; i++) {
      const char *a = argv[2 + 2 * i], *b = argv[3 + 2 * i];
      if (exchange(a, b) == 0) {
        swaps[i]++;
        total++;
      } else {
        if (errors++ == 0)
          snprintf(first_error, sizeof first_error, "%s <-> %s: %s", a, b, strerror(errno));
      }
    }
    if ((++iter & 1023) == 0 && now() > end) break;
  }
  /* Leave every pair as it was found. */
  for (i = 0; i < npairs; i++)
    if (swaps[i] % 2 != 0) {
      const char *a = argv[2 + 2 * i], *b = argv[3 + 2 * i];
      if (exchange(a, b) == 0)
        swaps[i]++;
      else
        fprintf(stderr, "swapper: cannot restore %s <-> %s: %s\n", a, b, strerror(errno));
    }
  printf("swapper: %llu exchanges, %llu errors%s%s%s\n", total, errors, errors ? " (first: " : "",
         first_error, errors ? ")" : "");
  for (i = 0; i < npairs; i++)
    printf("swapper: %s <-> %s: %llu\n", argv[2 + 2 * i], argv[3 + 2 * i], swaps[i]);
  fflush(stdout);
  return total > 0 ? 0 : 1;
}
