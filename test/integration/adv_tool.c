/* Helper of runc_adversarial.sh (host side, not inside a container).
 *
 *   adv_tool mksock PATH      creates a unix socket file at PATH (busybox
 *                             cannot), then exits; the file stays.
 *   adv_tool watch PATH...    prints "READY" once an inotify IN_OPEN watch is
 *                             on every PATH (not following a final symlink),
 *                             then "OPEN PATH" each time one of them is
 *                             opened, until killed. O_PATH opens produce no
 *                             event: only a real open() of the object (of a
 *                             FIFO, a device node) is reported.
 */
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int mksock(const char* path) {
  struct sockaddr_un a;
  char dir[4096];
  const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  /* bind() takes at most 107 bytes: bind the last component from its directory. */
  if (slash) {
    if ((size_t)(slash - path) >= sizeof dir) return 1;
    memcpy(dir, path, (size_t)(slash - path));
    dir[slash - path] = '\0';
    if (chdir(slash == path ? "/" : dir) != 0) {
      perror(dir);
      return 1;
    }
  }
  if (fd < 0 || strlen(name) >= sizeof a.sun_path) {
    perror("socket");
    return 1;
  }
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  strcpy(a.sun_path, name);
  if (bind(fd, (struct sockaddr*)&a, sizeof a) != 0) {
    perror(path);
    return 1;
  }
  close(fd);
  return 0;
}

static int watch(int n, char** paths) {
  int fd = inotify_init1(IN_CLOEXEC), i;
  /* wd -> path: watch descriptors are small integers handed out in order. */
  const char* names[1024] = {0};
  if (fd < 0) {
    perror("inotify_init1");
    return 1;
  }
  for (i = 0; i < n; i++) {
    int wd = inotify_add_watch(fd, paths[i], IN_OPEN | IN_DONT_FOLLOW);
    if (wd < 0 || wd >= 1024) {
      perror(paths[i]);
      return 1;
    }
    names[wd] = paths[i];
  }
  printf("READY\n");
  fflush(stdout);
  for (;;) {
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t len = read(fd, buf, sizeof buf);
    char* p;
    if (len <= 0) return 0;
    for (p = buf; p < buf + len;) {
      struct inotify_event* e = (struct inotify_event*)p;
      if ((e->mask & IN_OPEN) && e->wd >= 0 && e->wd < 1024 && names[e->wd]) {
        printf("OPEN %s\n", names[e->wd]);
        fflush(stdout);
      }
      p += sizeof *e + e->len;
    }
  }
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "mksock") == 0) return mksock(argv[2]);
  if (argc >= 3 && strcmp(argv[1], "watch") == 0) return watch(argc - 2, argv + 2);
  fprintf(stderr, "usage: %s mksock PATH | watch PATH...\n", argv[0]);
  return 2;
}
