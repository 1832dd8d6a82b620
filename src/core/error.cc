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

// --- Printable's cut -------------------------------------------------------------------

// A unit of Printable's output: what a cut never splits. A character (kept
// or escaped), a bad byte, and, in a text already shown, an escape "\xNN"
// and the marker of an earlier cut, each kept as it is.
struct Unit {
  size_t pos = 0, len = 0;  // its bytes in the input
  size_t cost = 0;          // bytes as written
  bool escaped = false;     // shown as \xNN per byte
};

bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

constexpr std::string_view kMarkerHead = "[... ", kMarkerTail = " bytes ...]";

std::string Marker(size_t n) {
  return std::string(kMarkerHead) + std::to_string(n) + std::string(kMarkerTail);
}

// The length of a cut's marker at s[i] and its N in *n, 0 if none is there.
size_t MarkerAt(std::string_view s, size_t i, size_t* n) {
  if (s.compare(i, kMarkerHead.size(), kMarkerHead) != 0) return 0;
  size_t j = i + kMarkerHead.size(), v = 0;
  constexpr size_t kMaxDigits = 19;  // well below SIZE_MAX: no overflow
  while (j < s.size() && j - i - kMarkerHead.size() < kMaxDigits && s[j] >= '0' && s[j] <= '9')
    v = v * 10 + static_cast<size_t>(s[j++] - '0');
  if (j == i + kMarkerHead.size() || s.compare(j, kMarkerTail.size(), kMarkerTail) != 0) return 0;
  *n = v;
  return j + kMarkerTail.size() - i;
}

Unit UnitAt(std::string_view s, size_t i, Quoting q) {
  Unit u;
  u.pos = i;
  auto c = static_cast<unsigned char>(s[i]);
  size_t said = 0;
  if (c == '\\' && i + 3 < s.size() && s[i + 1] == 'x' && IsHex(s[i + 2]) && IsHex(s[i + 3]))
    u.len = 4;  // an escape already shown
  else if (c == '[')
    u.len = MarkerAt(s, i, &said);  // 0 when it is no marker
  if (u.len == 0) {
    char32_t cp = c;
    size_t len = c < 0x80 ? 1 : Utf8SequenceAt(s, i, &cp);
    u.escaped = len == 0 || Escaped(cp);
    u.len = std::max<size_t>(len, 1);
  }
  if (u.escaped) {
    u.cost = u.len * (q == Quoting::kDoubled ? 5 : 4);
  } else {
    u.cost = u.len;
    if (q == Quoting::kDoubled)
      for (size_t k = 0; k < u.len; ++k)
        if (s[i + k] == '"' || s[i + k] == '\\') ++u.cost;
  }
  return u;
}

void AppendUnit(std::string_view s, const Unit& u, std::string* out) {
  if (!u.escaped) {
    out->append(s.substr(u.pos, u.len));
    return;
  }
  for (size_t k = 0; k < u.len; ++k) {
    auto e = static_cast<unsigned char>(s[u.pos + k]);
    out->append({'\\', 'x', kHex[e >> 4], kHex[e & 15]});
  }
}

// How many bytes of the input the elided s[from, to) stands for: its own,
// except that the marker of an earlier cut counts for the N it says.
size_t ElidedWeight(std::string_view s, size_t from, size_t to) {
  size_t w = to - from;
  for (size_t i = s.find(kMarkerHead, from); i < to; i = s.find(kMarkerHead, i + 1)) {
    size_t n = 0, len = MarkerAt(s.substr(0, to), i, &n);
    if (len != 0) w = w - len + n;
  }
  return w;
}

// s cut to at most `max` bytes as written: head, marker, tail.
std::string Cut(std::string_view s, size_t max, Quoting q) {
  // Room for the marker: N is at most s.size() plus what earlier markers
  // say, so a few digits more than s.size() has; the loop below makes sure.
  const size_t reserve = Marker(s.size()).size() + 4;
  if (max < reserve) return std::string("[...]").substr(0, max);
  const size_t budget = max - reserve, tail_budget = budget / 4, head_budget = budget - tail_budget;
  std::vector<Unit> head;
  size_t head_cost = 0, h = 0;
  while (h < s.size()) {
    Unit u = UnitAt(s, h, q);
    if (head_cost + u.cost > head_budget) break;
    head_cost += u.cost;
    h += u.len;
    head.push_back(u);
  }
  // The tail: units read from a little before the bytes it can hold, so
  // the reading is in step with the characters, escapes and markers there
  // (none is longer than 40 bytes); then the first ones dropped until the
  // rest fits. Every unit costs at least its length, so what is kept
  // starts at or after s.size() - tail_budget.
  constexpr size_t kSync = 40;
  size_t start = s.size() > tail_budget + kSync ? std::max(h, s.size() - tail_budget - kSync) : h;
  std::vector<Unit> tail;
  size_t tail_cost = 0;
  for (size_t i = start; i < s.size();) {
    tail.push_back(UnitAt(s, i, q));
    tail_cost += tail.back().cost;
    i += tail.back().len;
  }
  size_t first = 0;  // the first tail unit kept
  while (first < tail.size() && tail_cost > tail_budget) tail_cost -= tail[first++].cost;
  for (;;) {
    size_t t = first < tail.size() ? tail[first].pos : s.size();
    std::string marker = Marker(ElidedWeight(s, h, t));
    if (head.empty() && first == tail.size() && marker.size() > max)
      return std::string("[...]").substr(0, max);  // markers in s that claim a huge N
    if (head_cost + marker.size() + tail_cost <= max) {
      std::string out;
      for (const Unit& u : head) AppendUnit(s, u, &out);
      out += marker;
      for (size_t k = first; k < tail.size(); ++k) AppendUnit(s, tail[k], &out);
      return out;
    }
    if (first < tail.size()) {
      tail_cost -= tail[first++].cost;
    } else {
      head_cost -= head.back().cost;
      h = head.back().pos;
      head.pop_back();
    }
  }
}

// What s costs as written, or any value above `cap` once it is.
size_t CostUpTo(std::string_view s, size_t cap, Quoting q) {
  if (s.size() > cap) return cap + 1;
  size_t cost = 0;
  for (size_t i = 0; i < s.size() && cost <= cap;) {
    Unit u = UnitAt(s, i, q);
    cost += u.cost;
    i += u.len;
  }
  return cost;
}

}  // namespace

std::string Printable(std::string_view s, size_t max, Quoting quoting) {
  bool plain = quoting == Quoting::kNone && s.size() <= max;
  for (size_t i = 0; plain && i < s.size(); ++i) plain = s[i] >= 0x20 && s[i] < 0x7F;
  if (plain) return std::string(s);
  if (max != std::string_view::npos && CostUpTo(s, max, quoting) > max) return Cut(s, max, quoting);
  std::string out;
  AppendEscaped(s, Form::kBytes, &out);
  return out;
}

std::vector<std::string> PrintableParts(const std::vector<std::string_view>& parts, size_t room,
                                        Quoting quoting) {
  // Shared as water fills vessels: the cheapest first, each taking what it
  // needs up to an even share of what is left.
  std::vector<size_t> cost(parts.size()), order(parts.size()), share(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    cost[i] = CostUpTo(parts[i], room, quoting);
    order[i] = i;
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return cost[a] < cost[b]; });
  size_t left = room;
  for (size_t k = 0; k < order.size(); ++k) {
    size_t i = order[k];
    share[i] = std::min(cost[i], left / (order.size() - k));
    left -= share[i];
  }
  std::vector<std::string> out;
  out.reserve(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) out.push_back(Printable(parts[i], share[i], quoting));
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
  const std::string reason = errnum != 0 ? ": " + std::string(std::strerror(errnum)) : "";
  const std::string_view sep = path.empty() ? "" : ": ";
  size_t fixed = sep.size() + reason.size();
  std::vector<std::string> shown =
      PrintableParts({what, path}, kMaxLineBytes > fixed ? kMaxLineBytes - fixed : 0);
  return shown[0] + std::string(sep) + shown[1] + reason;
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
