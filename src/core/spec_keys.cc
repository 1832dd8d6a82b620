#include "spec_keys.h"

#include <nlohmann/json.hpp>

#include <memory>

#include "json_text.h"

namespace ocid {
namespace {

using nlohmann::json;

// The schema: the fields of config.json that the hook or the runtime shim
// relies on, and whether the hook's pruned document keeps them.
enum class Kind {
  kLeaf,     // a scalar or a list of scalars the parser checks as it is
  kObject,   // an object with the fields in `children`
  kArrayOf,  // an array of objects with the fields in `children`
  kEnv,      // process.env: filtered by ConfigInterest::env_names
  kMap,      // annotations: free keys, filtered by ConfigInterest
  kCaps,     // process.capabilities: known sets, unknown ones kept too
  kCapList,  // one capability set: only CAP_SYS_ADMIN matters
};

struct Node {
  const char* name;
  Kind kind;
  bool keep;
  std::vector<Node> children;
};

const Node& Schema() {
  static const Node* const root = [] {
    auto leaf = [](const char* n) { return Node{n, Kind::kLeaf, true, {}}; };
    auto caps = [](const char* n) { return Node{n, Kind::kCapList, true, {}}; };
    std::vector<Node> ids = {leaf("containerID"), leaf("hostID"), leaf("size")};
    return new Node{"",
                    Kind::kObject,
                    true,
                    {Node{"root", Kind::kObject, true, {leaf("path"), leaf("readonly")}},
                     Node{"process",
                          Kind::kObject,
                          true,
                          {Node{"env", Kind::kEnv, true, {}},
                           Node{"capabilities",
                                Kind::kCaps,
                                true,
                                {caps("bounding"), caps("effective"), caps("inheritable"),
                                 caps("permitted"), caps("ambient")}},
                           Node{"user",
                                Kind::kObject,
                                true,
                                {leaf("uid"), leaf("gid"), leaf("additionalGids")}}}},
                     Node{"annotations", Kind::kMap, true, {}},
                     // The runtime shim adds mounts: a "Mounts" runc would read after
                     // them must not go unnoticed, though the hook keeps none.
                     Node{"mounts",
                          Kind::kArrayOf,
                          false,
                          {leaf("destination"), leaf("source"), leaf("type"), leaf("options")}},
                     Node{"linux",
                          Kind::kObject,
                          true,
                          {Node{"devices",
                                Kind::kArrayOf,
                                true,
                                {leaf("path"), leaf("type"), leaf("major"), leaf("minor"),
                                 leaf("fileMode"), leaf("uid"), leaf("gid")}},
                           Node{"resources",
                                Kind::kObject,
                                true,
                                {Node{"devices",
                                      Kind::kArrayOf,
                                      true,
                                      {leaf("allow"), leaf("type"), leaf("major"), leaf("minor"),
                                       leaf("access")}}}},
                           Node{"namespaces", Kind::kArrayOf, true, {leaf("type"), leaf("path")}},
                           Node{"uidMappings", Kind::kArrayOf, true, ids},
                           Node{"gidMappings", Kind::kArrayOf, true, ids}}}}};
  }();
  return *root;
}

// A capability set under a name runc does not know: the hook still looks
// at it (refuse_privileged errs on the side of refusing).
const Node kUnknownCapSet{"", Kind::kCapList, true, {}};

// One open object or array of the document being parsed.
struct Frame {
  const Node* node = nullptr;     // its schema; null: nothing in it is read
  bool element = false;           // an object inside a kArrayOf array
  bool elsewhere = false;         // under a dropped key: not in the pruned document
  std::string path;               // for messages: "linux.resources.devices[]"
  const Node* pending = nullptr;  // the field of the current key
  bool pending_elsewhere = false;
  std::string pending_key;  // kMap: the current annotation key
  bool pending_kept = false;
  std::set<std::string> seen;  // fields (kMap: kept keys) seen so far

  bool IsObject() const {
    return node && (element || node->kind == Kind::kObject || node->kind == Kind::kCaps ||
                    node->kind == Kind::kMap);
  }
};

struct Filter {
  const ConfigInterest* interest;
  SpecKeyReport* report;
  std::vector<Frame> frames;

  void Ambiguous(const std::string& what) {
    if (report->ambiguity.empty()) report->ambiguity = what;
  }

  static std::string Join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  // The frame for a container starting inside `parent` (null at the top).
  Frame Child(const Frame* parent, bool is_object) const {
    Frame f;
    if (!parent) {
      f.node = &Schema();
      return f;
    }
    f.elsewhere = parent->elsewhere;
    if (!parent->node) return f;
    if (parent->IsObject()) {
      const Node* n = parent->pending;
      f.elsewhere = parent->elsewhere || parent->pending_elsewhere;
      f.path = parent->path;
      if (!n) return f;
      f.path = Join(parent->path, n->name[0] ? n->name : parent->pending_key);
      bool wants_object =
          n->kind == Kind::kObject || n->kind == Kind::kCaps || n->kind == Kind::kMap;
      bool wants_array =
          n->kind == Kind::kArrayOf || n->kind == Kind::kEnv || n->kind == Kind::kCapList;
      if ((is_object && wants_object) || (!is_object && wants_array)) f.node = n;
      return f;
    }
    if (parent->node->kind == Kind::kArrayOf && is_object) {
      f.node = parent->node;
      f.element = true;
      f.path = parent->path + "[]";
    }
    return f;
  }

  bool Key(Frame& f, const std::string& key) {
    f.pending = nullptr;
    f.pending_elsewhere = false;
    if (!f.IsObject()) return false;
    if (f.node->kind == Kind::kMap) {
      f.pending_key = key;
      f.pending_kept = !interest || interest->annotation_keys.count(key) > 0;
      if (f.pending_kept && !f.seen.insert(key).second)
        Ambiguous("\"" + Join(f.path, key) + "\" is given twice");
      return f.pending_kept && !f.elsewhere;
    }
    const Node* exact = nullptr;
    const Node* folded = nullptr;
    for (const auto& c : f.node->children) {
      if (key == c.name)
        exact = &c;
      else if (!folded && GoFoldEquals(key, c.name))
        folded = &c;
    }
    if (exact) {
      f.pending = exact;
      if (!f.seen.insert(exact->name).second)
        Ambiguous("\"" + Join(f.path, exact->name) + "\" is given twice");
      // The pruned document holds the last occurrence; requests are
      // collected from all of them.
      return exact->keep;
    }
    if (folded) {
      f.pending = folded;
      f.pending_elsewhere = true;
      f.seen.insert(folded->name);
      Ambiguous("\"" + Join(f.path, key) + "\" matches \"" + folded->name +
                "\" only by case (runc reads it, crun does not)");
      return false;
    }
    if (f.node->kind == Kind::kCaps) {
      f.pending = &kUnknownCapSet;
      f.pending_key = key;
      return true;
    }
    return false;
  }

  bool Value(Frame& f, json& v) {
    if (!f.node) return true;
    if (f.node->kind == Kind::kEnv && v.is_string()) {
      const std::string& e = v.get_ref<const std::string&>();
      bool kept = !interest || interest->env_names.count(e.substr(0, e.find('='))) > 0;
      if (kept) report->env_anywhere.push_back(e);
      return kept;
    }
    if (f.node->kind == Kind::kCapList && v.is_string())
      return v.get_ref<const std::string&>() == "CAP_SYS_ADMIN";
    if (f.node->kind == Kind::kMap && f.pending_kept && v.is_string())
      report->annotations_anywhere.emplace_back(f.pending_key, v.get<std::string>());
    return true;
  }

  bool operator()(int depth, JsonEvent event, json& parsed) {
    size_t d = static_cast<size_t>(depth);
    switch (event) {
      case JsonEvent::kObjectStart:
      case JsonEvent::kArrayStart: {
        frames.resize(d);
        Frame f = Child(d ? &frames[d - 1] : nullptr, event == JsonEvent::kObjectStart);
        frames.push_back(std::move(f));
        return true;
      }
      case JsonEvent::kKey:
        if (d == 0) return true;
        frames.resize(d);
        return Key(frames[d - 1], parsed.get<std::string>());
      case JsonEvent::kValue:
        if (d == 0) return true;
        frames.resize(d);
        return Value(frames[d - 1], parsed);
      default: return true;
    }
  }
};

}  // namespace

bool GoFoldEquals(std::string_view key, std::string_view field) {
  size_t k = 0;
  for (char c : field) {
    char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    if (k < key.size()) {
      char kc = key[k];
      char kl = (kc >= 'A' && kc <= 'Z') ? static_cast<char>(kc - 'A' + 'a') : kc;
      if (kl == lower && (kc == c || (lower >= 'a' && lower <= 'z'))) {
        ++k;
        continue;
      }
    }
    // The two non-ASCII runes that fold to ASCII letters.
    if (lower == 'k' && key.substr(k, 3) == "\xE2\x84\xAA") {
      k += 3;
      continue;
    }
    if (lower == 's' && key.substr(k, 2) == "\xC5\xBF") {
      k += 2;
      continue;
    }
    return false;
  }
  return k == key.size();
}

JsonKeep SpecKeyFilter(const ConfigInterest* interest, SpecKeyReport* report) {
  auto filter = std::make_shared<Filter>(Filter{interest, report, {}});
  return [filter](int depth, JsonEvent event, json& parsed) {
    return (*filter)(depth, event, parsed);
  };
}

}  // namespace ocid
