// Chunk sizes for the fuzzers that feed a streaming reader in pieces: drawn
// from the input's own hash, so that a crash reproduces from its saved input
// alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ocid_fuzz {

// splitmix64.
struct Splits {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Mostly small chunks (the seams are what matter), sometimes large.
  size_t Size() {
    uint64_t r = Next();
    return (r & 3) == 0 ? 1 + (r >> 8) % 4096 : 1 + (r >> 8) % 16;
  }
};

// FNV-1a of the input: the seed of its Splits.
inline uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

}  // namespace ocid_fuzz
