// One JSON text from untrusted bytes, for the parsers of the state,
// config.json and inventories: they differ in what they read from the
// document, not in how a document is accepted.
//
// Only the parsers include this header, and through it only nlohmann's
// forward declarations: a parse's result is a nlohmann::json, which the
// parser's .cc reads with the full library. The parser callback is ours
// (JsonKeep), so no header has to name nlohmann's.
#pragma once
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "files.h"

namespace ocid {

// Where the parser is when it asks a JsonKeep (nlohmann's parse_event_t).
enum class JsonEvent : std::uint8_t {
  kObjectStart,
  kObjectEnd,
  kArrayStart,
  kArrayEnd,
  kKey,
  kValue
};

// Asked at each event, with the depth and what was parsed (the key, or the
// value, or the finished object or array): false discards it from the result
// (a key: its value too). Discarded parts are still checked as JSON. A class
// rather than an alias so that a header can name it without this one
// (spec_keys.h).
struct JsonKeep : std::function<bool(int depth, JsonEvent event, nlohmann::json& parsed)> {
  using function::function;
};

// Parses `bytes` as one JSON text (strict UTF-8). On failure returns false
// with `why` saying where and why ("line 1, column 8: invalid string: ..."),
// never quoting the input. A raw NUL byte is refused up front: nlohmann
// takes it for the end of the input and would ignore what follows, and no
// JSON text holds one (a string must escape it). `keep`, when given, prunes
// the result.
bool ParseJsonText(std::string_view bytes, nlohmann::json* out, std::string* why,
                   const JsonKeep& keep = nullptr);

// The same from a stream (FdInput), for inputs read in chunks: a NUL byte
// anywhere, or more than the stream's ceiling, is named as such.
bool ParseJsonStream(FdInput* in, nlohmann::json* out, std::string* why,
                     const JsonKeep& keep = nullptr);

}  // namespace ocid
