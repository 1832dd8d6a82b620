#include "containerd_config.h"

#include <fnmatch.h>

#include <cstdio>
#include <utility>

namespace ocid {

std::string TomlTrim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1));
}

std::string TomlString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

bool ReadTomlString(std::string_view s, size_t pos, std::string* out, size_t* end) {
  if (pos >= s.size() || (s[pos] != '"' && s[pos] != '\'')) return false;
  const char quote = s[pos];
  out->clear();
  for (size_t i = pos + 1; i < s.size(); ++i) {
    char c = s[i];
    if (c == quote) {
      *end = i + 1;
      return true;
    }
    if (c == '\\' && quote == '"' && i + 1 < s.size()) c = s[++i];
    *out += c;
  }
  return false;
}

std::vector<std::string> TomlStrings(std::string_view value) {
  std::vector<std::string> out;
  size_t p = 0;
  while (p < value.size()) {
    char c = value[p];
    if (c == '#') {
      p = value.find('\n', p);
      if (p == std::string_view::npos) break;
      continue;
    }
    if (c != '"' && c != '\'') {
      ++p;
      continue;
    }
    std::string s;
    if (!ReadTomlString(value, p, &s, &p)) break;
    out.push_back(std::move(s));
  }
  return out;
}

std::string TopLevelTomlValue(const std::string& toml, const std::string& key) {
  size_t pos = 0;
  while (pos < toml.size()) {
    size_t eol = toml.find('\n', pos);
    if (eol == std::string::npos) eol = toml.size();
    std::string line = TomlTrim(std::string_view(toml).substr(pos, eol - pos));
    size_t next = eol + 1;
    if (!line.empty() && line[0] == '[') return "";
    if (line.compare(0, key.size(), key) == 0) {
      std::string rest = TomlTrim(std::string_view(line).substr(key.size()));
      if (!rest.empty() && rest[0] == '=') {
        size_t start = toml.find('=', pos) + 1;
        size_t end = eol;
        std::string value = TomlTrim(std::string_view(rest).substr(1));
        if (!value.empty() && value[0] == '[') {
          end = toml.find(']', start);
          if (end == std::string::npos)
            end = toml.size();
          else
            ++end;
        }
        return toml.substr(start, end - start);
      }
    }
    pos = next;
  }
  return "";
}

int ContainerdConfigVersion(const std::string& main_config) {
  std::string v = TomlTrim(TopLevelTomlValue(main_config, "version"));
  if (size_t hash = v.find('#'); hash != std::string::npos) v = TomlTrim(v.substr(0, hash));
  if (v == "2") return 2;
  if (v == "3") return 3;
  return 0;
}

namespace {
// The CRI plugin's runtimes table in each schema: containerd 2.x split the
// CRI plugin, and its runtimes moved to io.containerd.cri.v1.runtime
// (`containerd config default` of containerd 2.1 prints that table).
std::string CriRuntimesTable(int version) {
  return version >= 3 ? "plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes."
                      : "plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.";
}
}  // namespace

std::string ContainerdRuntimeTables(const std::string& name, const std::string& shim_path,
                                    int version) {
  std::string table = CriRuntimesTable(version) + name;
  // CRI copies only the listed pod and container annotations into
  // config.json: the shim must see oci-decorator/<FLAG> requests.
  return "[" + table +
         "]\n"
         "  runtime_type = \"io.containerd.runc.v2\"\n"
         "  pod_annotations = [\"oci-decorator/*\"]\n"
         "  container_annotations = [\"oci-decorator/*\"]\n"
         "[" +
         table +
         ".options]\n"
         "  BinaryName = " +
         TomlString(shim_path) + "\n";
}

std::string ContainerdDropIn(const std::string& name, const std::string& shim_path, int version) {
  if (version >= 3)
    return "# Written by `oci-decorator setup containerd`: the oci-decorator runtime shim\n"
           "# for containerd 2.x's CRI plugin (runc's v2 shim running the oci-decorator\n"
           "# shim in place of runc). The main config.toml (version = 3) must import this\n"
           "# file; containerd 2.x merges its tables into the main config's.\n"
           "version = 3\n"
           "\n" +
           ContainerdRuntimeTables(name, shim_path, 3);
  return "# Written by `oci-decorator setup containerd`: the oci-decorator runtime shim\n"
         "# for containerd's CRI plugin (runc's v2 shim running the oci-decorator shim\n"
         "# in place of runc). The main config.toml must import this file, and must\n"
         "# not configure the CRI plugin itself: containerd replaces a plugin's whole\n"
         "# section with an imported file's. runc is named because this section\n"
         "# replaces the built-in one, which had it.\n"
         "version = 2\n"
         "\n"
         "[" +
         CriRuntimesTable(2) +
         "runc]\n"
         "  runtime_type = \"io.containerd.runc.v2\"\n"
         "\n" +
         ContainerdRuntimeTables(name, shim_path, 2);
}

bool ContainerdHasCriSection(const std::string& main_config) {
  size_t pos = 0;
  while (pos < main_config.size()) {
    size_t eol = main_config.find('\n', pos);
    if (eol == std::string::npos) eol = main_config.size();
    std::string line = TomlTrim(std::string_view(main_config).substr(pos, eol - pos));
    if (line.rfind('#', 0) != 0 && (line.find("io.containerd.grpc.v1.cri") != std::string::npos ||
                                    line.find("plugins.cri") != std::string::npos))
      return true;
    pos = eol + 1;
  }
  return false;
}

bool ContainerdImportsCover(const std::string& main_config, const std::string& dropin,
                            bool* has_imports) {
  std::string value = TopLevelTomlValue(main_config, "imports");
  *has_imports = !TomlTrim(value).empty();
  for (const std::string& pattern : TomlStrings(value)) {
    // containerd resolves a relative import against the main config's
    // directory; the caller's drop-in path is absolute.
    if (pattern == dropin || ::fnmatch(pattern.c_str(), dropin.c_str(), FNM_PATHNAME) == 0)
      return true;
  }
  return false;
}

std::vector<std::string> ContainerdBinaryNames(const std::string& toml) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < toml.size()) {
    size_t eol = toml.find('\n', pos);
    if (eol == std::string::npos) eol = toml.size();
    std::string line = TomlTrim(std::string_view(toml).substr(pos, eol - pos));
    pos = eol + 1;
    const std::string key = "BinaryName";
    if (line.compare(0, key.size(), key) != 0) continue;
    std::string rest = TomlTrim(std::string_view(line).substr(key.size()));
    if (rest.empty() || rest[0] != '=') continue;
    std::string value;
    size_t end = 0;
    if (ReadTomlString(TomlTrim(std::string_view(rest).substr(1)), 0, &value, &end))
      out.push_back(value);
  }
  return out;
}

}  // namespace ocid
