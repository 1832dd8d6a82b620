#include "json_text.h"

#include "error.h"

namespace ocid {

bool ParseJsonText(std::string_view bytes, nlohmann::json* out, std::string* why,
                   const nlohmann::json::parser_callback_t& keep) {
  if (size_t nul = bytes.find('\0'); nul != std::string_view::npos) {
    *why = "a NUL byte at offset " + std::to_string(nul);
    return false;
  }
  try {
    *out = nlohmann::json::parse(bytes.begin(), bytes.end(), keep);
  } catch (const nlohmann::json::exception& e) {
    *why = JsonErrorReason(e.what());
    return false;
  }
  return true;
}

bool ParseJsonStream(FdInput* in, nlohmann::json* out, std::string* why,
                     const nlohmann::json::parser_callback_t& keep) {
  std::istream is(in);
  std::string reason;
  try {
    *out = nlohmann::json::parse(is, keep);
  } catch (const nlohmann::json::exception& e) {
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
