// json_stream: the push tokenizer under RequestReader, on hostile input.
// Each case is fed whole and one byte at a time; both must give the same
// events, end and failure offset.
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "json_stream.h"

namespace {

constexpr size_t kKeep = 8;

// Records the events as text: "{", "}", "[", "]", "k=TEXT" (a key),
// "s=TEXT" ("s+TEXT" when truncated), "#" (a number or boolean starts),
// "null".
struct Recorder {
  std::string events;
  void ObjectStart() { events += "{"; }
  void ObjectEnd() { events += "}"; }
  void ArrayStart() { events += "["; }
  void ArrayEnd() { events += "]"; }
  bool StringStart(bool /*key*/) { return true; }
  void Key(std::string_view text, bool truncated) {
    events += std::string(truncated ? " k+" : " k=") + std::string(text);
  }
  void String(std::string_view text, bool truncated) {
    events += std::string(truncated ? " s+" : " s=") + std::string(text);
  }
  void Scalar(ocid::JsonScalar kind) {
    if (kind != ocid::JsonScalar::kNull) events += " #";
  }
  void Null() { events += " null"; }
};

struct Result {
  std::string events;
  bool ended;
  std::string why;
  uint64_t offset;
  bool operator==(const Result& o) const {
    return events == o.events && ended == o.ended && why == o.why && offset == o.offset;
  }
};

Result Feed(const std::string& in, size_t chunk) {
  Recorder recorder;
  ocid::JsonStream<Recorder> stream(&recorder, kKeep);
  for (size_t at = 0; at < in.size(); at += chunk)
    stream.Feed(std::string_view(in).substr(at, chunk));
  return {recorder.events, stream.ended(), stream.why(), stream.offset()};
}

Result Read(const std::string& in) {
  Result whole = Feed(in, in.size() + 1);
  CHECK(Feed(in, 1) == whole);
  CHECK(Feed(in, 3) == whole);
  return whole;
}

}  // namespace

TEST_CASE("json_stream: a document's events, and bytes after the first value unread") {
  Result r = Read(R"( {"a": [1, -2.5e+3, true, false, null], "b": {}} trailing garbage)");
  CHECK(r.ended);
  CHECK(r.why.empty());
  CHECK(r.events == "{ k=a[ # # # # null] k=b{}}");
  CHECK(r.offset == 48);
}

TEST_CASE("json_stream: 10000 levels are read, 10001 fail at the last '['") {
  Result ok = Read(std::string(10000, '[') + std::string(10000, ']'));
  CHECK(ok.ended);
  Result deep = Read(std::string(10001, '['));
  CHECK_FALSE(deep.ended);
  CHECK(deep.why == "at byte 10000: nested deeper than 10000 levels");
}

TEST_CASE("json_stream: a lone surrogate is U+FFFD, a pair is one rune") {
  CHECK(Read(R"(["\ud800"])").events == "[ s=\xEF\xBF\xBD]");
  CHECK(Read(R"(["\udc00x"])").events == "[ s=\xEF\xBF\xBDx]");
  CHECK(Read(R"(["\ud800\u0041"])").events ==
        "[ s=\xEF\xBF\xBD"
        "A]");
  CHECK(Read(R"(["\ud83d\ude00"])").events == "[ s=\xF0\x9F\x98\x80]");
  // Invalid UTF-8 is coerced, never an error.
  CHECK(Read("[\"\xff\"]").events == "[ s=\xEF\xBF\xBD]");
}

TEST_CASE("json_stream: a \\u escape split across chunks") {
  const std::string in = R"({"k\u0041y": "\ud83d\ude00"})";
  for (size_t cut = 1; cut < in.size(); ++cut) {
    Recorder recorder;
    ocid::JsonStream<Recorder> stream(&recorder, kKeep);
    stream.Feed(std::string_view(in).substr(0, cut));
    stream.Feed(std::string_view(in).substr(cut));
    CAPTURE(cut);
    CHECK(recorder.events == "{ k=kAy s=\xF0\x9F\x98\x80}");
    CHECK(stream.ended());
  }
}

TEST_CASE("json_stream: a string is kept up to the keep bound, then marked truncated") {
  CHECK(Read(R"(["12345678"])").events == "[ s=12345678]");
  CHECK(Read(R"(["123456789abc"])").events == "[ s+123456789]");
  CHECK(Read(R"(["1234567\u00e9"])").events == "[ s+1234567\xC3\xA9]");
  CHECK(Read(R"(["12345678\n"])").events == "[ s+12345678\n]");
}

TEST_CASE("json_stream: malformed input fails at the byte that shows it") {
  CHECK(Read("[1,]").why == "at byte 3: unexpected character ']'");
  CHECK(Read(R"({"a" 1})").why == "at byte 5: no ':' after an object key");
  CHECK(Read("[01]").why == "at byte 2: a number with a leading zero");
  CHECK(Read("[\"\x01\"]").why == "at byte 2: a control character in a string");
  CHECK(Read(R"(["\u12g4"])").why == "at byte 6: a \\u escape without 4 hex digits");
  CHECK(Read("[tru]").why == "at byte 4: an invalid literal");
  Result early = Read(R"({"a": "b)");
  CHECK_FALSE(early.ended);
  CHECK(early.why.empty());
  CHECK(early.offset == 8);
}
