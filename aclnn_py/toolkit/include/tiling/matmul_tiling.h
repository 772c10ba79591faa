/*
 * tiling/matmul_tiling.h: the host side of the Ascend C matmul library's tiling, as op_host
 * tiling functions of matmul operators call it (matmul_tiling::MatmulApiTiling,
 * MultiCoreMatmulTiling, TCubeTiling), written for aclnn-py (docs/custom_ops.md). aclnn-py
 * compiles these functions but does not run them; GetTiling fills the shapes it was given.
 */
#ifndef ACLNN_PY_TILING_MATMUL_TILING_H_
#define ACLNN_PY_TILING_MATMUL_TILING_H_

#include <cstdint>
#include <cstring>

#include "kernel_tiling/kernel_tiling.h"
#include "register/tilingdata_base.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
/* the matmul tiling as a tiling data class (TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, x)) */
BEGIN_TILING_DATA_DEF(TCubeTiling)
#define ACLNN_PY_CUBE_FIELD(name) TILING_DATA_FIELD_DEF(int32_t, name)
    ACLNN_PY_TCUBE_TILING_FIELDS(ACLNN_PY_CUBE_FIELD)
#undef ACLNN_PY_CUBE_FIELD
public:
    void AclnnPySet(const char *name, int32_t v)
    {
#define ACLNN_PY_CUBE_SET(field) \
        if (std::strcmp(name, #field) == 0) { \
            set_##field(v); \
            return; \
        }
        ACLNN_PY_TCUBE_TILING_FIELDS(ACLNN_PY_CUBE_SET)
#undef ACLNN_PY_CUBE_SET
    }
END_TILING_DATA_DEF;
}  // namespace optiling

namespace matmul_tiling {
enum class TPosition {
    GM = 0,
    A1,
    A2,
    B1,
    B2,
    C1,
    C2,
    CO1,
    CO2,
    VECIN,
    VECOUT,
    VECCALC,
    LCM = VECCALC,
    SPM,
    SHM = SPM,
    TSCM,
    MAX
};

enum class CubeFormat { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR };

/* the values of ge::DataType */
enum class DataType {
    DT_FLOAT = 0,
    DT_FLOAT16 = 1,
    DT_INT8 = 2,
    DT_INT32 = 3,
    DT_UINT8 = 4,
    DT_INT16 = 6,
    DT_UINT16 = 7,
    DT_UINT32 = 8,
    DT_INT64 = 9,
    DT_UINT64 = 10,
    DT_DOUBLE = 11,
    DT_BOOL = 12,
    DT_STRING = 13,
    DT_BF16 = 27,
    DT_INT4 = 29,
    DT_HIFLOAT8 = 34,
    DT_FLOAT8_E5M2 = 35,
    DT_FLOAT8_E4M3FN = 36,
    DT_MAX
};

enum class MatrixTraverse { NOSET = 0, FIRSTM = 1, FIRSTN = 2 };
enum class MatrixMadType { NORMAL = 0, HF32 = 1 };
enum class DequantType { SCALAR = 0, TENSOR = 1 };
enum class ScheduleType { INNER_PRODUCT = 0, OUTER_PRODUCT = 1 };

class MatmulApiTiling {
public:
    MatmulApiTiling() = default;
    explicit MatmulApiTiling(const platform_ascendc::PlatformAscendC &) {}
    virtual ~MatmulApiTiling() = default;
    int32_t SetAType(TPosition, CubeFormat, DataType, bool transpose = false)
    {
        trans_a_ = transpose;
        return 0;
    }
    int32_t SetBType(TPosition, CubeFormat, DataType, bool transpose = false)
    {
        trans_b_ = transpose;
        return 0;
    }
    int32_t SetCType(TPosition, CubeFormat, DataType) { return 0; }
    int32_t SetBiasType(TPosition, CubeFormat, DataType) { return 0; }
    int32_t SetDequantType(DequantType) { return 0; }
    int32_t SetShape(int32_t m, int32_t n, int32_t k)
    {
        m_ = m;
        n_ = n;
        ka_ = kb_ = k;
        return 0;
    }
    int32_t SetOrgShape(int32_t m, int32_t n, int32_t k) { return SetOrgShape(m, n, k, k); }
    int32_t SetOrgShape(int32_t m, int32_t n, int32_t ka, int32_t kb)
    {
        org_m_ = m;
        org_n_ = n;
        org_ka_ = ka;
        org_kb_ = kb;
        return 0;
    }
    int32_t SetBias(bool bias = false)
    {
        bias_ = bias;
        return 0;
    }
    int32_t EnableBias(bool bias = false) { return SetBias(bias); }
    int32_t SetBufferSpace(int32_t = -1, int32_t = -1, int32_t = -1, int32_t = -1) { return 0; }
    int32_t SetFixSplit(int32_t base_m = -1, int32_t base_n = -1, int32_t base_k = -1)
    {
        base_m_ = base_m;
        base_n_ = base_n;
        base_k_ = base_k;
        return 0;
    }
    int32_t SetTraverse(MatrixTraverse) { return 0; }
    int32_t SetMadType(MatrixMadType) { return 0; }
    int32_t SetSplitRange(int32_t = -1, int32_t = -1, int32_t = -1, int32_t = -1,
                          int32_t = -1, int32_t = -1)
    {
        return 0;
    }
    int32_t SetDoubleBuffer(bool, bool, bool, bool, bool = true, bool = true) { return 0; }
    void SetMatmulConfigParams(int32_t = 1, bool = false, ScheduleType = ScheduleType::INNER_PRODUCT,
                               MatrixTraverse = MatrixTraverse::NOSET, bool = false) {}
    int64_t GetTiling(optiling::TCubeTiling &tiling)
    {
        Fill([&tiling](const char *name, int32_t v) { tiling.AclnnPySet(name, v); });
        return 0;
    }
    int64_t GetTiling(AscendC::tiling::TCubeTiling &tiling)
    {
        Fill([&tiling](const char *name, int32_t v) { AscendC::tiling::SetField(tiling, name, v); });
        return 0;
    }
    int32_t GetBaseM() const { return Pick(base_m_, m_); }
    int32_t GetBaseN() const { return Pick(base_n_, n_); }
    int32_t GetBaseK() const { return Pick(base_k_, ka_); }

protected:
    static int32_t Pick(int32_t a, int32_t b) { return a > 0 ? a : b; }
    template <typename F>
    void Fill(F set) const
    {
        set("usedCoreNum", used_cores_);
        set("M", Pick(org_m_, m_));
        set("N", Pick(org_n_, n_));
        set("Ka", Pick(org_ka_, ka_));
        set("Kb", Pick(org_kb_, kb_));
        set("singleCoreM", Pick(single_m_, m_));
        set("singleCoreN", Pick(single_n_, n_));
        set("singleCoreK", Pick(single_k_, ka_));
        set("baseM", GetBaseM());
        set("baseN", GetBaseN());
        set("baseK", GetBaseK());
        set("isBias", bias_ ? 1 : 0);
    }
    int32_t m_ = 0, n_ = 0, ka_ = 0, kb_ = 0;
    int32_t org_m_ = -1, org_n_ = -1, org_ka_ = -1, org_kb_ = -1;
    int32_t single_m_ = -1, single_n_ = -1, single_k_ = -1;
    int32_t base_m_ = -1, base_n_ = -1, base_k_ = -1;
    int32_t used_cores_ = 1;
    bool bias_ = false, trans_a_ = false, trans_b_ = false;
};

class MultiCoreMatmulTiling : public MatmulApiTiling {
public:
    MultiCoreMatmulTiling() = default;
    explicit MultiCoreMatmulTiling(const platform_ascendc::PlatformAscendC &p)
        : MatmulApiTiling(p) {}
    int32_t SetDim(int32_t dim)
    {
        used_cores_ = dim > 0 ? dim : 1;
        return 0;
    }
    int32_t SetSingleShape(int32_t m = -1, int32_t n = -1, int32_t k = -1)
    {
        single_m_ = m;
        single_n_ = n;
        single_k_ = k;
        return 0;
    }
    int32_t SetSingleRange(int32_t = -1, int32_t = -1, int32_t = -1, int32_t = -1,
                           int32_t = -1, int32_t = -1)
    {
        return 0;
    }
    int32_t SetAlignSplit(int32_t, int32_t, int32_t) { return 0; }
    void EnableMultiCoreSplitK(bool) {}
    int32_t GetSingleShape(int32_t &m, int32_t &n, int32_t &k) const
    {
        m = Pick(single_m_, m_);
        n = Pick(single_n_, n_);
        k = Pick(single_k_, ka_);
        return 0;
    }
    int32_t GetCoreNum(int32_t &dim, int32_t &m_dim, int32_t &n_dim) const
    {
        dim = used_cores_;
        m_dim = used_cores_;
        n_dim = 1;
        return 0;
    }
};

class BatchMatmulTiling : public MultiCoreMatmulTiling {
public:
    using MultiCoreMatmulTiling::MultiCoreMatmulTiling;
    int32_t SetBatchInfoForNormal(int32_t, int32_t, int32_t, int32_t, int32_t) { return 0; }
    int32_t SetBatchNum(int32_t) { return 0; }
};
}  // namespace matmul_tiling

#endif  // ACLNN_PY_TILING_MATMUL_TILING_H_
