// One JSON text from untrusted bytes, for the parsers of the state,
// config.json and inventories: they differ in what they read from the
// document, not in how a document is accepted.
#pragma once
#include <nlohmann/json.hpp>

#include "files.h"
#include <string>
#include <string_view>

namespace ocid {

// Parses `bytes` as one JSON text (strict UTF-8). On failure returns false
// with `why` saying where and why ("line 1, column 8: invalid string: ..."),
// never quoting the input. A raw NUL byte is refused up front: nlohmann
// takes it for the end of the input and would ignore what follows, and no
// JSON text holds one (a string must escape it). `keep` is nlohmann's
// parser callback (parts it discards are still checked as JSON).
bool ParseJsonText(std::string_view bytes, nlohmann::json* out, std::string* why,
                   const nlohmann::json::parser_callback_t& keep = nullptr);

// The same from a stream (FdInput), for inputs read in chunks: a NUL byte
// anywhere, or more than the stream's ceiling, is named as such.
bool ParseJsonStream(FdInput* in, nlohmann::json* out, std::string* why,
                     const nlohmann::json::parser_callback_t& keep = nullptr);

}  // namespace ocid
