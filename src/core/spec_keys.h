// config.json keys as the runtimes read them, and where they disagree.
//
// runc (Go's encoding/json) matches an object key to a field without regard
// to case: "Process" and even "proceſs" (U+017F, which folds to 's') fill
// `process`, and a field given twice is decoded twice, the later occurrence
// merging into or replacing the earlier one. crun (libocispec) matches keys
// exactly. A policy that reads config.json by exact keys can thus be shown
// one document while runc applies another: "Process" with CAP_SYS_ADMIN
// passes refuse_privileged and runc grants it.
//
// The hook does not try to be every runtime at once. Over the keys it or
// the runtime shim relies on (the schema in spec_keys.cc), it finds every
// place where runtimes could read the document differently: a key that
// matches a field only by case folding, or a field given twice. Such a
// document is *ambiguous*. For a container that asks for a vendor it is
// refused; a container that does not ask is never refused for it. To tell
// the two apart without trusting either reading, every env entry and
// annotation that could be a request is collected from every reading
// (requests_anywhere): no request there means no runtime's reading asks.
//
// The same callback prunes the parse to what the hook reads (and, with a
// ConfigInterest, to the env entries and annotations that matter), so a
// config.json of millions of env entries costs little more than its bytes.
#pragma once
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ocid {

struct JsonKeep;  // json_text.h

// Go's case-insensitive key match (encoding/json): ASCII letters fold, the
// Kelvin sign K (U+212A) matches k, the long s ſ (U+017F) matches s;
// everything else must be equal. `field` is ASCII.
bool GoFoldEquals(std::string_view key, std::string_view field);

// What a caller needs of process.env and annotations; without one,
// everything is kept.
struct ConfigInterest {
  std::set<std::string> env_names;  // env entries "NAME=..." or "NAME"
  std::set<std::string> annotation_keys;
};

struct SpecKeyReport {
  // The first place the document is ambiguous ("" when it is not), as a
  // phrase: "\"Process\" matches \"process\" only by case".
  std::string ambiguity;
  // Every env entry and annotation of interest, wherever it occurs under a
  // key that matches process.env or annotations exactly or by case, every
  // occurrence of a duplicate included: every request any runtime's
  // reading could contain.
  std::vector<std::string> env_anywhere;
  std::vector<std::pair<std::string, std::string>> annotations_anywhere;
};

// The `keep` of a config.json parse (json_text.h) that keeps exactly the
// keys of the schema (by exact match), filters env and annotations by
// `interest` (may be null), and fills `report`. Both must outlive the parse.
JsonKeep SpecKeyFilter(const ConfigInterest* interest, SpecKeyReport* report);

}  // namespace ocid
