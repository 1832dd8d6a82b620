#include "json_text.h"

#include <nlohmann/json.hpp>

#include "error.h"

namespace ocid {
namespace {

using nlohmann::json;

// JsonEvent is nlohmann's parse_event_t, value for value.
constexpr bool Same(JsonEvent ours, json::parse_event_t theirs) {
  return static_cast<int>(ours) == static_cast<int>(theirs);
}
static_assert(Same(JsonEvent::kObjectStart, json::parse_event_t::object_start) &&
              Same(JsonEvent::kObjectEnd, json::parse_event_t::object_end) &&
              Same(JsonEvent::kArrayStart, json::parse_event_t::array_start) &&
              Same(JsonEvent::kArrayEnd, json::parse_event_t::array_end) &&
              Same(JsonEvent::kKey, json::parse_event_t::key) &&
              Same(JsonEvent::kValue, json::parse_event_t::value));

// nlohmann's callback for `keep`; none when there is no `keep` (the parser
// then builds everything without asking).
json::parser_callback_t Callback(const JsonKeep& keep) {
  if (!keep) return nullptr;
  return [&keep](int depth, json::parse_event_t event, json& parsed) {
    return keep(depth, static_cast<JsonEvent>(event), parsed);
  };
}

}  // namespace

bool ParseJsonText(std::string_view bytes, json* out, std::string* why, const JsonKeep& keep) {
  if (size_t nul = bytes.find('\0'); nul != std::string_view::npos) {
    *why = "a NUL byte at offset " + std::to_string(nul);
    return false;
  }
  try {
    *out = json::parse(bytes.begin(), bytes.end(), Callback(keep));
  } catch (const json::exception& e) {
    *why = JsonErrorReason(e.what());
    return false;
  }
  return true;
}

bool ParseJsonStream(FdInput* in, json* out, std::string* why, const JsonKeep& keep) {
  std::istream is(in);
  std::string reason;
  try {
    *out = json::parse(is, Callback(keep));
  } catch (const json::exception& e) {
    reason = JsonErrorReason(e.what());
  }
  // A NUL is an error wherever it is (JSON escapes it in strings); say so
  // rather than what the parser made of it.
  if (in->nul_offset() != std::string::npos) {
    *why = "a NUL byte at offset " + std::to_string(in->nul_offset());
    return false;
  }
  if (in->over_ceiling()) {
    *why = "stopped reading at the " + std::to_string(in->ceiling()) + "-byte limit";
    return false;
  }
  if (!reason.empty()) {
    *why = reason;
    return false;
  }
  return true;
}

}  // namespace ocid
