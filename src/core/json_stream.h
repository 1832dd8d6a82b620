// A push tokenizer for one JSON value, read the way Go's encoding/json
// Decoder reads it (what runc does with config.json and a hook's state):
// input in chunks split anywhere, only the first value counts (the bytes
// after it are never read), at most 10000 levels of nesting, strings
// unescaped (\uXXXX, surrogate pairs; a lone surrogate is U+FFFD) and
// invalid UTF-8 coerced to U+FFFD, never an error.
//
// Memory stays bounded whatever the input: besides the nesting stack, only
// the first `keep` decoded bytes of a string the handler wants are kept
// (then the text is marked truncated).
//
// The events go to a Handler given as a template parameter, so that the
// per-byte path calls nothing indirectly. A Handler has these members; any
// of them may call Fail on the stream, which then stops at the byte it is
// reading (the failure offset is that byte's):
//   void ObjectStart();  void ObjectEnd();   // at '{' and its '}'
//   void ArrayStart();   void ArrayEnd();    // at '[' and its ']'
//   bool StringStart(bool key);  // at the opening quote of a key or a string
//                                // value: whether its text is wanted
//   void Key(std::string_view text, bool truncated);     // at the closing
//   void String(std::string_view text, bool truncated);  // quote; text is ""
//                                                        // when not wanted
//   void Scalar(JsonScalar kind);  // at the first byte of a number, true,
//                                  // false or null
//   void Null();                   // when a null is complete
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ocid {

enum class JsonScalar : uint8_t { kNumber, kTrue, kFalse, kNull };

namespace json_stream {

// encoding/json's scanner refuses deeper nesting (scanner.go,
// maxNestingDepth).
constexpr size_t kMaxDepth = 10000;

inline bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

inline int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Appends the rune r as UTF-8.
void AppendUtf8(std::string* out, uint32_t r);
// Invalid UTF-8 becomes U+FFFD, byte by byte, as Go's unquote does.
void CoerceUtf8(std::string* s);

}  // namespace json_stream

template <class Handler>
class JsonStream {
 public:
  // keep: how many decoded bytes of a wanted string to keep.
  JsonStream(Handler* handler, size_t keep) : handler_(handler), keep_(keep) {}

  // Feeds the next chunk. Cheap once done().
  void Feed(std::string_view chunk);
  // The first value ended, or the input failed.
  bool done() const { return state_ == kDone || state_ == kError; }
  bool ended() const { return state_ == kDone; }
  bool failed() const { return state_ == kError; }
  // Bytes consumed so far (up to and including the failing byte's offset).
  uint64_t offset() const { return offset_; }
  // Why it failed: "at byte 12: ...".
  const std::string& why() const { return why_; }
  // Stops reading: the input is malformed (or, for a handler, not what it
  // wants) at the byte being read. The first failure stays.
  void Fail(const std::string& why) {
    if (state_ == kError) return;
    why_ = "at byte " + std::to_string(offset_) + ": " + why;
    state_ = kError;
  }

 private:
  enum State : uint8_t {
    kValue,
    kFirstValueOrEnd,
    kKeyOrEnd,
    kKeyStart,
    kColon,
    kAfterValue,
    kString,
    kEscape,
    kUnicode,
    kNumber,
    kLiteral,
    kDone,
    kError,
  };
  enum Number : uint8_t { kSign, kZero, kInt, kDot, kFrac, kExp, kExpSign, kExpDigits };

  void Step(char c);
  void BeginValue(char c);
  void EndValue();
  void OpenContainer(bool object);
  void CloseContainer(bool object);
  void BeginString(bool key);
  void EndString();
  void StringByte(char c);
  void AppendRune(uint32_t r);
  bool NumberByte(char c);  // false: the number ended before c

  Handler* handler_;
  size_t keep_;
  State state_ = kValue;
  uint64_t offset_ = 0;
  std::string why_;
  std::vector<bool> objects_;  // the open containers: whether each is an object

  // The string being read: its decoded bytes when wanted (up to keep_).
  bool want_text_ = false;
  bool in_key_ = false;
  std::string text_;
  bool truncated_ = false;
  uint32_t unicode_ = 0;  // \uXXXX being read
  int unicode_digits_ = 0;
  uint32_t high_surrogate_ = 0;  // a \uD800-\uDBFF waiting for its pair

  Number number_ = kSign;
  std::string_view literal_;  // "true", "false" or "null" being matched
  size_t literal_at_ = 0;
};

template <class Handler>
void JsonStream<Handler>::OpenContainer(bool object) {
  if (objects_.size() >= json_stream::kMaxDepth) return Fail("nested deeper than 10000 levels");
  if (object)
    handler_->ObjectStart();
  else
    handler_->ArrayStart();
  if (state_ == kError) return;
  objects_.push_back(object);
  state_ = object ? kKeyOrEnd : kFirstValueOrEnd;
}

template <class Handler>
void JsonStream<Handler>::CloseContainer(bool object) {
  if (objects_.empty() || objects_.back() != object)
    return Fail(std::string("unexpected '") + (object ? '}' : ']') + "'");
  objects_.pop_back();
  if (object)
    handler_->ObjectEnd();
  else
    handler_->ArrayEnd();
  EndValue();
}

template <class Handler>
void JsonStream<Handler>::EndValue() {
  if (state_ == kError) return;
  if (objects_.empty()) {
    state_ = kDone;  // the Decoder reads no further
    return;
  }
  state_ = kAfterValue;
}

template <class Handler>
void JsonStream<Handler>::BeginString(bool key) {
  bool want = handler_->StringStart(key);
  if (state_ == kError) return;
  want_text_ = want;
  in_key_ = key;
  text_.clear();
  truncated_ = false;
  high_surrogate_ = 0;
  state_ = kString;
}

template <class Handler>
void JsonStream<Handler>::BeginValue(char c) {
  if (c == '{' || c == '[') return OpenContainer(c == '{');
  if (c == '"') return BeginString(false);
  JsonScalar kind;
  if (c == 't' || c == 'f' || c == 'n') {
    literal_ = c == 't' ? "true" : c == 'f' ? "false" : "null";
    literal_at_ = 1;
    state_ = kLiteral;
    kind = c == 't' ? JsonScalar::kTrue : c == 'f' ? JsonScalar::kFalse : JsonScalar::kNull;
  } else if (c == '-' || (c >= '0' && c <= '9')) {
    number_ = c == '-' ? kSign : c == '0' ? kZero : kInt;
    state_ = kNumber;
    kind = JsonScalar::kNumber;
  } else {
    return Fail(std::string("unexpected character '") + c + "'");
  }
  handler_->Scalar(kind);
}

template <class Handler>
void JsonStream<Handler>::AppendRune(uint32_t r) {
  if (!want_text_ || truncated_) return;
  json_stream::AppendUtf8(&text_, r);
  if (text_.size() > keep_) truncated_ = true;
}

template <class Handler>
void JsonStream<Handler>::StringByte(char c) {
  if (!want_text_ || truncated_) return;
  text_.push_back(c);
  if (text_.size() > keep_) truncated_ = true;
}

template <class Handler>
void JsonStream<Handler>::EndString() {
  if (high_surrogate_) AppendRune(0xFFFD);
  high_surrogate_ = 0;
  bool want = want_text_;
  want_text_ = false;
  std::string_view text;
  if (want) {
    json_stream::CoerceUtf8(&text_);
    text = text_;
  }
  if (in_key_) {
    in_key_ = false;
    state_ = kColon;
    handler_->Key(text, truncated_);
    return;
  }
  handler_->String(text, truncated_);
  EndValue();
}

template <class Handler>
bool JsonStream<Handler>::NumberByte(char c) {
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

template <class Handler>
void JsonStream<Handler>::Step(char c) {
  using json_stream::IsSpace;
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
      return BeginString(true);
    case kColon:
      if (IsSpace(c)) return;
      if (c != ':') return Fail("no ':' after an object key");
      state_ = kValue;
      return;
    case kAfterValue:
      if (IsSpace(c)) return;
      if (c == ',') {
        state_ = objects_.back() ? kKeyStart : kValue;
        return;
      }
      if (c == '}' || c == ']') return CloseContainer(c == '}');
      return Fail(std::string("unexpected character '") + c + "' after a value");
    case kString:
      if (c == '"') return EndString();
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
      int h = json_stream::HexValue(c);
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
      if (literal_ == "null") handler_->Null();
      return EndValue();
    case kDone:
    case kError: return;
  }
}

template <class Handler>
void JsonStream<Handler>::Feed(std::string_view chunk) {
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
        if (want_text_ && !truncated_) {
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

}  // namespace ocid
