#include "request_reader.h"

#include <algorithm>

#include "activation.h"
#include "bundle_config.h"
#include "spec_keys.h"

namespace ocid {
namespace {

// encoding/json's scanner refuses deeper nesting (scanner.go,
// maxNestingDepth).
constexpr size_t kMaxDepth = 10000;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

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

// Invalid UTF-8 becomes U+FFFD, byte by byte, as Go's unquote does.
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

}  // namespace

RequestReader::RequestReader(const std::vector<std::string>& flags, Document doc) : doc_(doc) {
  size_t longest = 0;
  for (const auto& f : flags)
    if (!f.empty()) {
      flags_.push_back(f);
      longest = std::max(longest, f.size());
    }
  // Room for "oci-decorator/" + the longest flag + one byte more (a longer
  // key is not one), and for any spelling of the longest field name
  // ("annotationſ" with long s and Kelvin signs: under 3 bytes a letter).
  keep_ = std::max(kAnnotationPrefix.size() + longest + 1, size_t{3 * 11 + 1});
  env_now_.assign(flags_.size(), false);
  env_building_.assign(flags_.size(), false);
  annotations_.assign(flags_.size(), false);
}

void RequestReader::Fail(const std::string& why) {
  if (state_ == kError) return;
  why_ = "at byte " + std::to_string(offset_) + ": " + why;
  state_ = kError;
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

RequestReader::Role RequestReader::FieldRole(const std::string& key) const {
  if (truncated_) return kIgnored;
  Role frame = stack_.back().role;
  if (frame == kRoot) {
    if (doc_ == Document::kConfig && GoFoldEquals(key, "process")) return kProcess;
    if (GoFoldEquals(key, "annotations")) return kAnnotations;
  } else if (frame == kProcess && GoFoldEquals(key, "env")) {
    return kEnv;
  }
  return kIgnored;
}

void RequestReader::ResetEnv() { std::fill(env_now_.begin(), env_now_.end(), false); }

void RequestReader::OpenContainer(bool object) {
  if (stack_.size() >= kMaxDepth) return Fail("nested deeper than 10000 levels");
  Role role = value_role_;
  bool wants_object = role == kRoot || role == kProcess || role == kAnnotations;
  bool wants_array = role == kEnv;
  if (role != kIgnored && (object ? !wants_object : !wants_array))
    return Fail(std::string(object ? "an object" : "an array") + " where runc wants " +
                Wants(role));
  if (role == kEnv) std::fill(env_building_.begin(), env_building_.end(), false);
  stack_.push_back(Frame{role, object});
  if (object) {
    state_ = kKeyOrEnd;
  } else {
    value_role_ = role == kEnv ? kEnvEntry : kIgnored;
    state_ = kFirstValueOrEnd;
  }
}

void RequestReader::CloseContainer(bool object) {
  if (stack_.empty() || stack_.back().object != object)
    return Fail(std::string("unexpected '") + (object ? '}' : ']') + "'");
  Role role = stack_.back().role;
  stack_.pop_back();
  // An array replaces the slice: the env is what the last array held.
  if (role == kEnv) env_now_ = env_building_;
  EndValue();
}

void RequestReader::EndValue() {
  if (state_ == kError) return;
  if (stack_.empty()) {
    state_ = kDone;  // the Decoder reads no further
    return;
  }
  state_ = kAfterValue;
}

void RequestReader::BeginValue(char c) {
  Role role = value_role_;
  if (c == '{' || c == '[') return OpenContainer(c == '{');
  if (c == '"') {
    if (role == kRoot || role == kProcess || role == kEnv || role == kAnnotations)
      return Fail(std::string("a string where runc wants ") + Wants(role));
    string_role_ = role == kEnvEntry          ? kEnvEntry
                   : role == kAnnotationValue ? kAnnotationValue
                                              : kIgnored;
    text_.clear();
    truncated_ = false;
    high_surrogate_ = 0;
    state_ = kString;
    return;
  }
  if (c == 't' || c == 'f' || c == 'n') {
    literal_ = c == 't' ? "true" : c == 'f' ? "false" : "null";
    literal_at_ = 1;
    state_ = kLiteral;
  } else if (c == '-' || (c >= '0' && c <= '9')) {
    number_ = c == '-' ? kSign : c == '0' ? kZero : kInt;
    state_ = kNumber;
  } else {
    return Fail(std::string("unexpected character '") + c + "'");
  }
  // Only null fits a field that matters (and resets it); a number or a
  // boolean there is a type error that fails runc's decoding.
  if (role != kIgnored && !(c == 'n' && role != kRoot))
    Fail(std::string(c == 'n' ? "null" : "a number or boolean") + " where runc wants " +
         Wants(role));
}

void RequestReader::AppendRune(uint32_t r) {
  if (string_role_ == kIgnored || truncated_) return;
  AppendUtf8(&text_, r);
  if (text_.size() > keep_) truncated_ = true;
}

void RequestReader::StringByte(char c) {
  if (string_role_ == kIgnored || truncated_) return;
  text_.push_back(c);
  if (text_.size() > keep_) truncated_ = true;
}

void RequestReader::EndString() {
  if (high_surrogate_) AppendRune(0xFFFD);
  high_surrogate_ = 0;
  if (string_role_ != kIgnored) CoerceUtf8(&text_);
  Role role = string_role_;
  string_role_ = kIgnored;
  if (in_key_) {
    in_key_ = false;
    state_ = kColon;
    if (role != kKey) {
      pending_ = kIgnored;
      return;
    }
    Role frame = stack_.back().role;
    if (frame == kAnnotations) {
      pending_ = kAnnotationValue;
      annotation_flag_ = -1;
      std::string_view key(text_);
      if (!truncated_ && key.substr(0, kAnnotationPrefix.size()) == kAnnotationPrefix)
        for (size_t i = 0; i < flags_.size(); ++i)
          if (key.substr(kAnnotationPrefix.size()) == flags_[i]) annotation_flag_ = int(i);
    } else {
      pending_ = FieldRole(text_);
    }
    return;
  }
  if (role == kEnvEntry) {
    for (size_t i = 0; i < flags_.size(); ++i)
      if (EnvEntryIs(text_, flags_[i])) env_building_[i] = true;
  } else if (role == kAnnotationValue && annotation_flag_ >= 0) {
    annotations_[annotation_flag_] = true;
  }
  EndValue();
}

bool RequestReader::NumberByte(char c) {
  bool digit = c >= '0' && c <= '9';
  switch (number_) {
    case kSign:
      if (c == '0')
        number_ = kZero;
      else if (digit)
        number_ = kInt;
      else
        Fail("a '-' without digits");
      return true;
    case kZero:
    case kInt:
      if (digit && number_ == kInt) return true;
      if (c == '.')
        number_ = kDot;
      else if (c == 'e' || c == 'E')
        number_ = kExp;
      else if (digit)
        Fail("a number with a leading zero");
      else
        return false;
      return true;
    case kDot:
      if (digit)
        number_ = kFrac;
      else
        Fail("a '.' without digits");
      return true;
    case kFrac:
      if (digit) return true;
      if (c == 'e' || c == 'E')
        number_ = kExp;
      else
        return false;
      return true;
    case kExp:
      if (c == '+' || c == '-')
        number_ = kExpSign;
      else if (digit)
        number_ = kExpDigits;
      else
        Fail("an exponent without digits");
      return true;
    case kExpSign:
      if (digit)
        number_ = kExpDigits;
      else
        Fail("an exponent without digits");
      return true;
    case kExpDigits: return digit;
  }
  return false;
}

void RequestReader::Step(char c) {
  switch (state_) {
    case kValue:
      if (!IsSpace(c)) BeginValue(c);
      return;
    case kFirstValueOrEnd:
      if (IsSpace(c)) return;
      if (c == ']') return CloseContainer(false);
      return BeginValue(c);
    case kKeyOrEnd:
      if (IsSpace(c)) return;
      if (c == '}') return CloseContainer(true);
      [[fallthrough]];
    case kKeyStart:
      if (IsSpace(c)) return;
      if (c != '"') return Fail("an object key that is not a string");
      string_role_ = stack_.back().role == kIgnored ? kIgnored : kKey;
      in_key_ = true;
      text_.clear();
      truncated_ = false;
      high_surrogate_ = 0;
      state_ = kString;
      return;
    case kColon:
      if (IsSpace(c)) return;
      if (c != ':') return Fail("no ':' after an object key");
      value_role_ = pending_;
      state_ = kValue;
      return;
    case kAfterValue:
      if (IsSpace(c)) return;
      if (c == ',') {
        if (stack_.back().object) {
          state_ = kKeyStart;
        } else {
          value_role_ = stack_.back().role == kEnv ? kEnvEntry : kIgnored;
          state_ = kValue;
        }
        return;
      }
      if (c == '}' || c == ']') return CloseContainer(c == '}');
      return Fail(std::string("unexpected character '") + c + "' after a value");
    case kString:
      if (c == '"') return EndString();  // a key's or a value's: string_role_ says
      if (c == '\\') {
        state_ = kEscape;
        return;
      }
      if (static_cast<unsigned char>(c) < 0x20) return Fail("a control character in a string");
      if (high_surrogate_) {
        AppendRune(0xFFFD);
        high_surrogate_ = 0;
      }
      StringByte(c);
      return;
    case kEscape: {
      if (c == 'u') {
        unicode_ = 0;
        unicode_digits_ = 0;
        state_ = kUnicode;
        return;
      }
      static const char kFrom[] = "\"\\/bfnrt";
      static const char kTo[] = "\"\\/\b\f\n\r\t";
      const char* p = std::char_traits<char>::find(kFrom, 8, c);
      if (!p) return Fail(std::string("an invalid escape '\\") + c + "'");
      if (high_surrogate_) {
        AppendRune(0xFFFD);
        high_surrogate_ = 0;
      }
      StringByte(kTo[p - kFrom]);
      state_ = kString;
      return;
    }
    case kUnicode: {
      int h = HexValue(c);
      if (h < 0) return Fail("a \\u escape without 4 hex digits");
      unicode_ = unicode_ * 16 + static_cast<uint32_t>(h);
      if (++unicode_digits_ < 4) return;
      state_ = kString;
      uint32_t r = unicode_;
      if (high_surrogate_) {
        // utf16.DecodeRune: a high then a low surrogate make one rune;
        // otherwise the first is U+FFFD and this escape stands alone.
        uint32_t hi = high_surrogate_;
        high_surrogate_ = 0;
        if (hi < 0xDC00 && r >= 0xDC00 && r < 0xE000) {
          AppendRune(0x10000 + ((hi - 0xD800) << 10) + (r - 0xDC00));
          return;
        }
        AppendRune(0xFFFD);
      }
      if (r >= 0xD800 && r < 0xE000) {
        high_surrogate_ = r;
        return;
      }
      AppendRune(r);
      return;
    }
    case kNumber:
      if (NumberByte(c)) return;
      if (number_ == kSign || number_ == kDot || number_ == kExp || number_ == kExpSign)
        return Fail("an unfinished number");
      EndValue();
      if (state_ != kDone) Step(c);
      return;
    case kLiteral:
      if (c != literal_[literal_at_]) return Fail("an invalid literal");
      if (++literal_at_ < literal_.size()) return;
      if (literal_ == "null") {
        // null resets a pointer, slice or map; into a string it is a no-op,
        // and a map entry is stored as "".
        if (value_role_ == kProcess || value_role_ == kEnv)
          ResetEnv();
        else if (value_role_ == kAnnotations)
          std::fill(annotations_.begin(), annotations_.end(), false);
        else if (value_role_ == kAnnotationValue && annotation_flag_ >= 0)
          annotations_[annotation_flag_] = true;
      }
      return EndValue();
    case kDone:
    case kError: return;
  }
}

void RequestReader::Feed(std::string_view chunk) {
  size_t i = 0, n = chunk.size();
  const char* p = chunk.data();
  while (i < n && !done()) {
    if (state_ == kString) {
      // The common case, bulk: string bytes that need no decoding.
      size_t start = i;
      while (i < n) {
        unsigned char c = static_cast<unsigned char>(p[i]);
        if (c == '"' || c == '\\' || c < 0x20) break;
        ++i;
      }
      if (i > start) {
        if (high_surrogate_) {
          AppendRune(0xFFFD);
          high_surrogate_ = 0;
        }
        if (string_role_ != kIgnored && !truncated_) {
          size_t take = std::min(i - start, keep_ + 1 - text_.size());
          text_.append(p + start, take);
          if (text_.size() > keep_) truncated_ = true;
        }
        offset_ += i - start;
        if (i == n) break;
      }
    }
    Step(p[i]);
    ++offset_;
    ++i;
  }
}

RequestReader::Verdict RequestReader::Finish() const {
  if (state_ == kError || state_ != kDone) return Verdict::kUnreadable;
  for (size_t i = 0; i < flags_.size(); ++i)
    if (env_now_[i] || annotations_[i]) return Verdict::kAsked;
  return Verdict::kNotAsked;
}

std::string RequestReader::Detail() const {
  if (state_ == kError) return why_;
  if (state_ != kDone) return "the JSON text ends early (at byte " + std::to_string(offset_) + ")";
  for (size_t i = 0; i < flags_.size(); ++i) {
    if (env_now_[i]) return "process.env " + flags_[i];
    if (annotations_[i]) return "annotation " + std::string(kAnnotationPrefix) + flags_[i];
  }
  return "";
}

}  // namespace ocid
