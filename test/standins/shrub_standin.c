/* shrub_standin: plays Onload's shrub controller (the daemon X3/X4 queue
 * sharing talks to) and its clients, for the integration tests. Not Onload:
 * no NIC, no buffers; it only speaks the two socket protocols and lays out
 * the controller's directory as Onload does. Static: the tests also run it
 * inside containers.
 *
 *   shrub_standin serve RUNDIR ID [--uid U] [--gid G] [--client-gid CG]
 *                 [--client-mode OCT]
 *       What shrub_controller's main and controller_open_dir do with
 *       RUNDIR standing for /run/onload: mkdir RUNDIR 0755 under umask 022
 *       (an existing one is fine), open or mkdir RUNDIR/controller-ID 0755,
 *       flock it (another controller of that id: prints "BUSY" and exits
 *       0, as Onload's does), chown it to U (else our euid) and CG (else
 *       G, else our egid), chmod it 0700 | setgid with a client group |
 *       0050 if the client mode gives the group anything | 0005 if it gives
 *       others anything; then umask ~mode, so the sockets get exactly the
 *       client mode (default 0666), and binds "shrub_config" from inside
 *       the directory. With --uid/--gid it then drops to them. Prints
 *       "READY". Each request on shrub_config is answered as the controller
 *       does (CREATE_HWPORT / CREATE_IFINDEX bind and listen on shrub-<k>,
 *       k = 1, 2, ..., one per hw port or ifindex, and reply k; DESTROY
 *       replies 0; wrong version -1000; a short packet -EPROTO; any other
 *       command -EOPNOTSUPP) and printed:
 *         REQUEST socket=shrub_config version=8 command=1 buffers=32 peer_uid=U peer_gid=G reply=1
 *       (DESTROY prints token=T for buffers=B; a packet shorter than the
 *       request prints bytes=N instead of the fields). On shrub-<k> a FILTER_INFO request gets the
 * 16-byte answer {k, 0}; anything else (a QUEUE request wants memfds of hugepages) is closed
 * unanswered, as Onload closes a bad one: REQUEST socket=shrub-1 version=8 type=0 peer_uid=U
 * peer_gid=G reply=1 SIGTERM or SIGINT: unlinks shrub_config and every shrub-<k>, exits 0.
 *
 *   shrub_standin request [--version N] [--command hwport|ifindex|destroy|N]
 *                 [--value N] [--buffers N] [--data] [--dump] PATH
 *       What libonload's oo_send_shrub_request does with PATH for
 *       /run/onload/controller-<id>/shrub_config: one SOCK_SEQPACKET
 *       connect, no retry; send the 56-byte request (default: version 8,
 *       CREATE_HWPORT, 32 buffers, hw port --value 0; for destroy --value is
 *       the token); receive one int. Prints "REPLY n", exit 0 if n >= 0,
 *       else 1; or "ERROR connect: EACCES" (the errno's name; also send:,
 *       recv:) and exit 1. --data then does what efct_ubufs does next:
 *       connect to shrub-<n> beside PATH, send FILTER_INFO, print
 *       "DATA token=t" (t: the answer's shared_rxq_token). --dump prints the
 *       request as hex (one line, no PATH needed) and sends nothing.
 *
 * The wire format is written here from Onload's public header, not
 * included: every number below cites github.com/Xilinx-CNS/onload at
 * ef17681d36a1b5d9e2f9fda4c77c3f700877984d. test/standins/README.md says how
 * it was checked against Onload's own client and controller code.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

/* src/include/etherfabric/internal/shrub_shared.h */
#define SHRUB_VERSION 8                         /* :48 EF_SHRUB_VERSION */
#define SHRUB_ERR_INCOMPATIBLE_VERSION (-1000)  /* :49 */
#define SHRUB_NEGOTIATION_SOCKET "shrub_config" /* :68 */
#define SHRUB_CONTROLLER_FORMAT "controller-%d" /* :66, :69 */
#define SHRUB_SHRUB_FORMAT "shrub-%d"           /* :67, :70 */
#define SHRUB_MAX_CONTROLLER 9999               /* :71 */
#define SHRUB_DEFAULT_BUFFER_COUNT 32           /* :106 */
#define SHRUB_MAX_BUFFER_COUNT 100000           /* :107 */

/* enum ef_shrub_controller_command, :98-104 */
enum {
  CMD_DESTROY = 0,
  CMD_CREATE_HWPORT = 1,
  CMD_CREATE_IFINDEX = 2,
  CMD_DEFUNCT_DUMP_TO_FILE = 3,
  CMD_SHRUB_DUMP = 4,
};
/* enum ef_shrub_request_type, :114-117 */
enum { REQUEST_FILTER_INFO = 0, REQUEST_QUEUE = 1 };

/* struct ef_shrub_controller_request, :197-219 (client -> shrub_config) */
struct controller_request {
  uint64_t controller_version;
  uint64_t command;
  union {
    struct {
      uint64_t buffer_count;
      uint64_t value; /* hw_port (create_hwport) or ifindex (create_ifindex) */
    } create;
    struct {
      uint64_t shrub_token_id;
    } destroy;
    unsigned char pad[40]; /* _pad[40], :212 */
  } u;
};
_Static_assert(sizeof(struct controller_request) == 56, "shrub_shared.h:220");
_Static_assert(offsetof(struct controller_request, u) == 16, "command then the union");

/* struct ef_shrub_request, :143-155, with its queue member (:134-140);
 * the filter_info member is an empty struct (:120-121). Client -> shrub-<n>. */
struct shrub_request {
  uint64_t server_version;
  uint64_t type;
  uint64_t qid;
  uint64_t max_connection_buffers;
};
_Static_assert(sizeof(struct shrub_request) == 32, "ef_shrub_request");

/* struct ef_shrub_filter_info_response, :124-129 (shrub-<n> -> client) */
struct filter_info_response {
  uint64_t shared_rxq_token;
  uint64_t use_interrupts;
};
_Static_assert(sizeof(struct filter_info_response) == 16, "ef_shrub_filter_info_response");

/* src/tools/shrub_controller/shrub_controller.c */
#define DEFAULT_CLIENT_MODE 0666 /* :60 */
#define CONFIG_BACKLOG 2048      /* :522 */
#define FIRST_TOKEN 1            /* :1293 interface_token = 1 */
/* src/lib/ciul/shrub_server_sockets.c:67 */
#define SHRUB_BACKLOG 32

#define MAX_SHRUBS 64

static volatile sig_atomic_t g_stop;

static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
}

static const char* errname(int e) {
  const char* n = strerrorname_np(e);
  return n ? n : "EUNKNOWN";
}

static int parse_long(const char* s, int base, long min, long max, long* out) {
  char* end;
  long v;
  errno = 0;
  v = strtol(s, &end, base);
  if (errno != 0 || end == s || *end != '\0' || v < min || v > max) return -1;
  *out = v;
  return 0;
}

/* ci_init_unix_addr (src/include/ci/tools/utils.h:242-256): the address
 * length counts the name and its terminator. */
static int unix_addr(const char* name, struct sockaddr_un* a, socklen_t* len) {
  size_t n = strlen(name) + 1;
  if (n > sizeof a->sun_path) return -1;
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  memcpy(a->sun_path, name, n);
  *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
  return 0;
}

/* A listening SOCK_SEQPACKET socket at NAME in the current directory, under
 * the prevailing umask (shrub_controller.c:499-523, shrub_server_sockets.c:32-67). */
static int listen_at(const char* name, int backlog) {
  struct sockaddr_un a;
  socklen_t len;
  int fd;
  if (unix_addr(name, &a, &len) != 0) return -1;
  unlink(name);
  fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (bind(fd, (struct sockaddr*)&a, len) != 0 || listen(fd, backlog) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

static void peer(int fd, long* uid, long* gid) {
  struct ucred c;
  socklen_t len = sizeof c;
  *uid = *gid = -1;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &len) == 0) {
    *uid = (long)c.uid;
    *gid = (long)c.gid;
  }
}

struct shrub {
  int fd; /* listening on shrub-<token>; -1: free slot */
  int token;
  uint64_t command; /* CREATE_HWPORT or CREATE_IFINDEX */
  uint64_t value;   /* its hw port or ifindex */
  int refs;
};

static struct shrub g_shrubs[MAX_SHRUBS];
static int g_next_token = FIRST_TOKEN;

/* process_create_command (shrub_controller.c:546-588): an existing server
 * of the port is shared (search_for_existing_server, :204-225), else a new
 * one with the next token (add_server_config, :264-296). The stand-in has
 * no control plane: an ifindex is its own key. */
static int create(uint64_t command, uint64_t value, uint64_t buffers) {
  int i, slot = -1;
  char name[32];
  for (i = 0; i < MAX_SHRUBS; i++) {
    if (g_shrubs[i].fd >= 0 && g_shrubs[i].command == command && g_shrubs[i].value == value) {
      g_shrubs[i].refs++;
      return g_shrubs[i].token;
    }
    if (g_shrubs[i].fd < 0 && slot < 0) slot = i;
  }
  if (buffers == 0 || buffers > SHRUB_MAX_BUFFER_COUNT) return -EINVAL; /* :271 */
  if (slot < 0) return -ENOMEM;
  snprintf(name, sizeof name, SHRUB_SHRUB_FORMAT, g_next_token);
  g_shrubs[slot].fd = listen_at(name, SHRUB_BACKLOG);
  if (g_shrubs[slot].fd < 0) return -errno;
  g_shrubs[slot].token = g_next_token++;
  g_shrubs[slot].command = command;
  g_shrubs[slot].value = value;
  g_shrubs[slot].refs = 1;
  return g_shrubs[slot].token;
}

/* remove_and_stop_interface (shrub_controller.c:310-335): the last
 * reference closes the server. The reply is 0 whatever it finds. */
static void destroy(uint64_t token) {
  int i;
  char name[32];
  for (i = 0; i < MAX_SHRUBS; i++) {
    if (g_shrubs[i].fd < 0 || (uint64_t)g_shrubs[i].token != token) continue;
    if (--g_shrubs[i].refs <= 0) {
      snprintf(name, sizeof name, SHRUB_SHRUB_FORMAT, g_shrubs[i].token);
      close(g_shrubs[i].fd);
      unlink(name);
      g_shrubs[i].fd = -1;
    }
  }
}

/* One connection on shrub_config: poll_socket, shrub_controller.c:590-700. */
static void serve_config(int listen_fd) {
  struct controller_request req;
  struct timeval tv = {5, 0};
  long uid, gid;
  ssize_t n;
  int reply = 0, fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
  if (fd < 0) return;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  peer(fd, &uid, &gid);
  memset(&req, 0, sizeof req);
  /* ef_shrub_socket_recv (shrub_socket.c:119-127): one packet of at most
   * the request's size; fewer bytes are -EPROTO. */
  n = recv(fd, &req, sizeof req, 0);
  if (n < 0) {
    reply = -1; /* the controller passes recv's -1 on */
  } else if ((size_t)n < sizeof req) {
    reply = -EPROTO;
  } else if (req.controller_version != SHRUB_VERSION) {
    reply = SHRUB_ERR_INCOMPATIBLE_VERSION; /* :619-627 */
  } else {
    switch (req.command) {
      case CMD_DESTROY: destroy(req.u.destroy.shrub_token_id); break;
      case CMD_CREATE_HWPORT:
      case CMD_CREATE_IFINDEX:
        reply = create(req.command, req.u.create.value, req.u.create.buffer_count);
        break;
      default: reply = -EOPNOTSUPP; break; /* :664-677; SHRUB_DUMP: nothing to dump */
    }
  }
  if (n >= 0 && (size_t)n >= sizeof req) {
    /* The union's first word: a create's buffer count, a destroy's token. */
    printf(
        "REQUEST socket=%s version=%llu command=%llu %s=%llu peer_uid=%ld peer_gid=%ld "
        "reply=%d\n",
        SHRUB_NEGOTIATION_SOCKET, (unsigned long long)req.controller_version,
        (unsigned long long)req.command, req.command == CMD_DESTROY ? "token" : "buffers",
        (unsigned long long)req.u.create.buffer_count, uid, gid, reply);
  } else {
    printf("REQUEST socket=%s bytes=%zd peer_uid=%ld peer_gid=%ld reply=%d\n",
           SHRUB_NEGOTIATION_SOCKET, n, uid, gid, reply);
  }
  fflush(stdout);
  send(fd, &reply, sizeof reply, MSG_NOSIGNAL); /* :689 */
  close(fd);
}

/* One connection on shrub-<token>: server_request_received,
 * src/lib/ciul/shrub_server.c:304-350. */
static void serve_shrub(const struct shrub* s) {
  struct shrub_request req;
  struct timeval tv = {5, 0};
  long uid, gid;
  ssize_t n;
  int fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
  if (fd < 0) return;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  peer(fd, &uid, &gid);
  memset(&req, 0, sizeof req);
  n = recv(fd, &req, sizeof req, 0);
  if (n >= 0 && (size_t)n >= sizeof req && req.server_version == SHRUB_VERSION &&
      req.type == REQUEST_FILTER_INFO) {
    struct filter_info_response r = {(uint64_t)s->token, 0};
    send(fd, &r, sizeof r, MSG_NOSIGNAL);
    printf("REQUEST socket=" SHRUB_SHRUB_FORMAT
           " version=%llu type=%llu peer_uid=%ld peer_gid=%ld "
           "reply=%d\n",
           s->token, (unsigned long long)req.server_version, (unsigned long long)req.type, uid, gid,
           s->token);
  } else {
    printf("REQUEST socket=" SHRUB_SHRUB_FORMAT
           " bytes=%zd version=%llu type=%llu peer_uid=%ld "
           "peer_gid=%ld reply=closed\n",
           s->token, n, (unsigned long long)req.server_version, (unsigned long long)req.type, uid,
           gid);
  }
  fflush(stdout);
  close(fd);
}

static int serve(int argc, char** argv) {
  const char* rundir;
  long id, uid = -1, gid = -1, client_gid = -1, client_mode = DEFAULT_CLIENT_MODE;
  char dir[64];
  int i, dfd, rc, config_fd;
  uid_t dir_uid;
  gid_t dir_gid;
  mode_t dir_mode;
  struct sigaction sa;
  sigset_t stop_signals, wait_mask;

  if (argc < 4 || parse_long(argv[3], 10, 0, SHRUB_MAX_CONTROLLER, &id) != 0) return 2;
  rundir = argv[2];
  for (i = 4; i + 1 < argc; i += 2) {
    long* dst = strcmp(argv[i], "--uid") == 0          ? &uid
                : strcmp(argv[i], "--gid") == 0        ? &gid
                : strcmp(argv[i], "--client-gid") == 0 ? &client_gid
                                                       : NULL;
    if (dst) {
      if (parse_long(argv[i + 1], 0, 0, 0x7fffffffL, dst) != 0) return 2;
    } else if (strcmp(argv[i], "--client-mode") == 0) {
      /* CI_CFG_MODE: octal, at most 07777 (src/lib/ciapp/testapp.c:442-446) */
      if (parse_long(argv[i + 1], 8, 0, 07777, &client_mode) != 0) return 2;
    } else {
      return 2;
    }
  }
  if (i != argc) return 2;

  /* SIGTERM and SIGINT are blocked but while ppoll waits: one that comes
   * between two waits is not lost. */
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigprocmask(SIG_BLOCK, &stop_signals, &wait_mask);

  /* main, shrub_controller.c:1341-1343; create_directory :396-403 */
  umask(0022);
  if (mkdir(rundir, 0755) != 0 && errno != EEXIST) {
    printf("ERROR mkdir: %s\n", errname(errno));
    return 1;
  }
  /* controller_open_dir, :1135-1213 */
  snprintf(dir, sizeof dir, SHRUB_CONTROLLER_FORMAT, (int)id);
  if (chdir(rundir) != 0) {
    printf("ERROR chdir: %s\n", errname(errno));
    return 1;
  }
  dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0 && errno == ENOENT) {
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
      printf("ERROR mkdir: %s\n", errname(errno));
      return 1;
    }
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  if (dfd < 0) {
    printf("ERROR open: %s\n", errname(errno));
    return 1;
  }
  while ((rc = flock(dfd, LOCK_EX | LOCK_NB)) == -1 && errno == EINTR) {
  }
  if (rc != 0) {
    if (errno == EWOULDBLOCK) {
      printf("BUSY %s\n", dir); /* another controller serves this id: exit 0 (:1396-1400) */
      return 0;
    }
    printf("ERROR flock: %s\n", errname(errno));
    return 1;
  }
  if (fchdir(dfd) != 0) {
    printf("ERROR fchdir: %s\n", errname(errno));
    return 1;
  }
  dir_gid = client_gid >= 0 ? (gid_t)client_gid : gid >= 0 ? (gid_t)gid : getegid();
  dir_uid = uid >= 0 ? (uid_t)uid : geteuid();
  if (fchown(dfd, dir_uid, dir_gid) != 0 && (uid >= 0 || gid >= 0 || client_gid >= 0)) {
    printf("ERROR fchown: %s\n", errname(errno));
    return 1;
  }
  dir_mode = 0700;
  dir_mode |= client_gid >= 0 ? S_ISGID : 0;
  dir_mode |= (client_mode & 0070) ? 0050 : 0;
  dir_mode |= (client_mode & 0007) ? 0005 : 0;
  if (fchmod(dfd, dir_mode) != 0) {
    printf("ERROR fchmod: %s\n", errname(errno));
    return 1;
  }
  /* :1352-1353, then create_onload_config_socket :494-537 */
  umask(~(mode_t)client_mode & 0777);
  config_fd = listen_at(SHRUB_NEGOTIATION_SOCKET, CONFIG_BACKLOG);
  if (config_fd < 0) {
    printf("ERROR bind: %s\n", errname(errno));
    return 1;
  }
  /* drop_privileges, :1253-1276 (after the directory and the config
   * socket; the shrub-<k> sockets are bound after it). */
  if ((gid >= 0 || uid >= 0) && setgroups(0, NULL) != 0) {
    printf("ERROR setgroups: %s\n", errname(errno));
    return 1;
  }
  if (gid >= 0 && setresgid((gid_t)gid, (gid_t)gid, (gid_t)gid) != 0) {
    printf("ERROR setresgid: %s\n", errname(errno));
    return 1;
  }
  if (uid >= 0 && setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) != 0) {
    printf("ERROR setresuid: %s\n", errname(errno));
    return 1;
  }
  for (i = 0; i < MAX_SHRUBS; i++) g_shrubs[i].fd = -1;
  printf("READY\n");
  fflush(stdout);

  while (!g_stop) {
    struct pollfd p[1 + MAX_SHRUBS];
    int map[1 + MAX_SHRUBS], np = 1;
    p[0].fd = config_fd;
    p[0].events = POLLIN;
    for (i = 0; i < MAX_SHRUBS; i++) {
      if (g_shrubs[i].fd < 0) continue;
      p[np].fd = g_shrubs[i].fd;
      p[np].events = POLLIN;
      map[np++] = i;
    }
    if (ppoll(p, (nfds_t)np, NULL, &wait_mask) < 0) continue; /* EINTR: g_stop is looked at */
    for (i = 1; i < np; i++) {
      if (p[i].revents & POLLIN) serve_shrub(&g_shrubs[map[i]]);
    }
    if (p[0].revents & POLLIN) serve_config(config_fd);
  }
  /* cleanup_config_socket (:704-714) unlinks shrub_config; the stand-in
   * leaves no shrub-<k> behind either. */
  unlink(SHRUB_NEGOTIATION_SOCKET);
  for (i = 0; i < MAX_SHRUBS; i++) {
    if (g_shrubs[i].fd >= 0) {
      char name[32];
      snprintf(name, sizeof name, SHRUB_SHRUB_FORMAT, g_shrubs[i].token);
      unlink(name);
    }
  }
  return 0;
}

/* connect(2) to DIR/NAME as ef_shrub_socket_connect / oo_send_shrub_request
 * do, once. */
static int connect_to(const char* dir, const char* name) {
  char path[4096];
  struct sockaddr_un a;
  socklen_t len;
  int fd;
  if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path ||
      unix_addr(path, &a, &len) != 0) {
    errno = ENAMETOOLONG;
    return -1;
  }
  fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, (struct sockaddr*)&a, len) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

static int request(int argc, char** argv) {
  struct controller_request req;
  long version = SHRUB_VERSION, command = CMD_CREATE_HWPORT, value = 0;
  long buffers = SHRUB_DEFAULT_BUFFER_COUNT;
  int data = 0, dump = 0, fd, reply = 0, i;
  const char* path = NULL;
  char dir[4096];
  const char* slash;
  ssize_t n;

  for (i = 2; i < argc; i++) {
    const char* a = argv[i];
    long* dst = NULL;
    if (strcmp(a, "--data") == 0) {
      data = 1;
      continue;
    }
    if (strcmp(a, "--dump") == 0) {
      dump = 1;
      continue;
    }
    if (strcmp(a, "--command") == 0 && i + 1 < argc) {
      const char* c = argv[++i];
      if (strcmp(c, "hwport") == 0) {
        command = CMD_CREATE_HWPORT;
      } else if (strcmp(c, "ifindex") == 0) {
        command = CMD_CREATE_IFINDEX;
      } else if (strcmp(c, "destroy") == 0) {
        command = CMD_DESTROY;
      } else if (parse_long(c, 10, 0, 0x7fffffffL, &command) != 0) {
        return 2;
      }
      continue;
    }
    if (strcmp(a, "--version") == 0) dst = &version;
    if (strcmp(a, "--value") == 0) dst = &value;
    if (strcmp(a, "--buffers") == 0) dst = &buffers;
    if (dst) {
      if (i + 1 >= argc || parse_long(argv[++i], 10, 0, 0x7fffffffL, dst) != 0) return 2;
      continue;
    }
    if (a[0] == '-' || path) return 2;
    path = a;
  }
  if (!path && !dump) return 2;

  /* ef_shrub_adapter_send_hwport / _send_ifindex / _stop_server,
   * src/lib/ciul/shrub_adapter.c:61-111: a zeroed request, then the fields. */
  memset(&req, 0, sizeof req);
  req.controller_version = (uint64_t)version;
  req.command = (uint64_t)command;
  if (command == CMD_DESTROY) {
    req.u.destroy.shrub_token_id = (uint64_t)value;
  } else {
    req.u.create.buffer_count = (uint64_t)buffers;
    req.u.create.value = (uint64_t)value;
  }
  if (dump) {
    const unsigned char* b = (const unsigned char*)&req;
    for (i = 0; i < (int)sizeof req; i++) printf("%02x", b[i]);
    printf("\n");
    return 0;
  }

  slash = strrchr(path, '/');
  if (slash) {
    size_t len = (size_t)(slash - path);
    if (len >= sizeof dir) return 2;
    memcpy(dir, path, len);
    dir[len] = '\0';
    if (len == 0) strcpy(dir, "/");
  } else {
    strcpy(dir, ".");
  }
  /* A path longer than sun_path (a test's temporary directory) is reached
   * from its directory; shrub-<n> is never longer than shrub_config. */
  if (strlen(path) >= sizeof(((struct sockaddr_un*)0)->sun_path)) {
    if (chdir(dir) != 0) {
      printf("ERROR connect: %s\n", errname(errno));
      return 1;
    }
    strcpy(dir, ".");
  }
  /* oo_send_shrub_request, src/lib/transport/ip/netif_init.c:2100-2149 */
  fd = connect_to(dir, slash ? slash + 1 : path);
  if (fd < 0) {
    printf("ERROR connect: %s\n", errname(errno));
    return 1;
  }
  if (send(fd, &req, sizeof req, MSG_NOSIGNAL) < 0) {
    printf("ERROR send: %s\n", errname(errno));
    return 1;
  }
  n = recv(fd, &reply, sizeof reply, 0);
  if (n < 0) {
    printf("ERROR recv: %s\n", errname(errno));
    return 1;
  }
  close(fd);
  if (n != (ssize_t)sizeof reply) {
    printf("ERROR recv: %zd bytes, not an int (libonload: ENOMEM)\n", n);
    return 1;
  }
  printf("REPLY %d\n", reply);
  fflush(stdout);
  if (reply < 0) return 1;

  if (data) {
    /* efct_ubufs_set_shared (src/lib/ciul/efct_ubufs.c:750-765) names
     * shrub-<reply>; ef_shrub_client_request_filter_info
     * (src/lib/ciul/shrub_client.c:94-121) asks it first. */
    struct shrub_request sreq = {SHRUB_VERSION, REQUEST_FILTER_INFO, 0, 0};
    struct filter_info_response resp;
    char name[32];
    snprintf(name, sizeof name, SHRUB_SHRUB_FORMAT, reply);
    fd = connect_to(dir, name);
    if (fd < 0) {
      printf("ERROR data connect: %s\n", errname(errno));
      return 1;
    }
    if (send(fd, &sreq, sizeof sreq, MSG_NOSIGNAL) < 0) {
      printf("ERROR data send: %s\n", errname(errno));
      return 1;
    }
    n = recv(fd, &resp, sizeof resp, 0);
    if (n < 0) {
      printf("ERROR data recv: %s\n", errname(errno));
      return 1;
    }
    close(fd);
    if (n != (ssize_t)sizeof resp) {
      printf("ERROR data recv: %zd bytes (EPROTO)\n", n);
      return 1;
    }
    printf("DATA token=%llu\n", (unsigned long long)resp.shared_rxq_token);
  }
  return 0;
}

int main(int argc, char** argv) {
  int rc = 2;
  if (argc >= 2 && strcmp(argv[1], "serve") == 0) rc = serve(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "request") == 0) rc = request(argc, argv);
  if (rc == 2) {
    fprintf(stderr,
            "usage: shrub_standin serve RUNDIR ID [--uid U] [--gid G] [--client-gid CG] "
            "[--client-mode OCT]\n"
            "       shrub_standin request [--version N] [--command hwport|ifindex|destroy|N] "
            "[--value N] [--buffers N] [--data] [--dump] PATH\n");
  }
  return rc;
}
