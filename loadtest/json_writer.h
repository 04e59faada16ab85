// A small streaming JSON writer for onyx-load's reports: keys in the order
// written, numbers printed so they read back exactly (%.17g for doubles,
// integers as integers), strings escaped per RFC 8259.
//
//   JsonWriter j;  j.BeginObject();  j.Key("p99_ns"); j.Int(1234);  j.EndObject();
//   std::string text = j.Take();
//
// Thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

namespace onyx::load {

class JsonWriter {
 public:
  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  void Key(absl::string_view key);
  void String(absl::string_view s);
  void Int(int64_t v);
  void Double(double v);  // NaN and infinities become null
  void Bool(bool v);
  void Null();

  // Shorthands for a key and its value.
  void Field(absl::string_view key, absl::string_view v) { Key(key), String(v); }
  void Field(absl::string_view key, const char* v) { Key(key), String(v); }
  void Field(absl::string_view key, int64_t v) { Key(key), Int(v); }
  void Field(absl::string_view key, int v) { Key(key), Int(v); }
  void Field(absl::string_view key, double v) { Key(key), Double(v); }
  void Field(absl::string_view key, bool v) { Key(key), Bool(v); }

  std::string Take() { return std::move(out_); }

 private:
  void Open(char c);
  void Close(char c);
  void Separate();
  std::string out_;
  std::vector<bool> first_;  // per open container: nothing written yet
  bool after_key_ = false;
};

std::string JsonEscape(absl::string_view s);

}  // namespace onyx::load
