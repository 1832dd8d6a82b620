// Inventory parsing on arbitrary bytes: the literal scan the hook decides
// with (QuickActivationFlags), ParseInventoryFiles as the hook loads a
// config directory (broken files kept, with their salvaged flag), and the
// activation of a parsed inventory. The same bytes also go through the
// version lock's banner scan, whole and in chunks (version_lock.h).
//
// The invariant that matters (decision.cc, LoadIfAsked): a container whose
// config.json and state mention none of the flags the quick scan found is
// not parsed further, so every flag that full parsing yields, the flag of a
// good inventory or the one salvaged from a broken file (whose askers must
// fail), must be among the quick scan's flags whenever that scan can tell.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "activation.h"
#include "fuzz_check.h"
#include "inventory.h"
#include "version_lock.h"

namespace {

const char kFile[] = "/fuzz/oci-decorator.d/vendor.json";

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

void CheckInventory(const ocid::Inventory& inv) {
  FUZZ_CHECK(inv.file == kFile);
  FUZZ_CHECK(!inv.activation_flag.empty());
  FUZZ_CHECK(!inv.driver_features.empty());
  FUZZ_CHECK(inv.features.size() == inv.driver_features.size());
  for (size_t i = 0; i < inv.features.size(); ++i) {
    const ocid::Feature& f = inv.features[i];
    FUZZ_CHECK(f.name == inv.driver_features[i]);
    FUZZ_CHECK(inv.FindFeature(f.name) == &f);
    for (const auto& e : f.entries) {
      FUZZ_CHECK(!e.sources.empty());
      FUZZ_CHECK(e.target.empty() || e.target_dir.empty());
      FUZZ_CHECK(e.target.empty() || e.target[0] == '/');
      FUZZ_CHECK(e.target_dir.empty() || e.target_dir[0] == '/');
      for (const auto& s : e.sources) {
        FUZZ_CHECK(!s.empty());
        FUZZ_CHECK(s.find('\0') == std::string::npos);
        // Devices are names under /dev, everything else absolute.
        FUZZ_CHECK((e.kind == ocid::EntryKind::kDevice) == (s[0] != '/'));
      }
    }
  }
  const ocid::VersionLock& lock = inv.version_lock;
  FUZZ_CHECK(lock.configured() == !lock.library.empty());
  if (lock.configured()) FUZZ_CHECK(lock.module_version[0] == '/');
  for (const auto& l : lock.library) FUZZ_CHECK(!l.empty() && l[0] == '/');
  for (const auto& g : lock.features) FUZZ_CHECK(Contains(inv.driver_features, g));
  for (size_t i = 0; i < inv.driver_features.size(); ++i)
    for (size_t j = i + 1; j < inv.driver_features.size(); ++j)
      FUZZ_CHECK(inv.driver_features[i] != inv.driver_features[j]);

  // Activation by the flag: "all" is every feature (where the policy takes
  // env), one feature is that one, an off value is nothing.
  const std::string& flag = inv.activation_flag;
  ocid::Activation a;
  ocid::Error err;
  FUZZ_CHECK(ocid::DecideActivation(inv, {flag + "=all"}, {}, &a, &err));
  FUZZ_CHECK(a.active == inv.policy.accept_env);
  if (a.active) FUZZ_CHECK(a.features == inv.driver_features);
  FUZZ_CHECK(ocid::DecideActivation(
      inv, {}, {{"oci-decorator/" + flag, inv.driver_features.back()}}, &a, &err));
  FUZZ_CHECK(a.active == inv.policy.accept_annotation);
  if (a.active) FUZZ_CHECK(a.features == std::vector<std::string>{inv.driver_features.back()});
  FUZZ_CHECK(
      ocid::DecideActivation(inv, {flag + "=none"}, {{"oci-decorator/" + flag, "0"}}, &a, &err));
  FUZZ_CHECK(!a.active && a.features.empty());
  ocid::Error bad;
  if (!Contains(inv.driver_features, "no-such-feature"))
    FUZZ_CHECK(!ocid::ParseActivationValue(inv, "no-such-feature", &a.features, &bad));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);

  // The banner: a valid version or nothing, the same whatever the chunking.
  std::string version = ocid::LibraryVersionFromBytes(bytes);
  FUZZ_CHECK(version.empty() || ocid::IsVersion(version));
  ocid::BannerScanner scan;
  const size_t chunk = 1 + size % 13;
  for (size_t off = 0; off < bytes.size(); off += chunk)
    scan.Feed(std::string_view(bytes).substr(off, chunk));
  FUZZ_CHECK(scan.version() == version);
  // The module's sysfs line: a valid version or nothing.
  std::string module = ocid::ModuleVersionFromBytes(bytes);
  FUZZ_CHECK(module.empty() || ocid::IsVersion(module));

  std::vector<std::string> quick;
  bool quick_ok = ocid::QuickActivationFlags(bytes, &quick);
  // It can tell for any file without a backslash (inventory.h).
  if (bytes.find('\\') == std::string::npos) FUZZ_CHECK(quick_ok);

  ocid::InventoryFile file;
  file.path = kFile;
  file.bytes = bytes;
  ocid::InventorySet set;
  ocid::ParseInventoryFiles({file}, &set);
  FUZZ_CHECK(set.inventories.size() + set.broken.size() == 1);

  std::vector<std::string> full;
  for (const auto& inv : set.inventories) full.push_back(inv.activation_flag);
  for (const auto& b : set.broken) {
    FUZZ_CHECK(b.file == kFile);
    ocid_fuzz::CheckErrorLine(b.error);
    full.push_back(b.activation_flag);
  }
  if (quick_ok)
    for (const auto& flag : full)
      if (!flag.empty()) FUZZ_CHECK(Contains(quick, flag));

  // ParseInventory alone agrees with the directory loader.
  ocid::Inventory inv;
  ocid::Error err;
  bool ok = ocid::ParseInventory(bytes, kFile, &inv, &err);
  FUZZ_CHECK(ok == (set.inventories.size() == 1));
  if (!ok) {
    ocid_fuzz::CheckErrorLine(err);
    return 0;
  }
  FUZZ_CHECK(inv.activation_flag == set.inventories[0].activation_flag);
  CheckInventory(inv);
  return 0;
}
