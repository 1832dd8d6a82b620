#include "error.h"

#include <cstring>

namespace ocid {
namespace {

// Length of the well-formed UTF-8 sequence at s[i] (2..4), 0 if there is
// none: overlong forms, surrogates, values above U+10FFFF and the C1
// controls (U+0080..U+009F, which some terminals obey) do not count.
size_t Utf8SequenceAt(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  auto cont = [&](size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
  unsigned char c = b(0);
  if (c >= 0xC2 && c <= 0xDF) return cont(1) && !(c == 0xC2 && b(1) < 0xA0) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

void AppendEscaped(std::string_view s, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F) {
      out->push_back(static_cast<char>(c));
      ++i;
    } else if (size_t n = c >= 0x80 ? Utf8SequenceAt(s, i) : 0; n > 0) {
      out->append(s.substr(i, n));
      i += n;
    } else {
      out->append({'\\', 'x', kHex[c >> 4], kHex[c & 15]});
      ++i;
    }
  }
}

}  // namespace

std::string Printable(std::string_view s, size_t max) {
  bool plain = s.size() <= max;
  for (size_t i = 0; plain && i < s.size(); ++i)
    plain = s[i] >= 0x20 && s[i] < 0x7F;
  if (plain) return std::string(s);
  std::string out;
  if (s.size() <= max) {
    AppendEscaped(s, &out);
  } else {
    // Head and tail: what a message says after a huge value (the file, the
    // valid choices) matters as much as its start.
    size_t tail = max / 4, head = max - tail;
    AppendEscaped(s.substr(0, head), &out);
    out += "[... " + std::to_string(s.size() - head - tail) + " bytes ...]";
    AppendEscaped(s.substr(s.size() - tail), &out);
  }
  return out;
}

std::string JsonErrorReason(std::string_view w) {
  // "[json.exception.parse_error.101] parse error at line 1, column 8:
  //  syntax error while parsing value - invalid string: ...; last read: '...'"
  if (size_t p = w.find("] "); w.rfind("[json.exception.", 0) == 0 && p != w.npos)
    w.remove_prefix(p + 2);
  if (w.rfind("parse error at ", 0) == 0) w.remove_prefix(15);
  std::string out;
  size_t syntax = w.find(": syntax error while parsing ");
  size_t dash = syntax == w.npos ? w.npos : w.find(" - ", syntax);
  if (dash != w.npos) {
    out = std::string(w.substr(0, syntax)) + ": ";
    w.remove_prefix(dash + 3);
  }
  out += w.substr(0, w.find("; last read: "));
  return out;
}

std::string Error::Line() const {
  std::string line = Printable(what);
  if (!path.empty()) line += ": " + Printable(path);
  if (errnum != 0) line += ": " + std::string(std::strerror(errnum));
  return line;
}

bool Fail(Error* err, std::string what, std::string path, int errnum) {
  if (err) {
    err->what = std::move(what);
    err->path = std::move(path);
    err->errnum = errnum;
  }
  return false;
}

}  // namespace ocid
