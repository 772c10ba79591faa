/*
 * ophost_main.cpp: the driver aclnn-py links with a CANN op_host source (aclnn_py/toolkit/
 * ophost.py). It constructs every operator that the source's OP_ADD registered and writes what
 * each definition declared, as JSON, to the file named by argv[1]. Every string from the source
 * (names, SoC names, string attribute values) is written hex-encoded, so the reader takes it
 * as data whatever bytes it holds.
 */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "register/op_def_registry.h"

namespace ops {
namespace detail {
struct Access {
    static std::string Hex(const std::string &s)
    {
        static const char digits[] = "0123456789abcdef";
        std::string out = "\"";
        for (unsigned char c : s) {
            out += digits[c >> 4];
            out += digits[c & 15];
        }
        return out + "\"";
    }

    static std::string Int(long long v) { return std::to_string(v); }

    /* the shortest decimal that reads back as the same float */
    static std::string Float(float v)
    {
        if (std::isnan(v))
            return "\"nan\"";
        if (std::isinf(v))
            return v > 0 ? "\"inf\"" : "\"-inf\"";
        char buf[64];
        for (int digits = 1; digits <= 9; digits++) {
            std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(v));
            if (std::strtof(buf, nullptr) == v)
                break;
        }
        std::string s = buf;
        if (s.find_first_of(".eEn") == std::string::npos)
            s += ".0";
        return s;
    }

    template <typename T, typename F>
    static std::string List(const std::vector<T> &items, F each)
    {
        std::string out = "[";
        for (size_t i = 0; i < items.size(); i++)
            out += (i ? "," : "") + each(items[i]);
        return out + "]";
    }

    static std::string Param(const OpParamDef &p)
    {
        return "{\"name\":" + Hex(p.name_) + ",\"param_type\":" + Int(p.param_type_) +
               ",\"types\":" + List(p.types_, [](ge::DataType t) { return Int(t); }) +
               ",\"types_mode\":" + Int(p.types_mode_) +
               ",\"formats\":" + List(p.formats_, [](ge::Format f) { return Int(f); }) +
               ",\"formats_mode\":" + Int(p.formats_mode_) + ",\"follow\":" + Hex(p.follow_) +
               ",\"follow_type\":" + Int(static_cast<int>(p.follow_type_)) +
               ",\"scalar\":" + Int(p.scalar_) + "}";
    }

    static std::string Params(const std::deque<std::pair<std::string, OpParamDef>> &ps)
    {
        std::string out = "[";
        bool first = true;
        for (const auto &p : ps) {
            out += (first ? "" : ",") + Param(p.second);
            first = false;
        }
        return out + "]";
    }

    static std::string Value(const OpAttrDef &a)
    {
        switch (a.type_) {
        case AttrDataType::ATTR_DT_BOOL: return a.b_ ? "true" : "false";
        case AttrDataType::ATTR_DT_FLOAT: return Float(a.f_);
        case AttrDataType::ATTR_DT_INT: return Int(a.i_);
        case AttrDataType::ATTR_DT_STR: return Hex(a.s_);
        case AttrDataType::ATTR_DT_LIST_BOOL:
            return List(a.lb_, [](bool b) { return std::string(b ? "true" : "false"); });
        case AttrDataType::ATTR_DT_LIST_FLOAT: return List(a.lf_, Float);
        case AttrDataType::ATTR_DT_LIST_INT:
            return List(a.li_, [](int64_t v) { return Int(v); });
        case AttrDataType::ATTR_DT_LIST_LIST_INT:
            return List(a.lli_, [](const std::vector<int64_t> &row) {
                return List(row, [](int64_t v) { return Int(v); });
            });
        default: return "null";
        }
    }

    static std::string Op(const OpDefEntry &e, const OpDef &d)
    {
        std::string out = "{\"op\":" + Hex(e.name) + ",\"type\":" + Hex(d.type_) +
                          ",\"file\":" + Hex(e.file) + ",\"line\":" + Int(e.line) +
                          ",\"inputs\":" + Params(d.params_.inputs_) +
                          ",\"outputs\":" + Params(d.params_.outputs_) + ",\"attrs\":[";
        bool first = true;
        for (const auto &a : d.attrs_) {
            out += std::string(first ? "" : ",") + "{\"name\":" + Hex(a.second.name_) +
                   ",\"required\":" + (a.second.required_ ? "true" : "false") +
                   ",\"type\":" + Int(static_cast<int>(a.second.type_)) +
                   ",\"value\":" + Value(a.second) + "}";
            first = false;
        }
        out += "],\"configs\":[";
        first = true;
        for (const auto &c : d.aicore_.configs_) {
            out += std::string(first ? "" : ",") + "{\"soc\":" + Hex(c.first) +
                   ",\"inputs\":" + Params(c.second.params_.inputs_) +
                   ",\"outputs\":" + Params(c.second.params_.outputs_) + "}";
            first = false;
        }
        return out + "]}";
    }
};
}  // namespace detail
}  // namespace ops

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUTPUT.json\n", argv[0]);
        return 2;
    }
    std::string out = "{\"ops\":[";
    bool first = true;
    for (const auto &e : ops::detail::OpDefRegistry()) {
        ops::OpDef *d = nullptr;
        try {
            d = e.make(e.name);
        } catch (const std::exception &exc) {
            std::fprintf(stderr, "%s:%d: constructing %s threw: %s\n", e.file, e.line, e.name,
                         exc.what());
            return 3;
        } catch (...) {
            std::fprintf(stderr, "%s:%d: constructing %s threw\n", e.file, e.line, e.name);
            return 3;
        }
        out += (first ? "" : ",") + ops::detail::Access::Op(e, *d);
        first = false;
        delete d;
    }
    out += "]}\n";
    std::FILE *f = std::fopen(argv[1], "wb");
    if (!f || std::fwrite(out.data(), 1, out.size(), f) != out.size() || std::fclose(f) != 0) {
        std::perror(argv[1]);
        return 4;
    }
    return 0;
}
