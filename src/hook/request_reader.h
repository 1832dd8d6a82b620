// Did a container ask, as runc reads its config.json? The streaming reader
// that decides it once the raw-byte scan (request_scan.h) found a flag
// mentioned somewhere.
//
// A request is an activation flag as a variable of the final process.env
// ("FLAG=value" or "FLAG" alone: EnvEntryIs, bundle_config.h) or the
// annotation "oci-decorator/FLAG" in the final annotations, whatever its
// value: a flag that is present asks (an off value included), and only then
// do the caps and the strict parse apply (decision.h). A mention anywhere
// else (process.args, another variable's value, a mount) asks for nothing.
//
// "Final" is what runc gets from json.NewDecoder(f).Decode(&spec) (runc
// spec.go, loadSpec) into the runtime-spec types (specs-go/config.go:
// `Process *Process json:"process,omitempty"`, `Env []string
// json:"env,omitempty"`, `Annotations map[string]string
// json:"annotations,omitempty"`), with Go's encoding/json semantics:
//   - an object key matches a field exactly or by Go's case folding
//     (GoFoldEquals, spec_keys.h: "Process", "ENV", "proceſs");
//   - keys given twice are decoded in order: a later env array replaces
//     the earlier one, a later "process" object decodes into the same
//     struct (its env stays unless replaced), annotation objects accumulate;
//   - null resets: "process": null drops the env, "env": null and
//     "annotations": null empty them; a null env entry is "", a null
//     annotation value is "" (the annotation is present);
//   - strings are unescaped (\uXXXX, surrogate pairs; a lone surrogate is
//     U+FFFD) and invalid UTF-8 becomes U+FFFD, never an error;
//   - only the first JSON value counts: the Decoder stops there, so bytes
//     after it are never read.
//
// The reader takes its input in chunks split anywhere and keeps, besides a
// nesting stack of at most Go's 10000 levels, only the first bytes of the
// keys and env entries it must compare: memory is bounded whatever the
// size of the document, so no size cap applies to deciding.
//
// Malformed input: a syntax error, input that ends early, a first value
// that is not an object, or the wrong type where a request would be
// ("process": [], an env entry 5) is kUnreadable: the reader cannot tell,
// and neither can runc, which refuses to run such a config.json itself.
// So treating kUnreadable like kAsked once a flag is mentioned fails
// nothing runc runs, and the caps and the strict parse then name what is
// wrong, as before this reader existed. The wrong type anywhere else
// ("root": 5) is not looked at: runc refuses that document before any
// hook runs, and the mention asks for nothing. A container that did not
// ask is never failed: every document runc runs is readable here and
// reads as not asking unless it asks.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "json_stream.h"

namespace ocid {

class RequestReader {
 public:
  // kConfig: config.json (process.env and annotations). kState: the OCI
  // state on a hook's stdin (annotations only).
  enum class Document { kConfig, kState };
  enum class Verdict { kNotAsked, kAsked, kUnreadable };

  RequestReader(const std::vector<std::string>& flags, Document doc);
  // Feeds the next chunk; chunks may split anything anywhere. Cheap once
  // done() (the first value ended, or the input is unreadable).
  void Feed(std::string_view chunk);
  bool done() const { return stream_.done(); }
  // The verdict on what was fed, taken as the whole input.
  Verdict Finish() const;
  // What asked ("process.env OCI_ONLOAD", "annotation oci-decorator/X"), or
  // why the input is unreadable ("at byte 12: ..."); "" when not asked.
  std::string Detail() const;
  // An FdInput observer (files.h): Feed on the reader `self`.
  static void Observe(void* self, std::string_view chunk) {
    static_cast<RequestReader*>(self)->Feed(chunk);
  }

 private:
  friend class JsonStream<RequestReader>;

  // What the value being read (or the open container) means here.
  enum Role : uint8_t {
    kIgnored,
    kRoot,
    kProcess,
    kEnv,
    kEnvEntry,
    kAnnotations,
    kAnnotationValue,
  };

  // The events of stream_ (json_stream.h).
  void ObjectStart() { OpenContainer(true); }
  void ArrayStart() { OpenContainer(false); }
  void ObjectEnd() { CloseContainer(); }
  void ArrayEnd() { CloseContainer(); }
  bool StringStart(bool key);
  void Key(std::string_view text, bool truncated);
  void String(std::string_view text, bool truncated);
  void Scalar(JsonScalar kind);
  void Null();

  void OpenContainer(bool object);
  void CloseContainer();
  Role NextRole() const;  // the role of the value starting now
  Role FieldRole(std::string_view key) const;
  static const char* Wants(Role role);
  static size_t KeepFor(const std::vector<std::string>& flags);

  std::vector<std::string> flags_;
  Document doc_;
  JsonStream<RequestReader> stream_;

  // Open containers: role, and whether it is an object.
  struct Frame {
    Role role;
    bool object;
  };
  std::vector<Frame> stack_;
  Role pending_ = kIgnored;   // an object's field role, from the key just read
  int annotation_flag_ = -1;  // the flag the annotation key just read names

  // The decision so far, as runc's struct would hold it.
  std::vector<bool> env_now_;       // flags present in the current env
  std::vector<bool> env_building_;  // flags in the env array being read
  std::vector<bool> annotations_;   // flags with an activation annotation
};

}  // namespace ocid
