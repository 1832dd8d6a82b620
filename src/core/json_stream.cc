#include "json_stream.h"

namespace ocid {
namespace {

// The length of the valid UTF-8 sequence at s[i], or 0 when it is not one
// (Go's utf8.DecodeRune then returns U+FFFD of size 1).
size_t ValidSequence(const std::string& s, size_t i) {
  auto at = [&s](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = at(i);
  size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
  if (c < 0xC2 || c > 0xF4 || i + n > s.size()) return 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (c == 0xE0) lo = 0xA0;
  if (c == 0xED) hi = 0x9F;
  if (c == 0xF0) lo = 0x90;
  if (c == 0xF4) hi = 0x8F;
  if (at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (at(i + k) < 0x80 || at(i + k) > 0xBF) return 0;
  return n;
}

}  // namespace

namespace json_stream {

void AppendUtf8(std::string* out, uint32_t r) {
  if (r < 0x80) {
    out->push_back(static_cast<char>(r));
  } else if (r < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (r >> 6)));
    out->push_back(static_cast<char>(0x80 | (r & 0x3F)));
  } else if (r < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (r >> 12)));
    out->push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (r & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (r >> 18)));
    out->push_back(static_cast<char>(0x80 | ((r >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (r & 0x3F)));
  }
}

void CoerceUtf8(std::string* s) {
  size_t i = 0;
  while (i < s->size() && static_cast<unsigned char>((*s)[i]) < 0x80) ++i;
  if (i == s->size()) return;
  std::string out = s->substr(0, i);
  while (i < s->size()) {
    if (static_cast<unsigned char>((*s)[i]) < 0x80) {
      out.push_back((*s)[i++]);
      continue;
    }
    size_t n = ValidSequence(*s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(*s, i, n);
      i += n;
    }
  }
  *s = std::move(out);
}

}  // namespace json_stream
}  // namespace ocid
