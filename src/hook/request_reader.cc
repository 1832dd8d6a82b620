#include "request_reader.h"

#include <algorithm>

#include "activation.h"
#include "bundle_config.h"
#include "spec_keys.h"

namespace ocid {

size_t RequestReader::KeepFor(const std::vector<std::string>& flags) {
  size_t longest = 0;
  for (const auto& f : flags) longest = std::max(longest, f.size());
  // Room for "oci-decorator/" + the longest flag + one byte more (a longer
  // key is not one), and for any spelling of the longest field name
  // ("annotationſ" with long s and Kelvin signs: under 3 bytes a letter).
  return std::max(kAnnotationPrefix.size() + longest + 1, size_t{3 * 11 + 1});
}

RequestReader::RequestReader(const std::vector<std::string>& flags, Document doc)
    : doc_(doc), stream_(this, KeepFor(flags)) {
  for (const auto& f : flags)
    if (!f.empty()) flags_.push_back(f);
  env_now_.assign(flags_.size(), false);
  env_building_.assign(flags_.size(), false);
  annotations_.assign(flags_.size(), false);
}

const char* RequestReader::Wants(Role role) {
  switch (role) {
    case kRoot:
    case kProcess:
    case kAnnotations: return "an object";
    case kEnv: return "an array";
    default: return "a string";
  }
}

RequestReader::Role RequestReader::FieldRole(std::string_view key) const {
  Role frame = stack_.back().role;
  if (frame == kRoot) {
    if (doc_ == Document::kConfig && GoFoldEquals(key, "process")) return kProcess;
    if (GoFoldEquals(key, "annotations")) return kAnnotations;
  } else if (frame == kProcess && GoFoldEquals(key, "env")) {
    return kEnv;
  }
  return kIgnored;
}

RequestReader::Role RequestReader::NextRole() const {
  if (stack_.empty()) return kRoot;
  const Frame& top = stack_.back();
  if (top.object) return pending_;
  return top.role == kEnv ? kEnvEntry : kIgnored;
}

void RequestReader::OpenContainer(bool object) {
  Role role = NextRole();
  bool wants_object = role == kRoot || role == kProcess || role == kAnnotations;
  bool wants_array = role == kEnv;
  if (role != kIgnored && (object ? !wants_object : !wants_array))
    return stream_.Fail(std::string(object ? "an object" : "an array") + " where runc wants " +
                        Wants(role));
  if (role == kEnv) std::fill(env_building_.begin(), env_building_.end(), false);
  stack_.push_back(Frame{role, object});
}

void RequestReader::CloseContainer() {
  Role role = stack_.back().role;
  stack_.pop_back();
  // An array replaces the slice: the env is what the last array held.
  if (role == kEnv) env_now_ = env_building_;
}

bool RequestReader::StringStart(bool key) {
  // A key matters in an object whose keys matter.
  if (key) return stack_.back().role != kIgnored;
  Role role = NextRole();
  if (role == kRoot || role == kProcess || role == kEnv || role == kAnnotations) {
    stream_.Fail(std::string("a string where runc wants ") + Wants(role));
    return false;
  }
  return role == kEnvEntry || role == kAnnotationValue;
}

void RequestReader::Key(std::string_view text, bool truncated) {
  Role frame = stack_.back().role;
  if (frame == kIgnored) {
    pending_ = kIgnored;
  } else if (frame == kAnnotations) {
    pending_ = kAnnotationValue;
    annotation_flag_ = -1;
    if (!truncated && text.substr(0, kAnnotationPrefix.size()) == kAnnotationPrefix)
      for (size_t i = 0; i < flags_.size(); ++i)
        if (text.substr(kAnnotationPrefix.size()) == flags_[i]) annotation_flag_ = int(i);
  } else {
    pending_ = truncated ? kIgnored : FieldRole(text);
  }
}

void RequestReader::String(std::string_view text, bool /*truncated*/) {
  Role role = NextRole();
  if (role == kEnvEntry) {
    for (size_t i = 0; i < flags_.size(); ++i)
      if (EnvEntryIs(text, flags_[i])) env_building_[i] = true;
  } else if (role == kAnnotationValue && annotation_flag_ >= 0) {
    annotations_[annotation_flag_] = true;
  }
}

void RequestReader::Scalar(JsonScalar kind) {
  // Only null fits a field that matters (and resets it); a number or a
  // boolean there is a type error that fails runc's decoding.
  Role role = NextRole();
  bool null = kind == JsonScalar::kNull;
  if (role != kIgnored && !(null && role != kRoot))
    stream_.Fail(std::string(null ? "null" : "a number or boolean") + " where runc wants " +
                 Wants(role));
}

void RequestReader::Null() {
  // null resets a pointer, slice or map; into a string it is a no-op, and a
  // map entry is stored as "".
  Role role = NextRole();
  if (role == kProcess || role == kEnv)
    std::fill(env_now_.begin(), env_now_.end(), false);
  else if (role == kAnnotations)
    std::fill(annotations_.begin(), annotations_.end(), false);
  else if (role == kAnnotationValue && annotation_flag_ >= 0)
    annotations_[annotation_flag_] = true;
}

void RequestReader::Feed(std::string_view chunk) { stream_.Feed(chunk); }

RequestReader::Verdict RequestReader::Finish() const {
  if (!stream_.ended()) return Verdict::kUnreadable;
  for (size_t i = 0; i < flags_.size(); ++i)
    if (env_now_[i] || annotations_[i]) return Verdict::kAsked;
  return Verdict::kNotAsked;
}

std::string RequestReader::Detail() const {
  if (stream_.failed()) return stream_.why();
  if (!stream_.ended())
    return "the JSON text ends early (at byte " + std::to_string(stream_.offset()) + ")";
  for (size_t i = 0; i < flags_.size(); ++i) {
    if (env_now_[i]) return "process.env " + flags_[i];
    if (annotations_[i]) return "annotation " + std::string(kAnnotationPrefix) + flags_[i];
  }
  return "";
}

}  // namespace ocid
