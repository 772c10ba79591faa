// A small driver that runs softmax cases through the real oneDNN for benchmarks/onednn_compare.py.
//
// Input: a manifest, one case a line of space-separated key=value tokens (written by the Python
// script). Data travels as raw bytes in the logical (row-major, "abx") order; the driver reorders
// it into the case's memory format, runs the primitive, reorders the result back to abx and writes
// its bytes. Output on stdout, one line a case: "ok ID" or "refused ID message".
//
// Build: g++ -O1 -std=c++17 onednn_driver.cpp -I<venv>/include -L<venv>/lib -ldnnl
// Run:   OCL_ICD_FILENAMES=<venv>/lib/libintelocl.so LD_LIBRARY_PATH=<venv>/lib ./driver MANIFEST
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"

using namespace dnnl;
using dt = memory::data_type;
using tag = memory::format_tag;

namespace {

struct refusal : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::vector<std::string> split(const std::string &s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    std::istringstream is(s);
    while (std::getline(is, cur, sep)) out.push_back(cur);
    return out;
}

dt dtype_of(const std::string &s) {
    static const std::map<std::string, dt> m = {{"f32", dt::f32}, {"f64", dt::f64},
            {"bf16", dt::bf16}, {"f16", dt::f16}, {"s8", dt::s8}, {"u8", dt::u8},
            {"s32", dt::s32}, {"f8_e5m2", dt::f8_e5m2}, {"f8_e4m3", dt::f8_e4m3}};
    auto it = m.find(s);
    if (it == m.end()) throw refusal("driver: unknown data type " + s);
    return it->second;
}

size_t dt_size(dt d) {
    switch (d) {
        case dt::f64: return 8;
        case dt::f32:
        case dt::s32: return 4;
        case dt::bf16:
        case dt::f16: return 2;
        default: return 1;
    }
}

memory::dims dims_of(const std::string &s) {
    memory::dims d;
    for (auto &p : split(s, 'x')) d.push_back(std::stoll(p));
    return d;
}

// A memory descriptor for a benchdnn tag: "abx", "axb", a plain permutation such as "acb",
// or a channel-blocked "aBx4b" / "aBx8b" / "aBx16b".
memory::desc md_of(const memory::dims &d, dt t, const std::string &tg) {
    const int n = (int)d.size();
    if (tg == "any") return memory::desc(d, t, tag::any);
    if (tg.rfind("aBx", 0) == 0 && n == 2) return md_of(d, t, "abx");  // no rank-2 blocked tag
    if (tg.rfind("aBx", 0) == 0) {
        const int blk = std::stoi(tg.substr(3, tg.size() - 4));
        static const std::map<std::pair<int, int>, tag> m = {{{3, 4}, tag::aBc4b},
                {{4, 4}, tag::aBcd4b}, {{5, 4}, tag::aBcde4b}, {{3, 8}, tag::aBc8b},
                {{4, 8}, tag::aBcd8b}, {{5, 8}, tag::aBcde8b}, {{3, 16}, tag::aBc16b},
                {{4, 16}, tag::aBcd16b}, {{5, 16}, tag::aBcde16b}, {{6, 16}, tag::aBcdef16b}};
        auto it = m.find({n, blk});
        if (it == m.end()) throw refusal("driver: no blocked tag " + tg + " for this rank");
        return memory::desc(d, t, it->second);
    }
    std::vector<int> order;  // logical dims, outermost first
    if (tg == "abx") {
        for (int i = 0; i < n; ++i) order.push_back(i);
    } else if (tg == "axb") {
        order.push_back(0);
        for (int i = 2; i < n; ++i) order.push_back(i);
        if (n > 1) order.push_back(1);
    } else {
        if ((int)tg.size() != n) throw refusal("driver: tag " + tg + " does not fit the rank");
        for (char c : tg) order.push_back(c - 'a');
    }
    memory::dims strides(n);
    memory::dim s = 1;
    for (int i = n - 1; i >= 0; --i) {
        strides[order[i]] = s;
        s *= d[order[i]] > 0 ? d[order[i]] : 1;
    }
    return memory::desc(d, t, strides);
}

std::vector<char> read_file(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("driver: cannot read " + path);
    return std::vector<char>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void write_mem(memory &m, const std::vector<char> &bytes) {
    const size_t n = m.get_desc().get_size();
    if (n == 0) return;
    void *p = m.map_data();
    std::memcpy(p, bytes.data(), std::min(n, bytes.size()));
    m.unmap_data(p);
}

// Plain (abx) user memory holding the file's bytes, reordered into md.
memory load(engine &eng, stream &st, const memory::desc &md, const memory::dims &d, dt t,
        const std::string &path) {
    memory user(memory::desc(d, t, md_of(d, t, "abx").get_strides()), eng);
    write_mem(user, read_file(path));
    if (user.get_desc() == md) return user;
    memory m(md, eng);
    reorder(user, m).execute(st, user, m);
    st.wait();
    return m;
}

void store(engine &eng, stream &st, memory &m, const memory::dims &d, dt t,
        const std::string &path) {
    memory user(md_of(d, t, "abx"), eng);
    if (m.get_desc().get_size()) {
        reorder(m, user).execute(st, m, user);
        st.wait();
    }
    std::ofstream f(path, std::ios::binary);
    const size_t n = user.get_desc().get_size();
    if (n) {
        void *p = user.map_data();
        f.write((const char *)p, (std::streamsize)n);
        user.unmap_data(p);
    }
}

algorithm eltwise_alg(const std::string &s) {
    static const std::map<std::string, algorithm> m = {{"relu", algorithm::eltwise_relu},
            {"tanh", algorithm::eltwise_tanh}, {"elu", algorithm::eltwise_elu},
            {"square", algorithm::eltwise_square}, {"abs", algorithm::eltwise_abs},
            {"sqrt", algorithm::eltwise_sqrt}, {"linear", algorithm::eltwise_linear},
            {"soft_relu", algorithm::eltwise_soft_relu},
            {"logistic", algorithm::eltwise_logistic}, {"exp", algorithm::eltwise_exp},
            {"gelu_tanh", algorithm::eltwise_gelu_tanh}, {"swish", algorithm::eltwise_swish},
            {"log", algorithm::eltwise_log}, {"clip", algorithm::eltwise_clip},
            {"clip_v2", algorithm::eltwise_clip_v2}, {"pow", algorithm::eltwise_pow},
            {"gelu_erf", algorithm::eltwise_gelu_erf}, {"round", algorithm::eltwise_round},
            {"mish", algorithm::eltwise_mish}, {"hardswish", algorithm::eltwise_hardswish},
            {"hardsigmoid", algorithm::eltwise_hardsigmoid},
            {"relu_use_dst_for_bwd", algorithm::eltwise_relu_use_dst_for_bwd},
            {"tanh_use_dst_for_bwd", algorithm::eltwise_tanh_use_dst_for_bwd},
            {"elu_use_dst_for_bwd", algorithm::eltwise_elu_use_dst_for_bwd},
            {"sqrt_use_dst_for_bwd", algorithm::eltwise_sqrt_use_dst_for_bwd},
            {"logistic_use_dst_for_bwd", algorithm::eltwise_logistic_use_dst_for_bwd},
            {"exp_use_dst_for_bwd", algorithm::eltwise_exp_use_dst_for_bwd},
            {"clip_v2_use_dst_for_bwd", algorithm::eltwise_clip_v2_use_dst_for_bwd}};
    auto it = m.find(s);
    if (it == m.end()) throw refusal("driver: unknown eltwise " + s);
    return it->second;
}

algorithm binary_alg(const std::string &s) {
    static const std::map<std::string, algorithm> m = {{"add", algorithm::binary_add},
            {"sub", algorithm::binary_sub}, {"mul", algorithm::binary_mul},
            {"div", algorithm::binary_div}, {"max", algorithm::binary_max},
            {"min", algorithm::binary_min}, {"ge", algorithm::binary_ge},
            {"gt", algorithm::binary_gt}, {"le", algorithm::binary_le},
            {"lt", algorithm::binary_lt}, {"eq", algorithm::binary_eq},
            {"ne", algorithm::binary_ne}};
    auto it = m.find(s);
    if (it == m.end()) throw refusal("driver: unknown binary " + s);
    return it->second;
}

memory scalar(engine &eng, float v) {
    memory m(memory::desc({1}, dt::f32, tag::a), eng);
    write_mem(m, std::vector<char>((const char *)&v, (const char *)&v + sizeof v));
    return m;
}

void run_case(engine &eng, stream &st, const std::map<std::string, std::string> &kv,
        const std::vector<std::string> &pos) {
    auto get = [&](const char *k) {
        auto it = kv.find(k);
        if (it == kv.end()) throw std::runtime_error(std::string("driver: missing ") + k);
        return it->second;
    };
    const std::string dir = get("dir"), alg_s = get("alg");
    const int axis = std::stoi(get("axis"));
    const dt sdt = dtype_of(get("sdt")), ddt = dtype_of(get("ddt"));
    const std::string stag = get("stag"), dtag = get("dtag");
    const bool inplace = get("inplace") == "1";
    const memory::dims d = dims_of(get("dims"));
    algorithm alg = alg_s == "LOGSOFTMAX" ? algorithm::softmax_log : algorithm::softmax_accurate;
    if (alg_s == "SOFTMAX_INF_AS_ZERO") throw refusal("driver: inf_as_zero is internal");

    primitive_attr attr;
    if (get("acc") == "relaxed") attr.set_accumulation_mode(accumulation_mode::relaxed);
    if (get("acc") == "any") attr.set_accumulation_mode(accumulation_mode::any);
    std::unordered_map<int, memory> extra;
    if (kv.count("sscale")) {
        attr.set_scales_mask(DNNL_ARG_SRC, 0);
        extra[DNNL_ARG_ATTR_SCALES | DNNL_ARG_SRC]
                = scalar(eng, std::strtof(kv.at("sscale").c_str(), nullptr));
    }
    if (kv.count("dscale")) {
        attr.set_scales_mask(DNNL_ARG_DST, 0);
        extra[DNNL_ARG_ATTR_SCALES | DNNL_ARG_DST]
                = scalar(eng, std::strtof(kv.at("dscale").c_str(), nullptr));
    }
    post_ops po;
    int npo = 0;
    std::vector<std::pair<int, memory>> src1s;
    for (auto &p : pos) {
        auto f = split(p, ':');
        if (f[0] == "elt") {
            po.append_eltwise(eltwise_alg(f[1]), std::strtof(f[2].c_str(), nullptr),
                    std::strtof(f[3].c_str(), nullptr));
        } else {
            const dt t = dtype_of(f[2]);
            const memory::dims sd = dims_of(f[3]);
            po.append_binary(binary_alg(f[1]), md_of(sd, t, "abx"));
            memory m(md_of(sd, t, "abx"), eng);
            write_mem(m, read_file(f[4]));
            src1s.emplace_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(npo) | DNNL_ARG_SRC_1, m);
        }
        ++npo;
    }
    if (npo) attr.set_post_ops(po);

    if (dir == "FWD_D" || dir == "FWD_I") {
        const auto prop = dir == "FWD_I" ? prop_kind::forward_inference
                                          : prop_kind::forward_training;
        softmax_forward::primitive_desc pd;
        try {
            pd = softmax_forward::primitive_desc(
                    eng, prop, alg, md_of(d, sdt, stag), md_of(d, ddt, dtag), axis, attr);
        } catch (error &e) {
            throw refusal(std::string("primitive_desc: ") + e.what());
        }
        memory src = load(eng, st, pd.src_desc(), d, sdt, get("in0"));
        memory dst = (inplace && pd.dst_desc() == pd.src_desc()) ? src : memory(pd.dst_desc(), eng);
        std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
        for (auto &e : extra) args.insert(e);
        for (auto &e : src1s) args.insert(e);
        softmax_forward(pd).execute(st, args);
        st.wait();
        store(eng, st, dst, d, ddt, get("out"));
    } else {
        // benchdnn's naming: sdt is diff_src's type, ddt that of dst and diff_dst
        const std::string dst_tag = dtag == "any" ? stag : dtag;
        auto dst_md = md_of(d, ddt, dst_tag);
        softmax_forward::primitive_desc hint;
        softmax_backward::primitive_desc pd;
        try {
            hint = softmax_forward::primitive_desc(
                    eng, prop_kind::forward_training, alg, dst_md, dst_md, axis);
            pd = softmax_backward::primitive_desc(eng, alg, md_of(d, sdt, "any"),
                    md_of(d, ddt, "any"), dst_md, axis, hint, attr);
        } catch (error &e) {
            throw refusal(std::string("primitive_desc: ") + e.what());
        }
        memory dst = load(eng, st, pd.dst_desc(), d, ddt, get("in0"));
        memory ddst = load(eng, st, pd.diff_dst_desc(), d, ddt, get("in1"));
        memory dsrc = (inplace && pd.diff_src_desc() == pd.diff_dst_desc())
                ? ddst
                : memory(pd.diff_src_desc(), eng);
        softmax_backward(pd).execute(st,
                {{DNNL_ARG_DST, dst}, {DNNL_ARG_DIFF_DST, ddst}, {DNNL_ARG_DIFF_SRC, dsrc}});
        st.wait();
        store(eng, st, dsrc, d, sdt, get("out"));
    }
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s MANIFEST\n", argv[0]);
        return 2;
    }
    engine eng(engine::kind::cpu, 0);
    stream st(eng);
    std::ifstream in(argv[1]);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        std::map<std::string, std::string> kv;
        std::vector<std::string> pos;
        std::istringstream is(line);
        std::string tok;
        while (is >> tok) {
            const auto eq = tok.find('=');
            if (eq == std::string::npos) continue;
            const std::string k = tok.substr(0, eq), v = tok.substr(eq + 1);
            if (k == "po")
                pos.push_back(v);
            else
                kv[k] = v;
        }
        const std::string id = kv.count("id") ? kv["id"] : "?";
        try {
            run_case(eng, st, kv, pos);
            std::printf("ok %s\n", id.c_str());
        } catch (refusal &e) {
            std::printf("refused %s %s\n", id.c_str(), e.what());
        } catch (std::exception &e) {
            std::printf("refused %s %s\n", id.c_str(), e.what());
        }
        std::fflush(stdout);
    }
    return 0;
}
