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

}  // namespace ocid
