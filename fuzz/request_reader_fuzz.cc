// The streaming request reader (RequestReader, request_reader.h) and the
// raw-byte scan before it (FlagScanner, request_scan.h) on arbitrary bytes,
// as config.json and as the OCI state. Both decide, as root, whether a
// container that mentions a flag asked, from input split into chunks
// wherever a read() or a pipe split it. The oracle is the input taken
// whole: fed byte by byte, in chunks cut where the input's own hash says,
// cut once at a few offsets, or stopped at done() as ScanFileForFlags
// stops, the reader must give the same verdict and the same Detail(), and
// the scanner the same mention. And the scan must be sound: a document it
// finds no flag in must not read as asking (the hook skips the reader
// then).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "fuzz_chunks.h"
#include "request_reader.h"
#include "request_scan.h"

namespace {

using ocid_fuzz::Fnv1a;
using ocid_fuzz::Splits;

using ocid::RequestReader;

const std::vector<std::string>& Flags() {
  static const std::vector<std::string> flags = {"OCI_ONLOAD", "OCI_ZF"};
  return flags;
}

struct Outcome {
  RequestReader::Verdict verdict;
  std::string detail;
  bool done;
  bool mentioned;
};

// Feeds `in` in the chunks `cuts` (ascending offsets) to a fresh reader and
// scanner; `stop_at_done`: no more chunks to the reader once done(), as
// ScanFileForFlags does.
Outcome Run(RequestReader::Document doc, std::string_view in, const std::vector<size_t>& cuts,
            bool stop_at_done) {
  RequestReader reader(Flags(), doc);
  ocid::FlagScanner scanner(Flags());
  size_t at = 0;
  auto feed = [&](size_t end) {
    std::string_view chunk = in.substr(at, end - at);
    at = end;
    scanner.Feed(chunk);
    if (!(stop_at_done && reader.done())) reader.Feed(chunk);
  };
  for (size_t c : cuts) feed(c);
  feed(in.size());
  return {reader.Finish(), reader.Detail(), reader.done(), scanner.mentioned()};
}

bool Same(const Outcome& a, const Outcome& b) {
  return a.verdict == b.verdict && a.detail == b.detail && a.done == b.done &&
         a.mentioned == b.mentioned;
}

void Check(RequestReader::Document doc, std::string_view in) {
  const Outcome whole = Run(doc, in, {}, false);
  // The scan is sound: no flag mentioned, no request read.
  if (!whole.mentioned) FUZZ_CHECK(whole.verdict != RequestReader::Verdict::kAsked);
  FUZZ_CHECK(whole.verdict == RequestReader::Verdict::kNotAsked || !whole.detail.empty());
  FUZZ_CHECK(Same(whole, Run(doc, in, {}, true)));

  std::vector<size_t> bytes;
  for (size_t i = 1; i < in.size(); ++i) bytes.push_back(i);
  FUZZ_CHECK(Same(whole, Run(doc, in, bytes, false)));
  FUZZ_CHECK(Same(whole, Run(doc, in, bytes, true)));

  Splits splits{Fnv1a(in) ^ static_cast<uint64_t>(doc)};
  for (int round = 0; round < 4; ++round) {
    std::vector<size_t> cuts;
    for (size_t c = splits.Size(); c < in.size(); c += splits.Size()) cuts.push_back(c);
    FUZZ_CHECK(Same(whole, Run(doc, in, cuts, round % 2 == 1)));
  }
  // One seam at a few offsets, an empty chunk among them.
  for (int round = 0; round < 4 && !in.empty(); ++round) {
    size_t c = splits.Next() % (in.size() + 1);
    FUZZ_CHECK(Same(whole, Run(doc, in, {c, c}, false)));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  Check(RequestReader::Document::kConfig, in);
  Check(RequestReader::Document::kState, in);
  return 0;
}
