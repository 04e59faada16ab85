#include "loadtest/json_writer.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace onyx::load {

std::string JsonEscape(absl::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  return out;
}

void JsonWriter::Separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ",";
    first_.back() = false;
  }
}

void JsonWriter::Open(char c) {
  Separate();
  out_.push_back(c);
  first_.push_back(true);
}

void JsonWriter::Close(char c) {
  out_.push_back(c);
  first_.pop_back();
}

void JsonWriter::Key(absl::string_view key) {
  Separate();
  absl::StrAppend(&out_, "\"", JsonEscape(key), "\":");
  after_key_ = true;
}

void JsonWriter::String(absl::string_view s) {
  Separate();
  absl::StrAppend(&out_, "\"", JsonEscape(s), "\"");
}

void JsonWriter::Int(int64_t v) {
  Separate();
  absl::StrAppend(&out_, v);
}

void JsonWriter::Double(double v) {
  Separate();
  if (!std::isfinite(v)) {
    out_ += "null";
  } else if (v == std::floor(v) && std::abs(v) < 1e15) {
    absl::StrAppend(&out_, static_cast<int64_t>(v));
  } else {
    out_ += absl::StrFormat("%.17g", v);
  }
}

void JsonWriter::Bool(bool v) {
  Separate();
  out_ += v ? "true" : "false";
}

void JsonWriter::Null() {
  Separate();
  out_ += "null";
}

}  // namespace onyx::load
