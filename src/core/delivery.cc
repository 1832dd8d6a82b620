#include "delivery.h"

#include <sys/sysmacros.h>

#include <algorithm>

namespace ocid {

std::string UnderRoot(const std::string& root, const std::string& path) {
  std::string r = root;
  while (!r.empty() && r.back() == '/') r.pop_back();
  return r + path;
}

bool DeliveryOf(const Plan& plan, const std::string& host_path_root, Delivery* out, Error* err) {
  *out = Delivery{};
  if (!plan.preload.empty()) {
    std::string value;
    for (const auto& p : plan.preload) {
      if (p.find_first_of(" :\t\n") != std::string::npos)
        return Fail(err, "a preload path with a space or ':' cannot go into LD_PRELOAD", p);
      value += (value.empty() ? "" : " ") + p;
    }
    out->env.emplace_back("LD_PRELOAD", value);
  }
  for (const auto& e : plan.env) out->env.push_back(e);
  for (const auto& m : plan.mounts) {
    std::string host = UnderRoot(host_path_root, m.resolved.empty() ? m.source : m.resolved);
    if (m.type == FileType::kCharDevice || m.type == FileType::kBlockDevice) {
      DeliveredDevice d;
      d.host_path = std::move(host);
      d.container_path = m.target;
      d.type = m.type == FileType::kCharDevice ? 'c' : 'b';
      d.major = major(static_cast<dev_t>(m.rdev));
      d.minor = minor(static_cast<dev_t>(m.rdev));
      d.file_mode = m.mode & 07777;
      out->devices.push_back(std::move(d));
      continue;
    }
    out->mounts.push_back({std::move(host), m.target, m.readonly});
  }
  for (const auto& g : plan.groups)
    if (g.required) out->additional_gids.push_back(g.gid);
  std::sort(out->additional_gids.begin(), out->additional_gids.end());
  out->additional_gids.erase(std::unique(out->additional_gids.begin(), out->additional_gids.end()),
                             out->additional_gids.end());
  return true;
}

}  // namespace ocid
