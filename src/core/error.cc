#include "error.h"

#include <algorithm>
#include <cstring>

namespace ocid {
namespace {

// Length of the well-formed UTF-8 sequence at s[i] (2..4) and its code
// point in *cp, 0 if there is none: overlong forms, surrogates and values
// above U+10FFFF do not count.
size_t Utf8SequenceAt(std::string_view s, size_t i, char32_t* cp) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  auto cont = [&](size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
  unsigned char c = b(0);
  if (c >= 0xC2 && c <= 0xDF) {
    if (!cont(1)) return 0;
    *cp = (char32_t{c} & 0x1F) << 6 | (b(1) & 0x3F);
    return 2;
  }
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // UTF-16 surrogate
    *cp = (char32_t{c} & 0x0F) << 12 | char32_t{b(1) & 0x3Fu} << 6 | (b(2) & 0x3F);
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // above U+10FFFF
    *cp = (char32_t{c} & 0x07) << 18 | char32_t{b(1) & 0x3Fu} << 12 | char32_t{b(2) & 0x3Fu} << 6 |
          (b(3) & 0x3F);
    return 4;
  }
  return 0;
}

// The characters Printable() shows escaped (error.h lists them and why).
bool Escaped(char32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
         (cp >= 0x2028 && cp <= 0x2029) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

constexpr char kHex[] = "0123456789abcdef";

// How AppendEscaped writes what the rule escapes.
enum class Form {
  kBytes,  // Printable: each byte of it as \xNN
  kJson,   // PrintableJson: the character as \uXXXX; a bad byte as \ufffd
};

// The one walk over the bytes: which characters are escaped is Escaped()'s;
// `form` says only how they are written. In a JSON text (kJson) the C0
// characters are its whitespace (the dump escaped those in strings), kept.
void AppendEscaped(std::string_view s, Form form, std::string* out) {
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    char32_t cp = c;
    size_t n = c < 0x80 ? 1 : Utf8SequenceAt(s, i, &cp);
    bool escape = n == 0 || (Escaped(cp) && (form == Form::kBytes || cp >= 0x20));
    if (!escape) {
      out->append(s.substr(i, n));
    } else if (form == Form::kJson) {
      // Not from a dump with error_handler_t::replace: shown as that does.
      if (n == 0)
        out->append("\\ufffd");
      else
        out->append({'\\', 'u', kHex[(cp >> 12) & 15], kHex[(cp >> 8) & 15], kHex[(cp >> 4) & 15],
                     kHex[cp & 15]});
    } else {
      // Each byte of it: a bad byte on its own, a control with its encoding.
      for (size_t k = 0; k < std::max<size_t>(n, 1); ++k) {
        auto e = static_cast<unsigned char>(s[i + k]);
        out->append({'\\', 'x', kHex[e >> 4], kHex[e & 15]});
      }
    }
    i += std::max<size_t>(n, 1);
  }
}

}  // namespace

std::string Printable(std::string_view s, size_t max) {
  bool plain = s.size() <= max;
  for (size_t i = 0; plain && i < s.size(); ++i) plain = s[i] >= 0x20 && s[i] < 0x7F;
  if (plain) return std::string(s);
  std::string out;
  if (s.size() <= max) {
    AppendEscaped(s, Form::kBytes, &out);
  } else {
    // Head and tail: what a message says after a huge value (the file, the
    // valid choices) matters as much as its start.
    size_t tail = max / 4, head = max - tail;
    AppendEscaped(s.substr(0, head), Form::kBytes, &out);
    out += "[... " + std::to_string(s.size() - head - tail) + " bytes ...]";
    AppendEscaped(s.substr(s.size() - tail), Form::kBytes, &out);
  }
  return out;
}

std::string PrintableJson(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  AppendEscaped(json, Form::kJson, &out);
  return out;
}

std::string JsonErrorReason(std::string_view exception_what) {
  std::string_view w = exception_what;
  // "[json.exception.parse_error.101] parse error at line 1, column 8:
  //  syntax error while parsing value - invalid string: ...; last read: '...'"
  if (size_t p = w.find("] "); w.rfind("[json.exception.", 0) == 0 && p != std::string_view::npos)
    w.remove_prefix(p + 2);
  if (w.rfind("parse error at ", 0) == 0) w.remove_prefix(15);
  std::string out;
  size_t syntax = w.find(": syntax error while parsing ");
  size_t dash = syntax == std::string_view::npos ? std::string_view::npos : w.find(" - ", syntax);
  if (dash != std::string_view::npos) {
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
