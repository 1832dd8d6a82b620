// Test helper for runc_cgroup_v2.sh: attaches a second device program, one
// that allows every access, to a cgroup v2 directory, next to the runtime's
// (BPF_F_ALLOW_MULTI). Prints the new program's id. The attachment keeps the
// program alive after this exits; it goes away with the cgroup.
//
//   bpf_attach_extra /sys/fs/cgroup/unified/<path>
#include <fcntl.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

int Bpf(int cmd, bpf_attr* attr) {
  return static_cast<int>(syscall(SYS_bpf, cmd, attr, sizeof *attr));
}
uint64_t Ptr(const void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }

int Die(const char* what, const char* path) {
  std::fprintf(stderr, "bpf_attach_extra: %s: %s: %s\n", what, path, std::strerror(errno));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CGROUP_DIR\n", argv[0]);
    return 2;
  }
  int cg = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cg < 0) return Die("cannot open", argv[1]);

  bpf_insn prog[2] = {};
  prog[0].code = BPF_ALU | BPF_MOV | BPF_K;  // w0 = 1: allow
  prog[0].imm = 1;
  prog[1].code = BPF_JMP | BPF_EXIT;
  bpf_attr load{};
  load.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  load.insns = Ptr(prog);
  load.insn_cnt = 2;
  load.license = Ptr("Apache");
  std::strncpy(load.prog_name, "test_allow_all", sizeof load.prog_name - 1);
  int fd = Bpf(BPF_PROG_LOAD, &load);
  if (fd < 0) return Die("cannot load the program for", argv[1]);

  bpf_attr attach{};
  attach.target_fd = static_cast<uint32_t>(cg);
  attach.attach_bpf_fd = static_cast<uint32_t>(fd);
  attach.attach_type = BPF_CGROUP_DEVICE;
  attach.attach_flags = BPF_F_ALLOW_MULTI;
  if (Bpf(BPF_PROG_ATTACH, &attach) != 0) return Die("cannot attach to", argv[1]);

  bpf_prog_info info{};
  bpf_attr get{};
  get.info.bpf_fd = static_cast<uint32_t>(fd);
  get.info.info_len = sizeof info;
  get.info.info = Ptr(&info);
  if (Bpf(BPF_OBJ_GET_INFO_BY_FD, &get) != 0)
    return Die("cannot read the id of the program for", argv[1]);
  std::printf("%u\n", info.id);
  return 0;
}
