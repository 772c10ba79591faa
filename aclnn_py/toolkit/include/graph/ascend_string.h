/*
 * graph/ascend_string.h: ge::AscendString, the string type of CANN's graph API (aclnn-py).
 */
#ifndef ACLNN_PY_GRAPH_ASCEND_STRING_H_
#define ACLNN_PY_GRAPH_ASCEND_STRING_H_

#include <cstddef>
#include <string>

namespace ge {
class AscendString {
public:
    AscendString() = default;
    AscendString(const char *text) : text_(text ? text : "") {}  // NOLINT: implicit as CANN's
    AscendString(const char *text, size_t length) : text_(text ? std::string(text, length) : "") {}
    const char *GetString() const { return text_.c_str(); }
    size_t GetLength() const { return text_.size(); }
    bool operator<(const AscendString &o) const { return text_ < o.text_; }
    bool operator>(const AscendString &o) const { return text_ > o.text_; }
    bool operator<=(const AscendString &o) const { return text_ <= o.text_; }
    bool operator>=(const AscendString &o) const { return text_ >= o.text_; }
    bool operator==(const AscendString &o) const { return text_ == o.text_; }
    bool operator!=(const AscendString &o) const { return text_ != o.text_; }

private:
    std::string text_;
};
}  // namespace ge

#endif  // ACLNN_PY_GRAPH_ASCEND_STRING_H_
