#include "nomad_config.h"

#include <cmath>
#include <cstdlib>
#include <exception>
#include <map>
#include <msgpack.hpp>

#include "env_profile.h"
#include "error.h"
#include "slot_ids.h"

namespace ocid {
namespace {

using std::chrono::nanoseconds;

// go-cty writes an unknown value as an extension: one of at most one byte
// (any type code), or type 0x0c carrying refinements. "Not known yet" is,
// for a config, the same as null.
constexpr int8_t kCtyUnknownRefinedExt = 0x0c;

// Limits for a config of a handful of scalars: garbage claiming a 4 GiB
// array must fail fast instead of allocating.
msgpack::unpack_limit ConfigLimits() {
  return msgpack::unpack_limit(/*array=*/64, /*map=*/64, /*str=*/size_t{64} * 1024,
                               /*bin=*/size_t{64} * 1024,
                               /*ext=*/1024, /*depth=*/8);
}

const char* TypeName(const msgpack::object& o) {
  switch (o.type) {
    case msgpack::type::NIL: return "null";
    case msgpack::type::BOOLEAN: return "a bool";
    case msgpack::type::POSITIVE_INTEGER:
    case msgpack::type::NEGATIVE_INTEGER:
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64: return "a number";
    case msgpack::type::STR: return "a string";
    case msgpack::type::BIN: return "bytes";
    case msgpack::type::ARRAY: return "a list";
    case msgpack::type::MAP: return "a map";
    case msgpack::type::EXT: return "an extension value";
  }
  return "an unknown msgpack type";
}

bool IsNullish(const msgpack::object& o) {
  return o.type == msgpack::type::NIL ||
         (o.type == msgpack::type::EXT &&
          (o.via.ext.size <= 1 || o.via.ext.type() == kCtyUnknownRefinedExt));
}

std::string KeyError(const std::string& key, const std::string& what) {
  return "config key \"" + Printable(key) + "\": " + what;
}

bool AsString(const std::string& key, const msgpack::object& o, std::string* out,
              std::string* err) {
  if (o.type != msgpack::type::STR) {
    *err = KeyError(key, std::string("expected a string, got ") + TypeName(o));
    return false;
  }
  out->assign(o.via.str.ptr, o.via.str.size);
  return true;
}

bool AsBool(const std::string& key, const msgpack::object& o, bool* out, std::string* err) {
  if (o.type != msgpack::type::BOOLEAN) {
    *err = KeyError(key, std::string("expected a bool, got ") + TypeName(o));
    return false;
  }
  *out = o.via.boolean;
  return true;
}

// go-cty writes a whole number as a msgpack integer and others as float64.
bool AsWhole(const std::string& key, const msgpack::object& o, double* out, std::string* err) {
  double v = 0;
  switch (o.type) {
    case msgpack::type::POSITIVE_INTEGER: v = static_cast<double>(o.via.u64); break;
    case msgpack::type::NEGATIVE_INTEGER: v = static_cast<double>(o.via.i64); break;
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64: v = o.via.f64; break;
    default:
      *err = KeyError(key, std::string("expected a number, got ") + TypeName(o));
      return false;
  }
  if (!std::isfinite(v) || v != std::floor(v)) {
    *err = KeyError(key, "expected a whole number");
    return false;
  }
  *out = v;
  return true;
}

// Within 1..kMaxSlots, or refused naming the value and the limit (slot_ids.h).
bool AsSlots(const std::string& key, const msgpack::object& o, int* out, std::string* err) {
  double v = 0;
  if (!AsWhole(key, o, &v, err)) return false;
  if (std::string why = SlotsRefusal(v); !why.empty()) {
    *err = KeyError(key, why);
    return false;
  }
  *out = static_cast<int>(v);
  return true;
}

bool AsPath(const std::string& key, const msgpack::object& o, std::string* out, std::string* err) {
  std::string s;
  if (!AsString(key, o, &s, err)) return false;
  if (s.empty() || s[0] != '/' || s.find('\0') != std::string::npos) {
    *err = KeyError(key, "expected an absolute path, got \"" + Printable(s) + "\"");
    return false;
  }
  *out = s;
  return true;
}

bool AsPeriod(const std::string& key, const msgpack::object& o, std::chrono::seconds* out,
              std::string* err) {
  std::string s, why;
  nanoseconds d{};
  if (!AsString(key, o, &s, err)) return false;
  if (!ParseGoDuration(s, &d, &why)) {
    *err = KeyError(key, why);
    return false;
  }
  if (d < std::chrono::seconds(1) || d > std::chrono::hours(24)) {
    *err = KeyError(key, "\"" + Printable(s) + "\" must be between 1s and 24h");
    return false;
  }
  *out = std::chrono::duration_cast<std::chrono::seconds>(d);
  return true;
}

// A profile name (env_profile.h), or "" for none.
bool AsProfile(const std::string& key, const msgpack::object& v, std::string* out,
               std::string* err) {
  if (v.type != msgpack::type::STR) {
    *err = KeyError(key, std::string("expected a string, got ") + TypeName(v));
    return false;
  }
  std::string s(v.via.str.ptr, v.via.str.size);
  if (!s.empty() && !IsProfileName(s)) {
    *err =
        KeyError(key, "\"" + Printable(s) + "\" is not a profile name ([A-Za-z0-9_.-], 1 to 64)");
    return false;
  }
  *out = s;
  return true;
}

// Applies one key onto *cfg.
bool ApplyKey(const std::string& key, const msgpack::object& v, NomadConfig* cfg,
              bool* host_path_root_set, std::string* err) {
  if (key == "config_dir") return AsPath(key, v, &cfg->config_dir, err);
  if (key == "host_root") return AsPath(key, v, &cfg->host_root, err);
  if (key == "host_path_root") {
    *host_path_root_set = true;
    return AsPath(key, v, &cfg->host_path_root, err);
  }
  if (key == "set_preload") return AsBool(key, v, &cfg->set_preload, err);
  if (key == "mount_onload") return AsBool(key, v, &cfg->mount_onload, err);
  if (key == "fingerprint_period") return AsPeriod(key, v, &cfg->fingerprint_period, err);
  if (key == "slots") return AsSlots(key, v, &cfg->slots, err);
  if (key == "profile") return AsProfile(key, v, &cfg->profile, err);
  *err = "unknown config key \"" + Printable(key) + "\"";
  return false;
}

bool DecodeMap(const msgpack::object& root, NomadConfig* cfg, std::string* err) {
  if (root.type == msgpack::type::NIL) return true;  // no config block at all
  if (root.type != msgpack::type::MAP) {
    *err = std::string("msgpack_config: expected a map of config keys, got ") + TypeName(root);
    return false;
  }
  NomadConfig next = *cfg;
  bool host_root_set = false, host_path_root_set = false;
  for (uint32_t i = 0; i < root.via.map.size; ++i) {
    const msgpack::object_kv& kv = root.via.map.ptr[i];
    if (kv.key.type != msgpack::type::STR) {
      *err = std::string("msgpack_config: a key is ") + TypeName(kv.key) + ", not a string";
      return false;
    }
    std::string key(kv.key.via.str.ptr, kv.key.via.str.size);
    if (IsNullish(kv.val)) {
      // Still refuse a key we do not know, even without a value.
      bool known = false;
      for (const NomadConfigKey& k : NomadConfigKeys()) known = known || key == k.name;
      if (!known) {
        *err = "unknown config key \"" + Printable(key) + "\"";
        return false;
      }
      continue;
    }
    if (!ApplyKey(key, kv.val, &next, &host_path_root_set, err)) return false;
    host_root_set = host_root_set || key == "host_root";
  }
  // As on the command line, the paths handed out follow host_root unless
  // host_path_root says otherwise.
  if (host_root_set && !host_path_root_set) next.host_path_root = next.host_root;
  *cfg = next;
  return true;
}

}  // namespace

NomadConfig NomadConfigFrom(const PluginOptions& opts) {
  NomadConfig c;
  c.config_dir = opts.config_dir;
  c.host_root = opts.host_root;
  c.host_path_root = opts.host_path_root.empty() ? opts.host_root : opts.host_path_root;
  c.fingerprint_period = std::chrono::seconds(opts.recheck_seconds);
  c.profile = opts.profile;
  return c;
}

const std::vector<NomadConfigKey>& NomadConfigKeys() {
  static const std::vector<NomadConfigKey> keys = {
      {"config_dir", "string"}, {"host_root", "string"},  {"host_path_root", "string"},
      {"set_preload", "bool"},  {"mount_onload", "bool"}, {"fingerprint_period", "string"},
      {"slots", "number"},      {"profile", "string"},
  };
  return keys;
}

bool DecodeNomadConfig(const std::string& bytes, NomadConfig* cfg, std::string* err) {
  if (bytes.empty()) return true;
  try {
    size_t off = 0;
    bool referenced = false;
    msgpack::object_handle oh = msgpack::unpack(bytes.data(), bytes.size(), off, referenced,
                                                nullptr, nullptr, ConfigLimits());
    if (off != bytes.size()) {
      *err = "msgpack_config: " + std::to_string(bytes.size() - off) +
             " bytes of garbage after the config map";
      return false;
    }
    return DecodeMap(oh.get(), cfg, err);
  } catch (const std::exception& e) {
    *err = std::string("msgpack_config is not valid msgpack: ") + e.what();
    return false;
  }
}

bool ParseGoDuration(const std::string& text, nanoseconds* out, std::string* err) {
  static const std::map<std::string, double> units = {
      {"ns", 1},   {"us", 1e3}, {"\xC2\xB5s", 1e3}, {"\xCE\xBCs", 1e3},
      {"ms", 1e6}, {"s", 1e9},  {"m", 60e9},        {"h", 3600e9}};
  auto bad = [&](const std::string& why) {
    *err = "invalid duration \"" + Printable(text) + "\": " + why;
    return false;
  };
  if (text == "0") {
    *out = nanoseconds(0);
    return true;
  }
  if (text.empty()) return bad("empty");
  double total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.')) ++i;
    std::string num = text.substr(start, i - start);
    if (num.empty() || num == "." || num.find('.') != num.rfind('.'))
      return bad("expected a number at \"" + Printable(text.substr(start)) + "\"");
    size_t ustart = i;
    while (i < text.size() && !((text[i] >= '0' && text[i] <= '9') || text[i] == '.')) ++i;
    auto unit = units.find(text.substr(ustart, i - ustart));
    if (unit == units.end())
      return bad(ustart == i
                     ? "missing unit (ns, us, ms, s, m, h)"
                     : "unknown unit \"" + Printable(text.substr(ustart, i - ustart)) + "\"");
    total += std::strtod(num.c_str(), nullptr) * unit->second;
    if (total > 9.2e18) return bad("too long");
  }
  *out = nanoseconds(static_cast<long long>(total));
  return true;
}

PluginOptions WatchOptions(const NomadConfig& cfg, const PluginOptions& base) {
  PluginOptions o = base;
  o.config_dir = cfg.config_dir;
  o.host_root = cfg.host_root;
  o.host_path_root = cfg.host_path_root;
  o.recheck_seconds = static_cast<int>(cfg.fingerprint_period.count());
  o.profile = cfg.profile;
  o.create_planned_dirs = true;
  return o;
}

}  // namespace ocid
