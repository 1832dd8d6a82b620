// Onload's version strings built the way Onload's own build builds them, for
// the version lock's tests. Upstream: github.com/Xilinx-CNS/onload at
// ef17681d36a1 (master, 2026-07-22).
//
// - A release: scripts/lib/mkdist/preprocess_source:54 (update_product_strings)
//   writes  #define ONLOAD_VERSION "$version "ONLOAD_BUILD_PROFILE
//   and line 56 ONLOAD_PRODUCT "$Product" (scripts/onload_mkdist:118-134:
//   Onload, CloudOnload, EnterpriseOnload or --product).
// - A git build: scripts/onload_version_gen:12-24 writes
//   "<%h> <%cd, --date=short>[ <branch or tag>] "ONLOAD_BUILD_PROFILE, line 6
//   ONLOAD_PRODUCT "Onload", line 8 the copyright.
// - ONLOAD_BUILD_PROFILE is "" by default, "cloud" or "ulhelper"
//   (src/include/ci/internal/transport_config_opt{,_cloud,_ulhelper}.h).
// - The library's banner: src/lib/transport/unix/startup.c:719,
//   ONLOAD_PRODUCT" "ONLOAD_VERSION"\n"ONLOAD_COPYRIGHT"\n" "Built: ..." and
//   the build profile header, one NUL-terminated C string.
// - The module: src/driver/linux_onload/driver.c:44 MODULE_VERSION(ONLOAD_VERSION);
//   the kernel shows it in /sys/module/onload/version followed by "\n".
//
// Seen in a real build of that commit (scripts/onload_build --user64, gcc 12,
// Debian 12): lib/transport/unix/libcitransport0.so, installed as
// libonload.so (scripts/onload_install:206), is 6,639,008 bytes; its banner
// starts at offset 589,896 and is one string ending in a NUL at 590,087:
//   "Onload ef17681d 2026-07-22 master \nCopyright (c) 2002-2026 Advanced
//   Micro Devices, Inc.\nBuilt: Nov 25 2026 08:41:30 (release)\nBuild profile
//   header: <ci/internal/transport_config_opt_extra.h>\n"
// and the strings before it include "EtherFabric transport library: failed
// to initialise (%d)"; other strings of the file start "Onload " too ("Onload
// does not support TCP disconnect via connect(...)").
#pragma once
#include <string>

namespace ocid_test {

// preprocess_source:54: the version, a space, the build profile.
inline std::string ReleaseVersion(const std::string& version, const std::string& profile = "") {
  return version + " " + profile;
}

// onload_version_gen:16-24: hash and date, " <name>" when HEAD is a branch
// or an exact tag, a space, the build profile.
inline std::string GitVersion(const std::string& hash_date, const std::string& name,
                              const std::string& profile = "") {
  return hash_date + (name.empty() ? "" : " " + name) + " " + profile;
}

// The ONLOAD_VERSION of the real build above.
inline const std::string kGitBuild = GitVersion("ef17681d 2026-07-22", "master");

// startup.c:719, as that build wrote it (without the terminating NUL).
inline std::string Banner(const std::string& onload_version,
                          const std::string& product = "Onload") {
  return product + " " + onload_version + "\n" +
         "Copyright (c) 2002-2026 Advanced Micro Devices, Inc.\n"
         "Built: Nov 25 2026 08:41:30 (release)\n"
         "Build profile header: <ci/internal/transport_config_opt_extra.h>\n";
}

// /sys/module/onload/version: driver.c:44's string and the kernel's newline.
inline std::string ModuleFile(const std::string& onload_version) { return onload_version + "\n"; }

// A library laid out like the real one: `size` bytes, the banner (and its
// NUL) at `at`, after the real neighbours and decoys that start "Onload ".
inline std::string RealLibrary(const std::string& banner, size_t at = 589896,
                               size_t size = 6639008) {
  std::string s =
      "\x7f"
      "ELF\x02\x01\x01";
  for (size_t i = 0; s.size() < size; ++i) s.push_back(static_cast<char>((i * 131) % 251));
  static const char kBefore[] =
      "Onload does not support TCP disconnect via connect(addr->sa_family==AF_UNSPEC)\0"
      "the Onload stack\0EtherFabric transport library: failed to initialise (%d)\0";
  const std::string before(kBefore, sizeof kBefore - 1);
  s.replace(at - before.size(), before.size(), before);
  s.replace(at, banner.size() + 1, banner + std::string(1, '\0'));
  return s;
}

}  // namespace ocid_test
