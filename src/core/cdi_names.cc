// CDI names (cdi_names.h): pure string rules, no file and no JSON.
#include "cdi_names.h"

namespace ocid {
namespace {

constexpr const char* kSpecPrefix = "oci-decorator-";

bool IsLetter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool IsAlnum(char c) { return IsLetter(c) || (c >= '0' && c <= '9'); }

// First character by `first`, last alphanumeric, the ones between
// alphanumeric or in `extra`.
bool CheckSegment(const std::string& s, const char* what, bool (*first)(char),
                  const std::string& extra, size_t min_len, size_t max_len, std::string* why) {
  if (s.size() < min_len || s.size() > max_len) {
    *why = std::string(what) + " \"" + s + "\" must have " + std::to_string(min_len) + " to " +
           std::to_string(max_len) + " characters";
    return false;
  }
  if (!first(s[0]) || !IsAlnum(s.back())) {
    *why = std::string(what) + " \"" + s + "\" must start with a " +
           (first == IsLetter ? "letter" : "letter or digit") + " and end with a letter or digit";
    return false;
  }
  for (char c : s)
    if (!IsAlnum(c) && extra.find(c) == std::string::npos) {
      std::string chars;
      for (char x : extra) chars += std::string(chars.empty() ? "" : ", ") + "'" + x + "'";
      *why = std::string(what) + " \"" + s + "\" may hold only letters, digits and " + chars;
      return false;
    }
  return true;
}

}  // namespace

bool CheckCdiKind(const std::string& kind, std::string* why) {
  size_t slash = kind.find('/');
  if (slash == std::string::npos) {
    *why = "\"" + kind + "\" is not <vendor>/<class> (e.g. example.com/onload)";
    return false;
  }
  return CheckSegment(kind.substr(0, slash), "CDI vendor", IsLetter, "_-.", 2, 253, why) &&
         CheckSegment(kind.substr(slash + 1), "CDI class", IsLetter, "_-", 2, 63, why);
}

bool CheckCdiDeviceName(const std::string& name, std::string* why) {
  return CheckSegment(name, "CDI device name", IsAlnum, "_-.:", 1, 253, why);
}

std::string InventoryStem(const std::string& file) {
  std::string base = file.substr(file.rfind('/') + 1);
  if (base.size() > 5 && base.compare(base.size() - 5, 5, ".json") == 0)
    base.resize(base.size() - 5);
  return base;
}

std::string CdiKindOf(const std::string& cdi_kind, const std::string& inventory_file) {
  if (!cdi_kind.empty()) return cdi_kind;
  return std::string(kCdiDefaultVendor) + "/" + InventoryStem(inventory_file);
}

std::string CdiFileName(const std::string& stem) { return kSpecPrefix + stem + ".json"; }

std::string CdiSpecStem(const std::string& file_name) {
  const std::string prefix = kSpecPrefix, suffix = ".json";
  const std::string& n = file_name;
  if (n.size() <= prefix.size() + suffix.size() || n.compare(0, prefix.size(), prefix) != 0 ||
      n.compare(n.size() - suffix.size(), suffix.size(), suffix) != 0)
    return "";
  return n.substr(prefix.size(), n.size() - prefix.size() - suffix.size());
}

std::string CdiPreloadFileName(const std::string& spec_file_name, const std::string& device) {
  std::string stem = spec_file_name;
  if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".json") == 0)
    stem.resize(stem.size() - 5);
  // The stem's '.' and '%' are percent-encoded, so the first '.' ends the
  // stem: inventory "a" with device "b.c" and inventory "a.b" with device
  // "c" would otherwise share one preload file, and one vendor's device
  // would preload the other's libraries.
  std::string name;
  for (char c : stem) {
    if (c == '.')
      name += "%2E";
    else if (c == '%')
      name += "%25";
    else
      name += c;
  }
  return name + "." + device + ".preload";
}

std::string CdiSpecOfPreloadFile(const std::string& preload_file_name) {
  const std::string suffix = ".preload";
  const std::string& n = preload_file_name;
  if (n.size() <= suffix.size() || n.compare(n.size() - suffix.size(), suffix.size(), suffix) != 0)
    return "";
  size_t dot = n.find('.');
  if (dot == 0 || dot + 1 >= n.size() - suffix.size()) return "";  // no stem, or no device
  std::string stem;
  for (size_t i = 0; i < dot; ++i) {
    if (n[i] != '%') {
      stem += n[i];
    } else if (n.compare(i, 3, "%2E") == 0) {
      stem += '.';
      i += 2;
    } else if (n.compare(i, 3, "%25") == 0) {
      stem += '%';
      i += 2;
    } else {
      return "";
    }
  }
  return stem + ".json";
}

std::string CdiPreloadStem(const std::string& preload_file_name) {
  return CdiSpecStem(CdiSpecOfPreloadFile(preload_file_name));
}

bool IsOurCdiFileName(const std::string& file_name) {
  return !CdiSpecStem(file_name).empty() || !CdiPreloadStem(file_name).empty();
}

}  // namespace ocid
