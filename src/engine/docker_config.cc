#include "docker_config.h"

#include <nlohmann/json.hpp>

#include "json_text.h"

namespace ocid {
namespace {

// An empty file, or one of blanks only: docker reads it as no settings.
bool IsBlank(std::string_view bytes) {
  return bytes.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

}  // namespace

bool MergeDockerRuntime(const std::string& bytes, const std::string& file, const std::string& name,
                        const std::string& path, DockerMerge* out, Error* err) {
  using ordered = nlohmann::ordered_json;
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
  ordered& runtimes = j["runtimes"];
  if (runtimes.is_null()) runtimes = ordered::object();
  if (!runtimes.is_object()) return Fail(err, "\"runtimes\" is not an object in", file);
  ordered& entry = runtimes[name];
  if (entry.is_null()) entry = ordered::object();
  if (!entry.is_object())
    return Fail(err, "\"runtimes\".\"" + name + "\" is not an object in", file);
  auto p = entry.find("path");
  if (p != entry.end() && p->is_string()) out->old_path = p->get<std::string>();
  out->changed = out->old_path != path;
  entry["path"] = path;
  try {
    out->json = out->changed ? j.dump(2) + "\n" : bytes;
    out->runtimes = runtimes.dump(2);
    // Indented to sit under "  \"runtimes\": " in messages.
    for (size_t i = 0; (i = out->runtimes.find('\n', i)) != std::string::npos; i += 3)
      out->runtimes.insert(i + 1, "  ");
  } catch (const ordered::exception& e) {
    return Fail(err, "cannot render docker's daemon configuration " + file, e.what());
  }
  return true;
}

bool ParseDockerRuntimes(std::string_view bytes, const std::string& file,
                         std::vector<std::pair<std::string, std::string>>* out, Error* err) {
  out->clear();
  if (IsBlank(bytes)) return true;  // docker accepts an empty file
  nlohmann::json j;
  std::string why;
  if (!ParseJsonText(bytes, &j, &why)) return Fail(err, "not valid JSON (" + why + ")", file);
  if (!j.is_object()) return Fail(err, "not a JSON object", file);
  auto it = j.find("runtimes");
  if (it == j.end()) return true;
  if (!it->is_object()) return Fail(err, "\"runtimes\" is not an object", file);
  for (const auto& [name, v] : it->items())
    if (v.is_object() && v.contains("path") && v["path"].is_string())
      out->emplace_back(name, v["path"].get<std::string>());
  return true;
}

}  // namespace ocid
