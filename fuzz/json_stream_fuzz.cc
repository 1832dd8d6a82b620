// The streaming JSON tokenizer (JsonStream, json_stream.h) on arbitrary
// bytes, with a handler that records every event. The oracle is the input
// taken whole: fed byte by byte, in chunks cut where the input's own hash
// says, or cut once at a few offsets, the stream must give the same events,
// the same end (ended, failed, why) and the same offset. Every kept text
// stays bounded: at most keep + 4 decoded bytes, each of which the UTF-8
// coercion may turn into 3.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "fuzz_chunks.h"
#include "json_stream.h"

namespace {

using ocid_fuzz::Fnv1a;
using ocid_fuzz::Splits;

// Small, so that the keep bound is crossed often.
constexpr size_t kKeep = 24;

struct Recorder {
  std::string events;
  size_t strings = 0;

  void ObjectStart() { events += '{'; }
  void ObjectEnd() { events += '}'; }
  void ArrayStart() { events += '['; }
  void ArrayEnd() { events += ']'; }
  // Every third string's text is not wanted.
  bool StringStart(bool key) {
    events += key ? 'K' : 'S';
    return ++strings % 3 != 0;
  }
  void Text(char what, std::string_view text, bool truncated) {
    FUZZ_CHECK(text.size() <= 3 * (kKeep + 4));
    FUZZ_CHECK(!truncated || !text.empty() || strings % 3 == 0);
    events += what;
    events += truncated ? '+' : '=';
    events += std::to_string(text.size());
    events += ':';
    events.append(text.data(), text.size());
  }
  void Key(std::string_view text, bool truncated) { Text('k', text, truncated); }
  void String(std::string_view text, bool truncated) { Text('s', text, truncated); }
  void Scalar(ocid::JsonScalar kind) { events += static_cast<char>('0' + static_cast<int>(kind)); }
  void Null() { events += 'n'; }
};

struct Outcome {
  std::string events;
  bool ended;
  bool failed;
  std::string why;
  uint64_t offset;
};

Outcome Run(std::string_view in, const std::vector<size_t>& cuts) {
  Recorder recorder;
  ocid::JsonStream<Recorder> stream(&recorder, kKeep);
  size_t at = 0;
  auto feed = [&](size_t end) {
    stream.Feed(in.substr(at, end - at));
    at = end;
  };
  for (size_t c : cuts) feed(c);
  feed(in.size());
  FUZZ_CHECK(stream.offset() <= in.size());
  FUZZ_CHECK(stream.done() == (stream.ended() || stream.failed()));
  FUZZ_CHECK(stream.failed() == !stream.why().empty());
  return {recorder.events, stream.ended(), stream.failed(), stream.why(), stream.offset()};
}

bool Same(const Outcome& a, const Outcome& b) {
  return a.events == b.events && a.ended == b.ended && a.failed == b.failed && a.why == b.why &&
         a.offset == b.offset;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  const Outcome whole = Run(in, {});

  std::vector<size_t> bytes;
  for (size_t i = 1; i < in.size(); ++i) bytes.push_back(i);
  FUZZ_CHECK(Same(whole, Run(in, bytes)));

  Splits splits{Fnv1a(in)};
  for (int round = 0; round < 4; ++round) {
    std::vector<size_t> cuts;
    for (size_t c = splits.Size(); c < in.size(); c += splits.Size()) cuts.push_back(c);
    FUZZ_CHECK(Same(whole, Run(in, cuts)));
  }
  // One seam at a few offsets, an empty chunk among them.
  for (int round = 0; round < 4 && !in.empty(); ++round) {
    size_t c = splits.Next() % (in.size() + 1);
    FUZZ_CHECK(Same(whole, Run(in, {c, c})));
  }
  return 0;
}
