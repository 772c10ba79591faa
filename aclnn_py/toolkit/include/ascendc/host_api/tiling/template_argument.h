/*
 * ascendc/host_api/tiling/template_argument.h: the host side of Ascend C's tiling-key templates
 * (ASCENDC_TPL_ARGS_DECL, ASCENDC_TPL_SEL, GET_TPL_TILING_KEY), written for aclnn-py
 * (docs/custom_ops.md, "From an op_host source"). The declaration lists the template
 * parameters in order; GET_TPL_TILING_KEY(values...) packs one value per parameter into a
 * 64-bit tiling key, the first parameter in the lowest bits: a data type, format or bool value
 * as it is (8, 8 and 1 bits), an unsigned parameter as the index of its value among the values
 * declared for it (ranges expanded, in declaration order; as many bits as declared). A value
 * not declared, or more than 64 bits in all, gives ASCENDC_TPL_INVALID_KEY (all ones). The
 * selections (ASCENDC_TPL_SEL) choose which kernels CANN compiles; aclnn-py's kernels are
 * NumPy, and ignores them.
 */
#ifndef ACLNN_PY_ASCENDC_HOST_API_TILING_TEMPLATE_ARGUMENT_H_
#define ACLNN_PY_ASCENDC_HOST_API_TILING_TEMPLATE_ARGUMENT_H_

#include <cstdint>
#include <initializer_list>
#include <vector>

/* bit widths */
#define ASCENDC_TPL_1_BW 1
#define ASCENDC_TPL_2_BW 2
#define ASCENDC_TPL_4_BW 4
#define ASCENDC_TPL_8_BW 8
/* parameter kinds */
#define ASCENDC_TPL_DTYPE 0
#define ASCENDC_TPL_FORMAT 1
#define ASCENDC_TPL_UINT 2
#define ASCENDC_TPL_BOOL 3
/* how an unsigned parameter's values are given: ranges, a list, or ranges then a list */
#define ASCENDC_TPL_UI_RANGE 0
#define ASCENDC_TPL_UI_LIST 1
#define ASCENDC_TPL_UI_MIX 2
/* kernel types */
#define ASCENDC_TPL_AIV_ONLY 0
#define ASCENDC_TPL_AIC_ONLY 1
#define ASCENDC_TPL_MIX_AIV_1_0 4
#define ASCENDC_TPL_MIX_AIC_1_0 5
#define ASCENDC_TPL_MIX_AIC_1_1 6
#define ASCENDC_TPL_MIX_AIC_1_2 7
#define ASCENDC_TPL_AICORE 8
#define ASCENDC_TPL_VECTORCORE 9
#define ASCENDC_TPL_MIX_AICORE 10
#define ASCENDC_TPL_MIX_VECTOR_CORE 11

#define ASCENDC_TPL_INVALID_KEY 0xFFFFFFFFFFFFFFFFULL

namespace AscendC {
namespace tpl {
struct Param {
    const char *name;
    int kind;
    unsigned bits;
    std::vector<uint64_t> values;  // an unsigned parameter's values (ranges expanded)

    Param(const char *n, int k, unsigned b, std::initializer_list<uint64_t> given)
        : name(n), kind(k), bits(b)
    {
        if (k != ASCENDC_TPL_UINT)
            return;
        std::vector<uint64_t> v(given);
        if (v.empty())
            return;
        uint64_t how = v[0];
        if (how == ASCENDC_TPL_UI_LIST) {
            values.assign(v.begin() + 1, v.end());
            return;
        }
        size_t ranges = v.size() > 1 ? static_cast<size_t>(v[1]) : 0;
        size_t at = 2;
        for (size_t r = 0; r < ranges && at + 1 < v.size(); r++, at += 2)
            for (uint64_t x = v[at]; x <= v[at + 1]; x++)
                values.push_back(x);
        if (how == ASCENDC_TPL_UI_MIX)
            for (; at < v.size(); at++)
                values.push_back(v[at]);
    }
};

inline uint64_t Key(const std::vector<Param> &params, std::initializer_list<uint64_t> args)
{
    uint64_t key = 0;
    unsigned shift = 0;
    auto arg = args.begin();
    for (size_t i = 0; i < params.size() && arg != args.end(); i++, ++arg) {
        const Param &p = params[i];
        uint64_t v = *arg;
        if (p.kind == ASCENDC_TPL_UINT) {
            size_t j = 0;
            while (j < p.values.size() && p.values[j] != v)
                j++;
            if (j == p.values.size())
                return ASCENDC_TPL_INVALID_KEY;
            v = j;
        }
        if (p.bits < 64 && v >> p.bits)
            return ASCENDC_TPL_INVALID_KEY;
        if (shift + p.bits > 64)
            return ASCENDC_TPL_INVALID_KEY;
        key |= v << shift;
        shift += p.bits;
    }
    return key;
}
}  // namespace tpl
}  // namespace AscendC

#define ASCENDC_TPL_DTYPE_DECL(x, ...) \
    ::AscendC::tpl::Param(#x, ASCENDC_TPL_DTYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__})
#define ASCENDC_TPL_DATATYPE_DECL ASCENDC_TPL_DTYPE_DECL
#define ASCENDC_TPL_FORMAT_DECL(x, ...) \
    ::AscendC::tpl::Param(#x, ASCENDC_TPL_FORMAT, ASCENDC_TPL_8_BW, {__VA_ARGS__})
#define ASCENDC_TPL_UINT_DECL(x, bw, ...) \
    ::AscendC::tpl::Param(#x, ASCENDC_TPL_UINT, bw, {__VA_ARGS__})
#define ASCENDC_TPL_BOOL_DECL(x, ...) \
    ::AscendC::tpl::Param(#x, ASCENDC_TPL_BOOL, ASCENDC_TPL_1_BW, {__VA_ARGS__})
#define ASCENDC_TPL_ARGS_DECL(x, ...) \
    static const std::vector<::AscendC::tpl::Param> g_aclnn_py_tpl_params{__VA_ARGS__}

#define ASCENDC_TPL_DTYPE_SEL(...)
#define ASCENDC_TPL_DATATYPE_SEL(...)
#define ASCENDC_TPL_FORMAT_SEL(...)
#define ASCENDC_TPL_UINT_SEL(...)
#define ASCENDC_TPL_BOOL_SEL(...)
#define ASCENDC_TPL_TILING_STRUCT_SEL(...)
#define ASCENDC_TPL_KERNEL_TYPE_SEL(...)
#define ASCENDC_TPL_DETERMINISTIC_SEL(...)
#define ASCENDC_TPL_ARGS_SEL(...)
#define ASCENDC_TPL_SEL(...)

#define GET_TPL_TILING_KEY(...) ::AscendC::tpl::Key(g_aclnn_py_tpl_params, {__VA_ARGS__})
#define ASCENDC_TPL_SEL_PARAM(context, ...) \
    do { \
        (context)->SetTilingKey(GET_TPL_TILING_KEY(__VA_ARGS__)); \
    } while (0)

#endif  // ACLNN_PY_ASCENDC_HOST_API_TILING_TEMPLATE_ARGUMENT_H_
