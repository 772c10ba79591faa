/*
 * ophost_tiling.cpp: runs an op_host source's tiling function for given tensors and attribute
 * values (aclnn_py/toolkit/ophost.py, ophost.tiled). Linked with the source into a program of
 * its own (a crash or a hang of the tiling function is that program's): it reads a request of
 * one item per line from the file argv[1] and writes the answer to the file argv[2]:
 *
 *   op <hex name>
 *   in <dtype> <format> <ndim> <dims...>       each input tensor (a dynamic input's, in order)
 *   in -1                                      an absent optional input
 *   ir <first> <count>                         each input of the definition: its tensors
 *   out <dtype> <format> <ndim> <dims...>
 *   attr i <v> | f <v> | b <0|1> | s <hex> | li <n> <v...> | lf <n> <v...> | lb <n> <v...>
 *
 * answer: "status <graphStatus>\nblock_dim <n>\ntiling_key <n>\nworkspace <n> <v...>\n
 *          tiling <hex>\n" (or "error <text>\n").
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "register/op_def_registry.h"

namespace {
std::string Unhex(const std::string &hex)
{
    std::string out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2)
        out += static_cast<char>(std::strtol(hex.substr(i, 2).c_str(), nullptr, 16));
    return out;
}

class Context : public gert::TilingContext {
public:
    Context()
    {
        platform_ = &platform;
        compile_info_ = compile_info;
    }
    bool Tensor(std::istringstream &in, bool output)
    {
        int dtype = 0, format = 0;
        size_t ndim = 0;
        in >> dtype;
        if (dtype < 0 && !output) {  // an absent optional input
            inputs_.emplace_back();
            in_desc_.emplace_back();
            return true;
        }
        in >> format >> ndim;
        gert::StorageShape shape;
        for (size_t i = 0; i < ndim; i++) {
            int64_t d = 0;
            in >> d;
            shape.MutableOriginShape().AppendDim(d);
            shape.MutableStorageShape().AppendDim(d);
        }
        if (!in)
            return false;
        gert::CompileTimeTensorDesc desc;
        desc.SetDataType(static_cast<ge::DataType>(dtype));
        desc.SetStorageFormat(static_cast<ge::Format>(format));
        desc.SetOriginFormat(static_cast<ge::Format>(format));
        if (output) {
            out_shapes_.push_back(shape);
            out_desc_.push_back(desc);
        } else {
            inputs_.emplace_back(shape, gert::StorageFormat(desc.GetOriginFormat(),
                                                            desc.GetStorageFormat()),
                                 desc.GetDataType());
            in_desc_.push_back(desc);
        }
        return true;
    }
    void Instances(size_t first, size_t count) { instances_.emplace_back(first, count); }
    bool Attr(std::istringstream &in)
    {
        std::string kind;
        in >> kind;
        if (kind == "i") {
            ints.emplace_back();
            in >> ints.back();
            attrs_.AppendAttr(&ints.back());
        } else if (kind == "f") {
            floats.push_back(Float(in));
            attrs_.AppendAttr(&floats.back());
        } else if (kind == "b") {
            int v = 0;
            in >> v;
            bools.push_back(v != 0);
            attrs_.AppendAttr(&bools.back());
        } else if (kind == "s") {
            std::string hex;
            in >> hex;
            strings.push_back(Unhex(hex));
            attrs_.AppendAttr(strings.back().c_str());
        } else if (kind == "li" || kind == "lf" || kind == "lb") {
            size_t n = 0;
            in >> n;
            if (kind == "li") {
                std::vector<int64_t> v(n);
                for (auto &x : v)
                    in >> x;
                int_lists.emplace_back(v.data(), v.size());
                attrs_.AppendAttr(&int_lists.back());
            } else if (kind == "lf") {
                std::vector<float> v(n);
                for (auto &x : v)
                    x = Float(in);
                float_lists.emplace_back(v.data(), v.size());
                attrs_.AppendAttr(&float_lists.back());
            } else {
                std::vector<char> v(n);
                for (auto &x : v) {
                    int b = 0;
                    in >> b;
                    x = static_cast<char>(b != 0);
                }
                bool_lists.emplace_back(reinterpret_cast<const bool *>(v.data()), v.size());
                attrs_.AppendAttr(&bool_lists.back());
            }
        } else {
            return false;
        }
        return static_cast<bool>(in);
    }
    void Name(const std::string &name)
    {
        name_ = name;
        type_ = name;
    }
    std::string Answer(ge::graphStatus status)
    {
        static const char digits[] = "0123456789abcdef";
        std::ostringstream out;
        out << "status " << status << "\nblock_dim " << block_dim_ << "\ntiling_key "
            << tiling_key_ << "\nworkspace " << workspaces_.size();
        for (size_t w : workspaces_)
            out << ' ' << w;
        out << "\ntiling ";
        const unsigned char *data = static_cast<const unsigned char *>(tiling_.GetData());
        for (size_t i = 0; i < tiling_.GetDataSize(); i++)
            out << digits[data[i] >> 4] << digits[data[i] & 15];
        out << "\n";
        return out.str();
    }

private:
    static float Float(std::istringstream &in)  /* decimal, hex, inf or nan */
    {
        std::string token;
        in >> token;
        return std::strtof(token.c_str(), nullptr);
    }
    fe::PlatFormInfos platform;
    char compile_info[4096] = {};
    std::deque<int64_t> ints;
    std::deque<float> floats;
    std::deque<bool> bools;
    std::deque<std::string> strings;
    std::deque<gert::TypedContinuousVector<int64_t>> int_lists;
    std::deque<gert::TypedContinuousVector<float>> float_lists;
    std::deque<gert::TypedContinuousVector<bool>> bool_lists;
};

std::string Tile(const std::string &request)
{
    try {
        std::istringstream lines(request);
        std::string line, op;
        Context ctx;
        while (std::getline(lines, line)) {
            std::istringstream in(line);
            std::string key;
            in >> key;
            bool ok = true;
            if (key == "op") {
                std::string hex;
                in >> hex;
                op = Unhex(hex);
            } else if (key == "in" || key == "out") {
                ok = ctx.Tensor(in, key == "out");
            } else if (key == "ir") {
                size_t first = 0, count = 0;
                in >> first >> count;
                ctx.Instances(first, count);
            } else if (key == "attr") {
                ok = ctx.Attr(in);
            } else if (!key.empty()) {
                ok = false;
            }
            if (!ok)
                return "error malformed request line: " + line + "\n";
        }
        for (const auto &e : ops::detail::OpDefRegistry()) {
            if (op != e.name)
                continue;
            ops::OpDef *def = e.make(e.name);
            auto tiling = def->AICore().GetTiling();
            delete def;
            if (tiling == nullptr)
                return "error " + op + " sets no tiling function (AICore().SetTiling)\n";
            ctx.Name(op);
            ge::graphStatus status = tiling(&ctx);
            return ctx.Answer(status);
        }
        return "error no OP_ADD registered " + op + "\n";
    } catch (const std::exception &exc) {
        return std::string("error the tiling function threw: ") + exc.what() + "\n";
    } catch (...) {
        return "error the tiling function threw\n";
    }
}
}  // namespace

int main(int argc, char **argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s REQUEST ANSWER\n", argv[0]);
        return 2;
    }
    std::string request;
    if (std::FILE *f = std::fopen(argv[1], "rb")) {
        char buf[4096];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
            request.append(buf, n);
        std::fclose(f);
    } else {
        std::perror(argv[1]);
        return 4;
    }
    std::string answer = Tile(request);
    std::FILE *f = std::fopen(argv[2], "wb");
    if (!f || std::fwrite(answer.data(), 1, answer.size(), f) != answer.size() ||
        std::fclose(f) != 0) {
        std::perror(argv[2]);
        return 4;
    }
    return 0;
}
