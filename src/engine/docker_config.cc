#include "docker_config.h"

#include <nlohmann/json.hpp>

#include "json_text.h"
#include "shim_config.h"

namespace ocid {
namespace {

using ordered = nlohmann::ordered_json;

// An empty file, or one of blanks only: docker reads it as no settings.
bool IsBlank(std::string_view bytes) {
  return bytes.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

std::vector<std::string> StringsOf(const ordered& j) {
  std::vector<std::string> v;
  if (j.is_array())
    for (const auto& x : j)
      if (x.is_string()) v.push_back(x.get<std::string>());
  return v;
}

// The runtime registered with `path` other than `except`, "" if none.
std::string RuntimeWithPath(const ordered& runtimes, const std::string& path,
                            const std::string& except) {
  for (const auto& [name, v] : runtimes.items())
    if (name != except && v.is_object() && v.contains("path") && v["path"].is_string() &&
        v["path"].get<std::string>() == path)
      return name;
  return "";
}

// The entry's runtimeArgs without the shim's runtime option; *removed
// when there was one.
std::vector<std::string> WithoutShimRuntime(const std::vector<std::string>& args, bool* removed) {
  std::vector<bool> drop(args.size(), false);
  *removed = false;
  // An option without its value ends the walk; those before it are seen.
  Error ignored;
  ForEachShimOption(
      args,
      [&](size_t i, size_t n, const std::string& opt, const std::string&) {
        if (opt == kShimRuntimeArg) {
          for (size_t k = i; k < i + n; ++k) drop[k] = true;
          *removed = true;
        }
        return true;
      },
      &ignored);
  std::vector<std::string> kept;
  for (size_t i = 0; i < args.size(); ++i)
    if (!drop[i]) kept.push_back(args[i]);
  return kept;
}

void SetArgs(ordered& entry, const std::vector<std::string>& args) {
  if (args.empty())
    entry.erase("runtimeArgs");
  else
    entry["runtimeArgs"] = args;
}

// The new "default-runtime" into *value ("" = leave it), the shim's
// runtimeArgs changed with it. Touches only `runtimes`: the caller writes
// *value (ordered_json keeps members in a vector, so a key added to the
// document would move `runtimes`).
bool SetDefault(ordered& runtimes, const std::string& file, const DockerSetupRequest& req,
                DockerMerge* out, std::string* value, Error* err) {
  ordered& entry = runtimes[req.name];
  const std::string& old = out->old_default;
  if (req.default_runtime == DockerDefault::kSet) {
    if (old.empty() || old == kDockerStockRuntime || old == req.name) {
      *value = req.name;
      return true;
    }
    if (!req.wrap_default)
      return Fail(err,
                  "--default-runtime would replace docker's default runtime \"" + old +
                      "\" (add --wrap-default to make the shim the default and have it run \"" +
                      old + "\" for every container), set in",
                  file);
    auto it = runtimes.find(old);
    if (it == runtimes.end() || !it->is_object() || !it->contains("path") ||
        !(*it)["path"].is_string() || (*it)["path"].get<std::string>().empty() ||
        (*it)["path"].get<std::string>()[0] != '/')
      return Fail(err,
                  "--wrap-default: the default runtime \"" + old +
                      "\" has no absolute \"path\" under \"runtimes\" (the shim runs a runtime "
                      "by absolute path only) in",
                  file);
    if (it->contains("runtimeArgs") && !StringsOf((*it)["runtimeArgs"]).empty())
      return Fail(err,
                  "--wrap-default: the default runtime \"" + old +
                      "\" has \"runtimeArgs\", which the shim cannot pass on for it, in",
                  file);
    std::string path = (*it)["path"].get<std::string>();
    bool had = false;
    std::vector<std::string> args = WithoutShimRuntime(StringsOf(entry["runtimeArgs"]), &had);
    args.insert(args.begin(), std::string(kShimRuntimeArg) + "=" + path);
    SetArgs(entry, args);
    *value = req.name;
    out->wrapped = old;
    return true;
  }
  // kUnset.
  if (old != req.name) return true;
  std::vector<std::string> args = StringsOf(entry["runtimeArgs"]);
  std::string ran = ShimRuntimeOf(args);
  std::string back = ran.empty() ? "" : RuntimeWithPath(runtimes, ran, req.name);
  if (!back.empty()) {
    bool had = false;
    SetArgs(entry, WithoutShimRuntime(args, &had));
    out->wrapped = back;
  }
  *value = back.empty() ? kDockerStockRuntime : back;
  return true;
}

}  // namespace

std::string ShimRuntimeOf(const std::vector<std::string>& args) {
  std::vector<std::string> rest = args;
  ShimOptions opts;
  Error err;
  if (!TakeShimOptions(&rest, &opts, &err)) return "";
  return opts.runtime.value_or("");
}

bool MergeDockerSetup(const std::string& bytes, const std::string& file,
                      const DockerSetupRequest& req, DockerMerge* out, Error* err) {
  *out = DockerMerge{};
  ordered j = ordered::object();
  if (!IsBlank(bytes)) {
    try {
      j = ordered::parse(bytes);
    } catch (const ordered::parse_error& e) {
      std::string why = e.what();
      if (size_t p = why.find("] "); p != std::string::npos) why = why.substr(p + 2);
      return Fail(err, "invalid JSON in docker's daemon configuration (" + why + ")", file);
    }
    if (!j.is_object())
      return Fail(err, "docker's daemon configuration is not a JSON object", file);
  }
  const ordered before = j;
  if (auto d = j.find("default-runtime"); d != j.end()) {
    if (!d->is_string()) return Fail(err, "\"default-runtime\" is not a string in", file);
    out->old_default = d->get<std::string>();
  }
  ordered& runtimes = j["runtimes"];
  if (runtimes.is_null()) runtimes = ordered::object();
  if (!runtimes.is_object()) return Fail(err, "\"runtimes\" is not an object in", file);
  ordered& entry = runtimes[req.name];
  if (entry.is_null()) entry = ordered::object();
  if (!entry.is_object())
    return Fail(err, "\"runtimes\".\"" + req.name + "\" is not an object in", file);
  auto p = entry.find("path");
  if (p != entry.end() && p->is_string()) out->old_path = p->get<std::string>();
  entry["path"] = req.path;
  std::string value;
  if (req.default_runtime != DockerDefault::kLeave &&
      !SetDefault(runtimes, file, req, out, &value, err))
    return false;
  if (!value.empty()) j["default-runtime"] = value;  // `runtimes` and `entry` not used after
  if (auto d = j.find("default-runtime"); d != j.end()) out->new_default = d->get<std::string>();
  out->changed = j != before;
  try {
    out->json = out->changed ? j.dump(2) + "\n" : bytes;
    out->runtimes = j["runtimes"].dump(2);
    // Indented to sit under "  \"runtimes\": " in messages.
    for (size_t i = 0; (i = out->runtimes.find('\n', i)) != std::string::npos; i += 3)
      out->runtimes.insert(i + 1, "  ");
  } catch (const ordered::exception& e) {
    return Fail(err, "cannot render docker's daemon configuration " + file, e.what());
  }
  return true;
}

bool MergeDockerRuntime(const std::string& bytes, const std::string& file, const std::string& name,
                        const std::string& path, DockerMerge* out, Error* err) {
  DockerSetupRequest req;
  req.name = name;
  req.path = path;
  return MergeDockerSetup(bytes, file, req, out, err);
}

bool ParseDockerDaemon(std::string_view bytes, const std::string& file, DockerDaemon* out,
                       Error* err) {
  *out = DockerDaemon{};
  if (IsBlank(bytes)) return true;  // docker accepts an empty file
  nlohmann::json j;
  std::string why;
  if (!ParseJsonText(bytes, &j, &why)) return Fail(err, "not valid JSON (" + why + ")", file);
  if (!j.is_object()) return Fail(err, "not a JSON object", file);
  if (auto d = j.find("default-runtime"); d != j.end()) {
    if (!d->is_string()) return Fail(err, "\"default-runtime\" is not a string", file);
    out->default_runtime = d->get<std::string>();
  }
  auto it = j.find("runtimes");
  if (it == j.end()) return true;
  if (!it->is_object()) return Fail(err, "\"runtimes\" is not an object", file);
  for (const auto& [name, v] : it->items()) {
    if (!v.is_object() || !v.contains("path") || !v["path"].is_string()) continue;
    DockerRuntime r{name, v["path"].get<std::string>(), {}};
    if (auto a = v.find("runtimeArgs"); a != v.end() && a->is_array())
      for (const auto& x : *a)
        if (x.is_string()) r.args.push_back(x.get<std::string>());
    out->runtimes.push_back(std::move(r));
  }
  return true;
}

bool ParseDockerRuntimes(std::string_view bytes, const std::string& file,
                         std::vector<std::pair<std::string, std::string>>* out, Error* err) {
  out->clear();
  DockerDaemon d;
  if (!ParseDockerDaemon(bytes, file, &d, err)) return false;
  for (auto& r : d.runtimes) out->emplace_back(std::move(r.name), std::move(r.path));
  return true;
}

}  // namespace ocid
