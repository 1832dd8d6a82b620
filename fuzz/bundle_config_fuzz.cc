// ParseBundleConfig on arbitrary bytes (a container's config.json: whoever
// starts a container writes it), then the activation decision on the parsed
// result, as the hook takes it: DecideActivation and CheckPolicy against two
// fixed inventories, one plain and one with an activation policy.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "activation.h"
#include "bundle_config.h"
#include "fuzz_check.h"
#include "inventory.h"

namespace {

const char kPlain[] = R"({
  "activation_flag": "OCI_ONLOAD",
  "driver_feature": ["onload", "zf"],
  "inventory": {"onload": {"devices": ["onload"]}, "zf": {"binaries": ["/usr/bin/zf"]}}
})";

const char kPolicy[] = R"({
  "activation_flag": "OCI_RDMA",
  "driver_feature": ["verbs", "cm", "umad"],
  "activation_policy": {"sources": ["annotation"],
                        "require_annotations": {"tenant": "hpc"},
                        "refuse_privileged": true},
  "inventory": {"verbs": {"devices": ["infiniband/uverbs0"]},
                "cm": {"devices": ["infiniband/rdma_cm"]},
                "umad": {"devices": ["infiniband/umad0"]}}
})";

const std::vector<ocid::Inventory>& Inventories() {
  static const std::vector<ocid::Inventory> invs = [] {
    std::vector<ocid::Inventory> v;
    for (const char* text : {kPlain, kPolicy}) {
      ocid::Inventory inv;
      ocid::Error err;
      FUZZ_CHECK(ocid::ParseInventory(text, "/fuzz/inventory.json", &inv, &err));
      v.push_back(std::move(inv));
    }
    return v;
  }();
  return invs;
}

// `sub` is a subsequence of `all` without repeats: in driver_feature order.
bool InOrderSubset(const std::vector<std::string>& sub, const std::vector<std::string>& all) {
  size_t i = 0;
  for (const auto& s : sub) {
    while (i < all.size() && all[i] != s) ++i;
    if (i == all.size()) return false;
    ++i;
  }
  return true;
}

void CheckActivation(std::string_view bytes, const ocid::BundleConfig& cfg,
                     const ocid::Inventory& inv) {
  ocid::Activation a;
  ocid::Error err;
  if (!ocid::DecideActivation(inv, cfg.env, cfg.annotations, &a, &err)) {
    ocid_fuzz::CheckErrorLine(err);
    return;
  }
  FUZZ_CHECK(a.active == !a.features.empty());
  FUZZ_CHECK(InOrderSubset(a.features, inv.driver_features));
  FUZZ_CHECK(a.active == !a.source.empty());
  if (a.active) {
    // The hook decides whether a container can have asked without parsing
    // (decision.cc): a flag that does not occur in config.json cannot be in
    // its env or annotations. Exact for JSON without escapes; with them the
    // hook parses whenever an escape could spell a flag character.
    if (bytes.find('\\') == std::string_view::npos)
      FUZZ_CHECK(bytes.find(inv.activation_flag) != std::string_view::npos);
    // A source the policy does not accept never activates.
    if (!inv.policy.accept_env) FUZZ_CHECK(a.source.rfind("env ", 0) != 0);
    if (!inv.policy.accept_annotation)
      FUZZ_CHECK(a.source.rfind("annotation ", 0) != 0 &&
                 a.source.find(", annotation ") == std::string::npos);
  }
  ocid::Error perr;
  if (!ocid::CheckPolicy(inv, a, cfg, cfg.annotations, &perr)) {
    ocid_fuzz::CheckErrorLine(perr);
    FUZZ_CHECK(a.active);
  } else if (a.active) {
    for (const auto& [name, want] : inv.policy.require_annotations) {
      auto it = cfg.annotations.find(name);
      FUZZ_CHECK(it != cfg.annotations.end() && it->second == want);
    }
    if (inv.policy.refuse_privileged) FUZZ_CHECK(ocid::PrivilegedReason(cfg).empty());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ocid::BundleConfig cfg;
  ocid::Error err;
  if (!ocid::ParseBundleConfig(bytes, "/fuzz/bundle/config.json", &cfg, &err)) {
    ocid_fuzz::CheckErrorLine(err);
    return 0;
  }
  // What ParseBundleConfig promises (bundle_config.h).
  FUZZ_CHECK(!cfg.root_path.empty());
  for (const auto& d : cfg.devices) {
    FUZZ_CHECK(!d.path.empty());
    FUZZ_CHECK(d.type == 'c' || d.type == 'b' || d.type == 'u' || d.type == 'p');
  }
  for (const auto& r : cfg.device_rules) {
    FUZZ_CHECK(r.type == 'a' || r.type == 'b' || r.type == 'c');
    FUZZ_CHECK(r.major >= -1 && r.major <= static_cast<int64_t>(UINT32_MAX));
    FUZZ_CHECK(r.minor >= -1 && r.minor <= static_cast<int64_t>(UINT32_MAX));
    // Non-empty, in the canonical order "rwm".
    std::string canon;
    for (char c : {'r', 'w', 'm'})
      if (r.access.find(c) != std::string::npos) canon += c;
    FUZZ_CHECK(!r.access.empty() && r.access == canon);
  }
  std::string rootfs = ocid::RootfsPath("/run/fuzz/bundle", "", cfg.root_path);
  FUZZ_CHECK(!rootfs.empty() && rootfs[0] == '/');

  for (const auto& inv : Inventories()) CheckActivation(bytes, cfg, inv);
  return 0;
}
