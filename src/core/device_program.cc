#include "device_program.h"

#include <algorithm>
#include <cstdint>

namespace ocid {
namespace {

DeviceRule Allow(char type, int64_t major, int64_t minor, const char* access) {
  DeviceRule r;
  r.type = type;
  r.major = major;
  r.minor = minor;
  r.access = access;
  r.allow = true;
  return r;
}

bpf_insn Insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
  bpf_insn i{};
  i.code = code;
  i.dst_reg = dst & 0xf;
  i.src_reg = src & 0xf;
  i.off = off;
  i.imm = imm;
  return i;
}

// The instructions the program uses, named after what they do.
bpf_insn LoadCtxWord(uint8_t dst, int16_t off) {  // dst = *(u32 *)(r1 + off)
  return Insn(BPF_LDX | BPF_MEM | BPF_W, dst, BPF_REG_1, off, 0);
}
bpf_insn Alu32Imm(uint8_t op, uint8_t dst, int32_t imm) {
  return Insn(BPF_ALU | op | BPF_K, dst, 0, 0, imm);
}
bpf_insn Mov32Reg(uint8_t dst, uint8_t src) {
  return Insn(BPF_ALU | BPF_MOV | BPF_X, dst, src, 0, 0);
}
bpf_insn JumpImm(uint8_t op, uint8_t dst, int32_t imm, int16_t off) {
  return Insn(BPF_JMP | op | BPF_K, dst, 0, off, imm);
}
bpf_insn JumpReg(uint8_t op, uint8_t dst, uint8_t src, int16_t off) {
  return Insn(BPF_JMP | op | BPF_X, dst, src, off, 0);
}
bpf_insn Exit() { return Insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0); }

int32_t AccessMask(const std::string& access) {
  int32_t mask = 0;
  for (char c : access) {
    if (c == 'r')
      mask |= BPF_DEVCG_ACC_READ;
    else if (c == 'w')
      mask |= BPF_DEVCG_ACC_WRITE;
    else if (c == 'm')
      mask |= BPF_DEVCG_ACC_MKNOD;
  }
  return mask;
}

constexpr int32_t kAllAccess = BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD;

void AppendVerdict(bool allow, std::vector<bpf_insn>* out) {
  out->push_back(Alu32Imm(BPF_MOV, BPF_REG_0, allow ? 1 : 0));
  out->push_back(Exit());
}

// Appends the block for one rule of type 'b' or 'c'. A failed check jumps to
// the next block: the first instruction after this one's verdict.
void AppendBlock(const DeviceRule& r, std::vector<bpf_insn>* out) {
  // A rule with no known access matches nothing: no block.
  int32_t access = AccessMask(r.access);
  if (access == 0) return;
  std::vector<bpf_insn> checks;
  checks.push_back(
      JumpImm(BPF_JNE, BPF_REG_2, r.type == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK, 0));
  if (access != kAllAccess) {
    checks.push_back(Mov32Reg(BPF_REG_1, BPF_REG_3));
    checks.push_back(Alu32Imm(BPF_AND, BPF_REG_1, access));
    checks.push_back(r.allow ? JumpReg(BPF_JNE, BPF_REG_1, BPF_REG_3, 0)
                             : JumpImm(BPF_JEQ, BPF_REG_1, 0, 0));
  }
  // Majors and minors of real devices are below 2^31, so a larger value,
  // sign-extended in the 64-bit compare, rightly matches no device.
  if (r.major >= 0) checks.push_back(JumpImm(BPF_JNE, BPF_REG_4, static_cast<int32_t>(r.major), 0));
  if (r.minor >= 0) checks.push_back(JumpImm(BPF_JNE, BPF_REG_5, static_cast<int32_t>(r.minor), 0));
  // A failed check skips the checks after it and the two verdict instructions.
  const size_t n = checks.size();
  for (size_t i = 0; i < n; ++i)
    if (BPF_CLASS(checks[i].code) == BPF_JMP) checks[i].off = static_cast<int16_t>(n - 1 - i + 2);
  out->insert(out->end(), checks.begin(), checks.end());
  AppendVerdict(r.allow, out);
}

}  // namespace

const std::vector<RuntimeDefaultDevice>& RuncDefaultDevices() {
  // runc 1.1 specconv.AllowedDevices, in its order.
  static const std::vector<RuntimeDefaultDevice> kDefaults = {
      {"", Allow('c', -1, -1, "m")},  // mknod of any char device
      {"", Allow('b', -1, -1, "m")},  // mknod of any block device
      {"/dev/null", Allow('c', 1, 3, "rwm")}, {"/dev/random", Allow('c', 1, 8, "rwm")},
      {"/dev/full", Allow('c', 1, 7, "rwm")}, {"/dev/tty", Allow('c', 5, 0, "rwm")},
      {"/dev/zero", Allow('c', 1, 5, "rwm")}, {"/dev/urandom", Allow('c', 1, 9, "rwm")},
      {"", Allow('c', 136, -1, "rwm")},  // /dev/pts/*
      {"", Allow('c', 5, 2, "rwm")},     // /dev/ptmx
      {"", Allow('c', 10, 200, "rwm")},  // /dev/net/tun
  };
  return kDefaults;
}

std::vector<DeviceRule> RuncDeviceRules(const std::vector<DeviceRule>& resources,
                                        const std::vector<std::string>& linux_device_paths) {
  std::vector<DeviceRule> out = resources;
  for (const auto& d : RuncDefaultDevices()) {
    std::string path = d.path;
    if (!path.empty() && std::find(linux_device_paths.begin(), linux_device_paths.end(), path) !=
                             linux_device_paths.end())
      continue;
    out.push_back(d.rule);
  }
  return out;
}

std::vector<bpf_insn> DeviceProgram(const std::vector<DeviceRule>& rules) {
  std::vector<bpf_insn> p = {
      LoadCtxWord(BPF_REG_2, 0),             // r2 = access_type
      Alu32Imm(BPF_AND, BPF_REG_2, 0xFFFF),  // w2 &= 0xffff: device type
      LoadCtxWord(BPF_REG_3, 0),             // r3 = access_type
      Alu32Imm(BPF_RSH, BPF_REG_3, 16),      // w3 >>= 16: requested access
      LoadCtxWord(BPF_REG_4, 4),             // r4 = major
      LoadCtxWord(BPF_REG_5, 8),             // r5 = minor
  };
  for (auto it = rules.rbegin(); it != rules.rend(); ++it) {
    if (it->type == 'a') {  // decides everything: earlier rules are dead
      AppendVerdict(it->allow, &p);
      return p;
    }
    // The parser produces only 'a', 'b' and 'c'.
    if (it->type == 'b' || it->type == 'c') AppendBlock(*it, &p);
  }
  AppendVerdict(false, &p);
  return p;
}

}  // namespace ocid
