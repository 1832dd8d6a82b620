#include "shim_config.h"

#include <nlohmann/json.hpp>

#include "log.h"

namespace ocid {
namespace {

using nlohmann::json;

// logfmt quoting, as logrus' text formatter does for values with spaces, of
// a value already through Printable (no control byte left to escape).
std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

bool ParseShimConfig(std::string_view bytes, const std::string& where, ShimSettings* settings,
                     Error* err) {
  json j = json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (j.is_discarded()) return Fail(err, "shim config is not valid JSON", where);
  if (!j.is_object()) return Fail(err, "shim config is not a JSON object", where);
  ShimSettings s = *settings;
  for (const auto& [key, value] : j.items()) {
    std::string* field = key == "runtime"      ? &s.runtime
                         : key == "config_dir" ? &s.config_dir
                         : key == "host_root"  ? &s.host_root
                         : key == "log_level"  ? &s.log_level
                         : key == "log_file"   ? &s.log_file
                         : key == "log_target" ? &s.log_target
                         : key == "log_format" ? &s.log_format
                                               : nullptr;
    if (!field)
      return Fail(err,
                  "shim config: unknown member \"" + key +
                      "\" (known: runtime, config_dir, host_root, log_level, log_file, "
                      "log_target, log_format)",
                  where);
    if (!value.is_string() || value.get_ref<const std::string&>().empty())
      return Fail(err, "shim config: \"" + key + "\" is not a non-empty string", where);
    *field = value.get<std::string>();
  }
  *settings = s;
  return true;
}

bool ValidateShimSettings(const ShimSettings& s, Error* err) {
  if (s.runtime.empty() || s.runtime[0] != '/')
    return Fail(err, "the runtime must be an absolute path", s.runtime);
  log::Level level;
  if (!log::ParseLevel(s.log_level, &level))
    return Fail(err, "unknown log level (trace, debug, info, warn, error, off)", s.log_level);
  std::vector<log::Target> targets;
  std::string why;
  if (!s.log_target.empty() && !log::ParseTargets(s.log_target, &targets, &why))
    return Fail(err, why, s.log_target);
  log::Format format;
  if (!log::ParseFormat(s.log_format, &format))
    return Fail(err, "unknown log format (text, json)", s.log_format);
  if (s.config_dir.empty()) return Fail(err, "the config directory is empty");
  if (s.host_root.empty()) return Fail(err, "the host root is empty");
  return true;
}

std::string RuntimeLogLine(const std::string& format, const std::string& level,
                           const std::string& raw, const std::string& time) {
  // Both formats quote msg, doubling '"' and '\\': the message gets what the
  // line has left after the rest, counted as written.
  auto render = [&](const std::string& msg) {
    if (format == "json") {
      nlohmann::ordered_json j;
      j["level"] = level;
      j["msg"] = msg;
      j["time"] = time;
      return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    }
    return "time=" + Quoted(time) + " level=" + level + " msg=" + Quoted(msg);
  };
  const size_t framing = render("").size();
  return render(Printable(raw, kMaxLineBytes > framing ? kMaxLineBytes - framing : 0,
                          Quoting::kDoubled)) +
         "\n";
}

bool ForEachShimOption(const std::vector<std::string>& args, const ShimOptionVisitor& f,
                       Error* err) {
  for (size_t i = 0; i < args.size() && args[i].rfind("--ocid-", 0) == 0;) {
    const std::string& arg = args[i];
    size_t eq = arg.find('=');
    std::string name = arg.substr(0, eq);
    if (eq == std::string::npos && i + 1 >= args.size())
      return Fail(err, "shim option needs a value", name);
    size_t span = eq != std::string::npos ? 1 : 2;
    if (!f(i, span, name, eq != std::string::npos ? arg.substr(eq + 1) : args[i + 1])) return false;
    i += span;
  }
  return true;
}

bool TakeShimOptions(std::vector<std::string>* args, ShimOptions* opts, Error* err) {
  size_t taken = 0;
  auto take = [&](size_t i, size_t span, const std::string& name, const std::string& value) {
    std::optional<std::string>* field = name == "--ocid-runtime"      ? &opts->runtime
                                        : name == "--ocid-config-dir" ? &opts->config_dir
                                        : name == "--ocid-host-root"  ? &opts->host_root
                                        : name == "--ocid-config"     ? &opts->config_file
                                        : name == "--ocid-log-level"  ? &opts->log_level
                                        : name == "--ocid-log-file"   ? &opts->log_file
                                        : name == "--ocid-log-target" ? &opts->log_target
                                        : name == "--ocid-log-format" ? &opts->log_format
                                                                      : nullptr;
    if (!field)
      return Fail(err,
                  "unknown shim option (known: --ocid-runtime, --ocid-config-dir, "
                  "--ocid-host-root, --ocid-config, --ocid-log-level, --ocid-log-file, "
                  "--ocid-log-target, --ocid-log-format)",
                  name);
    if (value.empty()) return Fail(err, "shim option has an empty value", name);
    *field = value;
    taken = i + span;
    return true;
  };
  if (!ForEachShimOption(*args, take, err)) return false;
  args->erase(args->begin(), args->begin() + static_cast<std::ptrdiff_t>(taken));
  return true;
}

bool ApplyShimOptions(const ShimOptions& opts, ShimSettings* settings, Error* err) {
  ShimSettings& s = *settings;
  if (opts.runtime) s.runtime = *opts.runtime;
  if (opts.config_dir) s.config_dir = *opts.config_dir;
  if (opts.host_root) s.host_root = *opts.host_root;
  if (opts.log_level) s.log_level = *opts.log_level;
  if (opts.log_file) s.log_file = *opts.log_file;
  if (opts.log_target) s.log_target = *opts.log_target;
  if (opts.log_format) s.log_format = *opts.log_format;
  return ValidateShimSettings(s, err);
}

}  // namespace ocid
