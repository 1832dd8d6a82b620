// cgroup v2 device programs: golden instruction listings, the program's
// decisions run through a small interpreter, runc's default rules, and the
// v1/v2/hybrid detection of the device cgroup dispatcher.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "device_cgroup.h"
#include "device_program.h"

using ocid::CgroupMode;
using ocid::DeviceCgroupLocation;
using ocid::DeviceProgram;
using ocid::DeviceRule;
using ocid::Error;
using ocid::LocateDeviceCgroup;
using ocid::RuncDefaultDevices;
using ocid::RuncDeviceRules;

namespace {

DeviceRule R(char type, int64_t major, int64_t minor, const std::string& access = "rwm",
             bool allow = true) {
  DeviceRule r;
  r.type = type;
  r.major = major;
  r.minor = minor;
  r.access = access;
  r.allow = allow;
  return r;
}
DeviceRule Deny(char type, int64_t major, int64_t minor, const std::string& access = "rwm") {
  return R(type, major, minor, access, false);
}

// Renders a program the way `bpftool prog dump xlated` does, for the
// instructions a device program uses, so a listing can be compared with
// what the kernel shows for runc's program. Unknown instructions show as "?".
std::string Listing(const std::vector<bpf_insn>& prog) {
  std::string out;
  char b[128];
  for (size_t i = 0; i < prog.size(); ++i) {
    const bpf_insn& n = prog[i];
    int d = n.dst_reg, s = n.src_reg;
    switch (n.code) {
      case BPF_LDX | BPF_MEM | BPF_W:
        std::snprintf(b, sizeof b, "r%d = *(u32 *)(r%d +%d)", d, s, n.off);
        break;
      case BPF_ALU | BPF_AND | BPF_K: std::snprintf(b, sizeof b, "w%d &= %d", d, n.imm); break;
      case BPF_ALU | BPF_RSH | BPF_K: std::snprintf(b, sizeof b, "w%d >>= %d", d, n.imm); break;
      case BPF_ALU | BPF_MOV | BPF_K: std::snprintf(b, sizeof b, "w%d = %d", d, n.imm); break;
      case BPF_ALU | BPF_MOV | BPF_X: std::snprintf(b, sizeof b, "w%d = w%d", d, s); break;
      case BPF_JMP | BPF_JNE | BPF_K:
        std::snprintf(b, sizeof b, "if r%d != 0x%x goto pc+%d", d, n.imm, n.off);
        break;
      case BPF_JMP | BPF_JEQ | BPF_K:
        std::snprintf(b, sizeof b, "if r%d == 0x%x goto pc+%d", d, n.imm, n.off);
        break;
      case BPF_JMP | BPF_JNE | BPF_X:
        std::snprintf(b, sizeof b, "if r%d != r%d goto pc+%d", d, s, n.off);
        break;
      case BPF_JMP | BPF_EXIT: std::snprintf(b, sizeof b, "exit"); break;
      default: std::snprintf(b, sizeof b, "?"); break;
    }
    char head[24];
    std::snprintf(head, sizeof head, "%zu: (%02x) ", i, n.code);
    out += head;
    out += b;
    out += '\n';
  }
  return out;
}

// Runs a device program on one access, like the kernel would: returns r0,
// or -1 if the program leaves its bounds or uses an instruction this
// interpreter does not know.
int Run(const std::vector<bpf_insn>& prog, int type, int access, uint32_t major, uint32_t minor) {
  uint32_t ctx[3] = {static_cast<uint32_t>(access << 16 | type), major, minor};
  uint64_t reg[11] = {};
  for (size_t pc = 0, steps = 0; pc < prog.size() && steps < 10000; ++pc, ++steps) {
    const bpf_insn& n = prog[pc];
    uint64_t& d = reg[n.dst_reg];
    uint64_t s = reg[n.src_reg];
    uint64_t imm = static_cast<uint64_t>(static_cast<int64_t>(n.imm));  // sign-extended
    switch (n.code) {
      case BPF_LDX | BPF_MEM | BPF_W:
        if (n.src_reg != BPF_REG_1 || n.off % 4 || n.off < 0 || n.off > 8) return -1;
        d = ctx[n.off / 4];
        break;
      case BPF_ALU | BPF_AND | BPF_K: d = static_cast<uint32_t>(d & imm); break;
      case BPF_ALU | BPF_RSH | BPF_K: d = static_cast<uint32_t>(d) >> n.imm; break;
      case BPF_ALU | BPF_MOV | BPF_K: d = static_cast<uint32_t>(n.imm); break;
      case BPF_ALU | BPF_MOV | BPF_X: d = static_cast<uint32_t>(s); break;
      case BPF_JMP | BPF_JNE | BPF_K:
        if (d != imm) pc += n.off;
        break;
      case BPF_JMP | BPF_JEQ | BPF_K:
        if (d == imm) pc += n.off;
        break;
      case BPF_JMP | BPF_JNE | BPF_X:
        if (d != s) pc += n.off;
        break;
      case BPF_JMP | BPF_EXIT: return static_cast<int>(reg[0]);
      default: return -1;
    }
  }
  return -1;
}

constexpr int kChar = BPF_DEVCG_DEV_CHAR, kBlock = BPF_DEVCG_DEV_BLOCK;
constexpr int kM = BPF_DEVCG_ACC_MKNOD, kR = BPF_DEVCG_ACC_READ, kW = BPF_DEVCG_ACC_WRITE;

// The reference semantics, written independently of the code generator:
// the last matching rule decides; an allow matches a subset of its access,
// a deny any overlap; 'a' matches everything.
bool ModelAllows(const std::vector<DeviceRule>& rules, int type, int access, uint32_t major,
                 uint32_t minor) {
  for (auto it = rules.rbegin(); it != rules.rend(); ++it) {
    const DeviceRule& r = *it;
    if (r.type == 'a') return r.allow;
    if ((r.type == 'c') != (type == kChar)) continue;
    if ((r.major >= 0 && r.major != major) || (r.minor >= 0 && r.minor != minor)) continue;
    int mask = 0;
    for (char c : r.access) mask |= c == 'r' ? kR : c == 'w' ? kW : c == 'm' ? kM : 0;
    bool matches = r.allow ? (access & ~mask) == 0 : (access & mask) != 0;
    if (matches) return r.allow;
  }
  return false;
}

const char* kPrologue =
    "0: (61) r2 = *(u32 *)(r1 +0)\n"
    "1: (54) w2 &= 65535\n"
    "2: (61) r3 = *(u32 *)(r1 +0)\n"
    "3: (74) w3 >>= 16\n"
    "4: (61) r4 = *(u32 *)(r1 +4)\n"
    "5: (61) r5 = *(u32 *)(r1 +8)\n";

// What `runc spec` writes, then runc 1.1's defaults.
std::vector<DeviceRule> RuncSpecRules() { return RuncDeviceRules({Deny('a', -1, -1)}, {}); }

}  // namespace

TEST_SUITE("device_program") {
  TEST_CASE("encoding of the prologue: opcodes, registers, offsets") {
    std::vector<bpf_insn> p = DeviceProgram({});
    REQUIRE(p.size() == 8);
    CHECK(p[0].code == 0x61);
    CHECK(int{p[0].dst_reg} == 2);
    CHECK(int{p[0].src_reg} == 1);
    CHECK(p[0].off == 0);
    CHECK(p[1].code == 0x54);
    CHECK(p[1].imm == 0xffff);
    CHECK(p[3].code == 0x74);
    CHECK(p[3].imm == 16);
    CHECK(p[4].off == 4);
    CHECK(int{p[5].dst_reg} == 5);
    CHECK(p[5].off == 8);
    CHECK(p[6].code == 0xb4);
    CHECK(p[7].code == 0x95);
  }

  TEST_CASE("golden: no rules denies everything") {
    CHECK(Listing(DeviceProgram({})) == std::string(kPrologue) +
                                            "6: (b4) w0 = 0\n"
                                            "7: (95) exit\n");
  }

  TEST_CASE("golden: deny all, then one device") {
    // The leading "a" deny becomes the final verdict.
    CHECK(Listing(DeviceProgram({Deny('a', -1, -1), R('c', 240, 0)})) ==
          std::string(kPrologue) +
              "6: (55) if r2 != 0x2 goto pc+4\n"
              "7: (55) if r4 != 0xf0 goto pc+3\n"
              "8: (55) if r5 != 0x0 goto pc+2\n"
              "9: (b4) w0 = 1\n"
              "10: (95) exit\n"
              "11: (b4) w0 = 0\n"
              "12: (95) exit\n");
  }

  TEST_CASE("golden: wildcard minor, wildcard major") {
    CHECK(Listing(DeviceProgram({R('c', 136, -1), R('c', -1, 3)})) ==
          std::string(kPrologue) +
              "6: (55) if r2 != 0x2 goto pc+3\n"
              "7: (55) if r5 != 0x3 goto pc+2\n"
              "8: (b4) w0 = 1\n"
              "9: (95) exit\n"
              "10: (55) if r2 != 0x2 goto pc+3\n"
              "11: (55) if r4 != 0x88 goto pc+2\n"
              "12: (b4) w0 = 1\n"
              "13: (95) exit\n"
              "14: (b4) w0 = 0\n"
              "15: (95) exit\n");
  }

  TEST_CASE("golden: access subset for an allow, overlap for a deny") {
    CHECK(Listing(DeviceProgram({R('c', 1, 3, "rw"), Deny('c', 1, 3, "w")})) ==
          std::string(kPrologue) +
              // deny c 1:3 w: matches when the access includes w
              "6: (55) if r2 != 0x2 goto pc+7\n"
              "7: (bc) w1 = w3\n"
              "8: (54) w1 &= 4\n"
              "9: (15) if r1 == 0x0 goto pc+4\n"
              "10: (55) if r4 != 0x1 goto pc+3\n"
              "11: (55) if r5 != 0x3 goto pc+2\n"
              "12: (b4) w0 = 0\n"
              "13: (95) exit\n"
              // allow c 1:3 rw: matches when the access is within rw
              "14: (55) if r2 != 0x2 goto pc+7\n"
              "15: (bc) w1 = w3\n"
              "16: (54) w1 &= 6\n"
              "17: (5d) if r1 != r3 goto pc+4\n"
              "18: (55) if r4 != 0x1 goto pc+3\n"
              "19: (55) if r5 != 0x3 goto pc+2\n"
              "20: (b4) w0 = 1\n"
              "21: (95) exit\n"
              "22: (b4) w0 = 0\n"
              "23: (95) exit\n");
  }

  TEST_CASE("golden: block device, mknod only") {
    CHECK(Listing(DeviceProgram({R('b', 8, -1, "m")})) == std::string(kPrologue) +
                                                              "6: (55) if r2 != 0x1 goto pc+6\n"
                                                              "7: (bc) w1 = w3\n"
                                                              "8: (54) w1 &= 1\n"
                                                              "9: (5d) if r1 != r3 goto pc+3\n"
                                                              "10: (55) if r4 != 0x8 goto pc+2\n"
                                                              "11: (b4) w0 = 1\n"
                                                              "12: (95) exit\n"
                                                              "13: (b4) w0 = 0\n"
                                                              "14: (95) exit\n");
  }

  TEST_CASE("golden: an 'a' rule ends the program; its fields are ignored") {
    // Rules before the last 'a' cannot decide anything: no code for them (the
    // verifier refuses unreachable instructions).
    std::string want = std::string(kPrologue) +
                       "6: (55) if r2 != 0x2 goto pc+4\n"
                       "7: (55) if r4 != 0xf0 goto pc+3\n"
                       "8: (55) if r5 != 0x0 goto pc+2\n"
                       "9: (b4) w0 = 1\n"
                       "10: (95) exit\n"
                       "11: (b4) w0 = 1\n"
                       "12: (95) exit\n";
    CHECK(Listing(DeviceProgram({Deny('c', 1, 3), R('a', -1, -1), R('c', 240, 0)})) == want);
    CHECK(Listing(DeviceProgram({R('a', 7, 7, "r"), R('c', 240, 0)})) == want);
  }

  TEST_CASE("a rule without access gets no code") {
    CHECK(DeviceProgram({R('c', 1, 3, "")}).size() == 8);
    CHECK(DeviceProgram({R('c', 1, 3, "x")}).size() == 8);
  }

  TEST_CASE("golden: runc spec's rules, runc 1.1's defaults and one activated device") {
    std::vector<DeviceRule> rules = RuncSpecRules();
    rules.push_back(R('c', 240, 0));
    // Compare with `bpftool prog dump xlated id ID` of the program the hook
    // attaches (the kernel shows it the same way).
    const std::string want = std::string(kPrologue) +
                             "6: (55) if r2 != 0x2 goto pc+4\n"  // c 240:0 rwm (ours)
                             "7: (55) if r4 != 0xf0 goto pc+3\n"
                             "8: (55) if r5 != 0x0 goto pc+2\n"
                             "9: (b4) w0 = 1\n"
                             "10: (95) exit\n"
                             "11: (55) if r2 != 0x2 goto pc+4\n"  // c 10:200 rwm (tun)
                             "12: (55) if r4 != 0xa goto pc+3\n"
                             "13: (55) if r5 != 0xc8 goto pc+2\n"
                             "14: (b4) w0 = 1\n"
                             "15: (95) exit\n"
                             "16: (55) if r2 != 0x2 goto pc+4\n"  // c 5:2 rwm (ptmx)
                             "17: (55) if r4 != 0x5 goto pc+3\n"
                             "18: (55) if r5 != 0x2 goto pc+2\n"
                             "19: (b4) w0 = 1\n"
                             "20: (95) exit\n"
                             "21: (55) if r2 != 0x2 goto pc+3\n"  // c 136:* rwm (pts)
                             "22: (55) if r4 != 0x88 goto pc+2\n"
                             "23: (b4) w0 = 1\n"
                             "24: (95) exit\n"
                             "25: (55) if r2 != 0x2 goto pc+4\n"  // c 1:9 rwm (urandom)
                             "26: (55) if r4 != 0x1 goto pc+3\n"
                             "27: (55) if r5 != 0x9 goto pc+2\n"
                             "28: (b4) w0 = 1\n"
                             "29: (95) exit\n"
                             "30: (55) if r2 != 0x2 goto pc+4\n"  // c 1:5 rwm (zero)
                             "31: (55) if r4 != 0x1 goto pc+3\n"
                             "32: (55) if r5 != 0x5 goto pc+2\n"
                             "33: (b4) w0 = 1\n"
                             "34: (95) exit\n"
                             "35: (55) if r2 != 0x2 goto pc+4\n"  // c 5:0 rwm (tty)
                             "36: (55) if r4 != 0x5 goto pc+3\n"
                             "37: (55) if r5 != 0x0 goto pc+2\n"
                             "38: (b4) w0 = 1\n"
                             "39: (95) exit\n"
                             "40: (55) if r2 != 0x2 goto pc+4\n"  // c 1:7 rwm (full)
                             "41: (55) if r4 != 0x1 goto pc+3\n"
                             "42: (55) if r5 != 0x7 goto pc+2\n"
                             "43: (b4) w0 = 1\n"
                             "44: (95) exit\n"
                             "45: (55) if r2 != 0x2 goto pc+4\n"  // c 1:8 rwm (random)
                             "46: (55) if r4 != 0x1 goto pc+3\n"
                             "47: (55) if r5 != 0x8 goto pc+2\n"
                             "48: (b4) w0 = 1\n"
                             "49: (95) exit\n"
                             "50: (55) if r2 != 0x2 goto pc+4\n"  // c 1:3 rwm (null)
                             "51: (55) if r4 != 0x1 goto pc+3\n"
                             "52: (55) if r5 != 0x3 goto pc+2\n"
                             "53: (b4) w0 = 1\n"
                             "54: (95) exit\n"
                             "55: (55) if r2 != 0x1 goto pc+5\n"  // b *:* m
                             "56: (bc) w1 = w3\n"
                             "57: (54) w1 &= 1\n"
                             "58: (5d) if r1 != r3 goto pc+2\n"
                             "59: (b4) w0 = 1\n"
                             "60: (95) exit\n"
                             "61: (55) if r2 != 0x2 goto pc+5\n"  // c *:* m
                             "62: (bc) w1 = w3\n"
                             "63: (54) w1 &= 1\n"
                             "64: (5d) if r1 != r3 goto pc+2\n"
                             "65: (b4) w0 = 1\n"
                             "66: (95) exit\n"
                             "67: (b4) w0 = 0\n"  // a *:* rwm deny (runc spec)
                             "68: (95) exit\n";
    CHECK(Listing(DeviceProgram(rules)) == want);
  }

  TEST_CASE("decisions of the runc-spec program with one activated device") {
    std::vector<DeviceRule> rules = RuncSpecRules();
    rules.push_back(R('c', 240, 0));
    auto prog = DeviceProgram(rules);
    CHECK(Run(prog, kChar, kR | kW, 1, 3) == 1);     // /dev/null
    CHECK(Run(prog, kChar, kR, 136, 7) == 1);        // a pty
    CHECK(Run(prog, kChar, kR | kW, 10, 200) == 1);  // tun
    CHECK(Run(prog, kChar, kR, 240, 0) == 1);        // ours
    CHECK(Run(prog, kChar, kW, 240, 0) == 1);
    CHECK(Run(prog, kChar, kR, 240, 1) == 0);  // a neighbour of ours
    CHECK(Run(prog, kChar, kR, 241, 0) == 0);
    CHECK(Run(prog, kChar, kR, 10, 229) == 0);  // fuse: not listed
    CHECK(Run(prog, kBlock, kR, 8, 0) == 0);    // a disk
    CHECK(Run(prog, kBlock, kM, 8, 0) == 1);    // mknod is allowed for all
    CHECK(Run(prog, kChar, kM, 10, 229) == 1);
    CHECK(Run(prog, kBlock, kR, 1, 3) == 0);  // block 1:3 is not /dev/null
  }

  TEST_CASE("a later deny of w also denies read-write, after an allow of rwm") {
    auto prog = DeviceProgram({Deny('a', -1, -1), R('c', 240, 0), Deny('c', 240, 0, "w")});
    CHECK(Run(prog, kChar, kR, 240, 0) == 1);
    CHECK(Run(prog, kChar, kW, 240, 0) == 0);
    CHECK(Run(prog, kChar, kR | kW, 240, 0) == 0);
  }

  TEST_CASE("the program agrees with the reference semantics on every access") {
    const std::vector<std::vector<DeviceRule>> lists = {
        {},
        {R('a', -1, -1)},
        {Deny('a', -1, -1)},
        RuncSpecRules(),
        {Deny('a', -1, -1), R('c', 1, -1, "r"), Deny('c', 1, 3, "r"), R('b', -1, 0, "w")},
        {R('a', -1, -1), Deny('c', 1, 3), R('c', 1, 3, "r"), Deny('b', 8, -1, "rw")},
        {Deny('a', -1, -1), R('c', 1, 3, "r"), R('c', 1, 3, "w"), Deny('c', -1, -1, "m")},
        {R('c', 240, 0), Deny('c', 240, -1, "m"), R('a', 0, 0, "m"), Deny('c', 5, 2, "rm")},
    };
    const uint32_t numbers[] = {0, 1, 2, 3, 5, 8, 136, 240};
    for (size_t l = 0; l < lists.size(); ++l) {
      auto prog = DeviceProgram(lists[l]);
      for (int type : {kChar, kBlock})
        for (int access = 1; access < 8; ++access)
          for (uint32_t major : numbers)
            for (uint32_t minor : numbers) {
              CAPTURE(l);
              CAPTURE(type);
              CAPTURE(access);
              CAPTURE(major);
              CAPTURE(minor);
              REQUIRE(Run(prog, type, access, major, minor) ==
                      (ModelAllows(lists[l], type, access, major, minor) ? 1 : 0));
            }
    }
  }

  TEST_CASE("jump offsets stay inside the program and end at a block start") {
    auto prog = DeviceProgram(RuncSpecRules());
    for (size_t i = 0; i < prog.size(); ++i) {
      if (BPF_CLASS(prog[i].code) != BPF_JMP || BPF_OP(prog[i].code) == BPF_EXIT) continue;
      size_t target = i + 1 + static_cast<size_t>(prog[i].off);
      CAPTURE(i);
      REQUIRE(target < prog.size());
      // Every block starts right after an exit.
      CHECK(prog[target - 1].code == (BPF_JMP | BPF_EXIT));
    }
  }

}  // TEST_SUITE

TEST_SUITE("runc_device_rules") {
  TEST_CASE("config rules first, then runc 1.1's defaults in its order") {
    std::vector<DeviceRule> got = RuncDeviceRules({Deny('a', -1, -1), R('c', 10, 229, "rw")}, {});
    std::vector<DeviceRule> want = {Deny('a', -1, -1),   R('c', 10, 229, "rw"), R('c', -1, -1, "m"),
                                    R('b', -1, -1, "m"), R('c', 1, 3),          R('c', 1, 8),
                                    R('c', 1, 7),        R('c', 5, 0),          R('c', 1, 5),
                                    R('c', 1, 9),        R('c', 136, -1),       R('c', 5, 2),
                                    R('c', 10, 200)};
    CHECK(got == want);
    CHECK(RuncDefaultDevices().size() == 11);
  }

  TEST_CASE("a default whose node linux.devices lists is dropped, as runc does") {
    std::vector<DeviceRule> got =
        RuncDeviceRules({}, {"/dev/null", "/dev/tty", "/dev/net/tun", "/dev/fuse"});
    std::vector<DeviceRule> want = {R('c', -1, -1, "m"), R('b', -1, -1, "m"), R('c', 1, 8),
                                    R('c', 1, 7),        R('c', 1, 5),        R('c', 1, 9),
                                    R('c', 136, -1),     R('c', 5, 2),        R('c', 10, 200)};
    CHECK(got == want);
  }

}  // TEST_SUITE

TEST_SUITE("device_cgroup") {
  namespace {

  // This machine: v1 controllers and cgroup2 at /sys/fs/cgroup/unified.
  const std::string kHybridMounts =
      "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
      "23 27 0:22 / /sys rw,relatime - sysfs sysfs rw\n"
      "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
      "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
      "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
      "36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n"
      "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
  const std::string kHybridCgroup =
      "5:devices:/ocid-it/c1\n4:memory:/ocid-it/c1\n1:cpu:/ocid-it/c1\n0::/ocid-it/c1\n";

  DeviceCgroupLocation Locate(const std::string& cgroup, const std::string& mounts) {
    DeviceCgroupLocation loc;
    Error err;
    REQUIRE_MESSAGE(LocateDeviceCgroup(cgroup, mounts, &loc, &err), err.Line());
    return loc;
  }

  std::string LocateError(const std::string& cgroup, const std::string& mounts) {
    DeviceCgroupLocation loc;
    Error err;
    CHECK_FALSE(LocateDeviceCgroup(cgroup, mounts, &loc, &err));
    return err.Line();
  }

  }  // namespace

  TEST_CASE("hybrid host: v1 for devices") {
    DeviceCgroupLocation loc = Locate(kHybridCgroup, kHybridMounts);
    CHECK(loc.mode == CgroupMode::kV1);
    CHECK(loc.path == "/sys/fs/cgroup/devices/ocid-it/c1");
    // A v1 mount of a subtree shows the group relative to its root.
    std::string sub = kHybridMounts.substr(0, kHybridMounts.find("36 31")) +
                      "36 31 0:32 /ocid-it /mnt/dev rw,relatime - cgroup cgroup rw,devices\n";
    CHECK(Locate(kHybridCgroup, sub).path == "/mnt/dev/c1");
  }

  TEST_CASE("pure v1 host") {
    std::string mounts = kHybridMounts.substr(0, kHybridMounts.find("41 31"));
    CHECK(Locate("5:devices:/a\n4:memory:/a\n", mounts).mode == CgroupMode::kV1);
  }

  TEST_CASE("pure v2 host") {
    const std::string mounts =
        "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
        "23 27 0:22 / /sys rw,relatime - sysfs sysfs rw\n"
        "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
    DeviceCgroupLocation loc = Locate("0::/system.slice/runc-c1.scope\n", mounts);
    CHECK(loc.mode == CgroupMode::kV2);
    CHECK(loc.path == "/sys/fs/cgroup/system.slice/runc-c1.scope");
    CHECK(Locate("0::/\n", mounts).path == "/sys/fs/cgroup");
  }

  TEST_CASE("cgroup2 mounted over the hybrid tree in a private namespace (runc on pure v2 here)") {
    // The v1 hierarchies are still listed, under the covered tmpfs; the
    // kernel still lists a devices line (the root of the v1 devices tree).
    std::string mounts =
        kHybridMounts + "63 31 0:38 / /sys/fs/cgroup rw,relatime - cgroup2 none rw\n";
    DeviceCgroupLocation loc = Locate("5:devices:/\n4:memory:/\n0::/ocid-it/c1\n", mounts);
    CHECK(loc.mode == CgroupMode::kV2);
    // Not /sys/fs/cgroup/unified/...: that mount is covered too.
    CHECK(loc.path == "/sys/fs/cgroup/ocid-it/c1");
  }

  TEST_CASE("a devices hierarchy covered by a mount on its own path is not used") {
    std::string mounts =
        kHybridMounts + "70 36 0:50 / /sys/fs/cgroup/devices rw - tmpfs tmpfs rw\n";
    DeviceCgroupLocation loc = Locate(kHybridCgroup, mounts);
    CHECK(loc.mode == CgroupMode::kV2);
    CHECK(loc.path == "/sys/fs/cgroup/unified/ocid-it/c1");
  }

  TEST_CASE("a cgroup2 mount of a subtree") {
    const std::string mounts =
        "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
        "40 27 0:26 /kubepods /mnt/cg rw - cgroup2 cgroup2 rw\n";
    CHECK(Locate("0::/kubepods/pod1/c1\n", mounts).path == "/mnt/cg/pod1/c1");
    CHECK(LocateError("0::/system.slice/c1\n", mounts).find("no cgroup2 mount shows it") !=
          std::string::npos);
  }

  TEST_CASE("neither mode: clear errors") {
    std::string mounts = kHybridMounts.substr(0, kHybridMounts.find("36 31"));
    CHECK(LocateError("5:devices:/a\n", mounts).find("no v1 devices hierarchy is mounted") !=
          std::string::npos);
    CHECK(LocateError("4:memory:/a\n", mounts).find("neither") != std::string::npos);
    CHECK(LocateError("0::/a\n", mounts).find("no cgroup2 mount") != std::string::npos);
  }

}  // TEST_SUITE
