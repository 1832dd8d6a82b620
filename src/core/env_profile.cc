#include "env_profile.h"

#include <algorithm>
#include <cerrno>

#include "host_view.h"
#include "path_text.h"

namespace ocid {
namespace {

constexpr const char* kNotStraight =
    "a profile is parsed, never executed: define it in the inventory's \"profiles\" instead";

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// Characters a shell would give a meaning to in an unquoted word.
bool IsShellSpecial(char c) {
  static const std::string kSpecial = "$`\\\"';|&<>(){}*?[]~!";
  return kSpecial.find(c) != std::string::npos;
}

// Splits one line into words: unquoted words of plain characters, or one
// '...' / "..." string holding no $ ` \ . `why` says what was refused.
bool SplitWords(std::string_view line, std::vector<std::string>* words, std::string* why) {
  words->clear();
  size_t i = 0;
  while (i < line.size()) {
    if (IsBlank(line[i])) {
      ++i;
      continue;
    }
    if (line[i] == '#') break;  // a comment to the end of the line
    std::string w;
    if (line[i] == '\'' || line[i] == '"') {
      char q = line[i];
      size_t end = line.find(q, i + 1);
      if (end == std::string_view::npos) return *why = "unterminated quoted string", false;
      w = std::string(line.substr(i + 1, end - i - 1));
      if (w.find_first_of("$`\\") != std::string::npos)
        return *why = "a quoted string with $, ` or \\ (shell expansion)", false;
      i = end + 1;
      if (i < line.size() && !IsBlank(line[i]))
        return *why = "a quoted string joined to other characters", false;
    } else {
      while (i < line.size() && !IsBlank(line[i])) {
        char c = line[i];
        if (IsShellSpecial(c)) return *why = std::string("the shell character '") + c + "'", false;
        w += c;
        ++i;
      }
    }
    words->push_back(std::move(w));
  }
  return true;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

class Resolver {
 public:
  Resolver(const ProfileSources& src, const ProfileReader& read, EnvList* out, Error* err)
      : src_(src), read_(read), out_(out), err_(err) {}

  // Loads `name` from the directory: NAME.opf, or for an import also
  // NAME.opf-fragment. *found is false when neither exists.
  bool Load(const std::string& name, bool import, bool* found) {
    *found = false;
    if (std::find(stack_.begin(), stack_.end(), name) != stack_.end())
      return Fail(err_, "profile import cycle: " + Chain() + " -> " + name, Shown(src_.dir));
    if (stack_.size() > static_cast<size_t>(kMaxImportDepth))
      return Fail(err_,
                  "profile imports nest deeper than " + std::to_string(kMaxImportDepth) + ": " +
                      Chain() + " -> " + name,
                  Shown(src_.dir));
    std::string bytes, path;
    for (const char* ext : {".opf", ".opf-fragment"}) {
      if (!import && std::string(ext) != ".opf") break;
      path = src_.dir + "/" + name + ext;
      Error e;
      if (read_(path, &bytes, &e)) {
        *found = true;
        break;
      }
      if (e.errnum != ENOENT) return *err_ = e, false;
    }
    if (!*found) return true;
    std::vector<OpfStatement> statements;
    path = Shown(path);
    if (!ParseOpf(bytes, path, src_.prefixes, &statements, err_)) return false;
    stack_.push_back(name);
    for (const auto& s : statements) {
      if (s.kind == OpfStatement::kSet) {
        if (!Set(s.name, s.value, path)) return false;
        continue;
      }
      bool sub_found = false;
      if (!Load(s.name, true, &sub_found)) return false;
      if (!sub_found)
        return Fail(err_, path + ":" + std::to_string(s.line) + ": onload_import " + s.name +
                              ": no " + s.name + ".opf or " + s.name + ".opf-fragment in " +
                              Shown(src_.dir));
    }
    stack_.pop_back();
    return true;
  }

  bool Set(const std::string& name, const std::string& value, const std::string& where) {
    for (auto& [k, v] : *out_)
      if (k == name) return v = value, true;
    if (out_->size() >= kMaxProfileVars)
      return Fail(err_, "profile sets more than " + std::to_string(kMaxProfileVars) + " variables",
                  where);
    out_->emplace_back(name, value);
    return true;
  }

 private:
  std::string Shown(const std::string& path) const {
    return src_.display ? src_.display(path) : path;
  }

  std::string Chain() const {
    std::string s;
    for (const auto& n : stack_) s += (s.empty() ? "" : " -> ") + n;
    return s;
  }

  const ProfileSources& src_;
  const ProfileReader& read_;
  EnvList* out_;
  Error* err_;
  std::vector<std::string> stack_;
};

}  // namespace

bool IsProfileName(std::string_view name) {
  if (name.empty() || name.size() > 64 || name[0] == '.') return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool IsProfileVariable(std::string_view name, const std::vector<std::string>& prefixes) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name)
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  if (name[0] >= '0' && name[0] <= '9') return false;
  for (const auto& p : prefixes)
    if (name.size() > p.size() && name.compare(0, p.size(), p) == 0) return true;
  return false;
}

bool IsProfileValue(std::string_view value) {
  return value.size() <= 4096 &&
         value.find_first_of(std::string_view("\0\r\n", 3)) == std::string_view::npos;
}

bool ParseOpf(std::string_view bytes, const std::string& file,
              const std::vector<std::string>& prefixes, std::vector<OpfStatement>* out,
              Error* err) {
  out->clear();
  if (bytes.size() > kMaxProfileBytes)
    return Fail(err, "profile is larger than " + std::to_string(kMaxProfileBytes) + " bytes", file);
  if (bytes.find('\0') != std::string_view::npos)
    return Fail(err, "profile holds a NUL byte (not a text file)", file);
  int lineno = 0;
  size_t pos = 0;
  std::vector<std::string> w;
  while (pos < bytes.size()) {
    size_t nl = bytes.find('\n', pos);
    if (nl == std::string_view::npos) nl = bytes.size();
    std::string_view line = bytes.substr(pos, nl - pos);
    pos = nl + 1;
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    auto bad = [&](const std::string& why) {
      return Fail(err, file + ":" + std::to_string(lineno) + ": " + why + "; " + kNotStraight);
    };
    for (char c : line)
      if (static_cast<unsigned char>(c) < 0x20 && c != '\t') return bad("a control character");
    std::string why;
    if (!SplitWords(line, &w, &why)) return bad(why);
    if (w.empty()) continue;
    OpfStatement s;
    s.line = lineno;
    if (w[0] == "onload_set" && w.size() == 3) {
      if (!IsProfileVariable(w[1], prefixes))
        return bad("onload_set of \"" + w[1] + "\", not a variable this inventory allows (" +
                   JoinNames(prefixes) + " then A-Z 0-9 _)");
      if (!IsProfileValue(w[2])) return bad("onload_set " + w[1] + ": value too long");
      s.kind = OpfStatement::kSet;
      s.name = w[1];
      s.value = w[2];
    } else if (w[0] == "onload_import" && w.size() == 2) {
      if (!IsProfileName(w[1])) return bad("onload_import of an invalid name \"" + w[1] + "\"");
      s.kind = OpfStatement::kImport;
      s.name = w[1];
    } else if (w[0] == "onload_set" || w[0] == "onload_import") {
      return bad(w[0] + " with " + std::to_string(w.size() - 1) + " arguments");
    } else {
      return bad("\"" + w[0] + "\" is not onload_set or onload_import");
    }
    out->push_back(std::move(s));
  }
  return true;
}

bool ResolveProfile(const ProfileSources& src, const std::string& name, const ProfileReader& read,
                    const std::function<std::vector<std::string>()>& available, EnvList* out,
                    Error* err) {
  out->clear();
  auto unknown = [&] {
    return Fail(err, "unknown profile \"" + name + "\" for inventory " + src.inventory +
                         " (available: " + JoinNames(available()) + ")");
  };
  if (!IsProfileName(name)) return unknown();
  auto it = src.inline_profiles.find(name);
  if (it != src.inline_profiles.end()) {
    *out = it->second;
    return true;
  }
  if (src.dir.empty()) return unknown();
  Resolver r(src, read, out, err);
  bool found = false;
  if (!r.Load(name, false, &found)) return false;
  return found || unknown();
}

std::vector<std::string> AvailableProfiles(const ProfileSources& src, const HostView& host) {
  std::vector<std::string> names;
  for (const auto& [n, env] : src.inline_profiles) names.push_back(n);
  std::vector<HostMatch> matches;
  Error ignored;
  if (!src.dir.empty() && host.Match(src.dir + "/*.opf", &matches, &ignored))
    for (const auto& m : matches) {
      std::string base = Basename(m.path);
      base.resize(base.size() - 4);
      if (IsProfileName(base)) names.push_back(base);
    }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

ProfileReader HostProfileReader(const HostView& host) {
  return [&host](const std::string& path, std::string* bytes, Error* err) {
    bytes->clear();
    return host.ReadChunks(
        path, kMaxProfileBytes,
        [bytes](std::string_view chunk) {
          bytes->append(chunk);
          return true;
        },
        err);
  };
}

}  // namespace ocid
