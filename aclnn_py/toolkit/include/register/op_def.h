/*
 * register/op_def.h: the operator definition builder of CANN's op_host sources (OpDef and its
 * Input / Output / Attr / AICore / MC2 parts), written for aclnn-py (docs/custom_ops.md,
 * "From an op_host source"). The builder records what a definition declares; `aclnn-py opgen`
 * compiles the source against these headers, runs the OP_ADD constructors and reads the
 * record as msOpGen's JSON.
 */
#ifndef ACLNN_PY_REGISTER_OP_DEF_H_
#define ACLNN_PY_REGISTER_OP_DEF_H_

#include <cstdint>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/ascend_string.h"
#include "graph/operator.h"
#include "graph/types.h"
#include "register/op_impl_registry.h"

namespace optiling {
using OP_CHECK_FUNC = ge::graphStatus (*)(const ge::Operator &op, ge::AscendString &result);
using PARAM_GENERALIZE_FUNC = ge::graphStatus (*)(const ge::Operator &op,
                                                   const ge::AscendString &generalize_config,
                                                   ge::AscendString &generalized_op_params);
}  // namespace optiling

namespace ops {
enum Option { IGNORE = 0, OPTIONAL = 1, REQUIRED = 2, DYNAMIC = 3, VIRTUAL = 4 };

enum class FormatCheckOption : uint32_t { DEFAULT = 0, STRICT = 1, MAX };
enum class DependScope : uint32_t { ALL = 0, TILING = 1, INVALID_SCOPE };
enum class FollowType : uint32_t { ALL = 0, DTYPE = 1, FORMAT = 2, SHAPE = 3, INVALID_TYPE };
enum class AttrDataType {
    ATTR_DT_BOOL = 0,
    ATTR_DT_FLOAT = 1,
    ATTR_DT_INT = 2,
    ATTR_DT_STR = 3,
    ATTR_DT_LIST_BOOL = 4,
    ATTR_DT_LIST_FLOAT = 5,
    ATTR_DT_LIST_INT = 6,
    ATTR_DT_LIST_LIST_INT = 7,
    ATTR_DT_MAX
};
enum class CommentSection : uint32_t {
    CATEGORY = 0,
    BRIEF = 1,
    CONSTRAINTS = 2,
    RESTRICTIONS = 3,
    SEE = 4,
    THIRDPARTYFWKCOMPAT = 5,
    SECTION_MAX
};
enum class ScalarType : uint32_t {
    UINT64 = 0,
    INT64 = 1,
    UINT32 = 2,
    INT32 = 3,
    UINT16 = 4,
    INT16 = 5,
    UINT8 = 6,
    INT8 = 7,
    FLOAT32 = 8,
    FLOAT16 = 9,
    INVALID_DTYPE = static_cast<uint32_t>(-1)
};
enum class HcclServerType : uint32_t { AICPU = 0, AICORE = 1, CCU = 2, MAX };
enum class ItemFindStatus { ITEM_FIND = 0, ITEM_NOEXIST = 1 };

struct ScalarVar {
    ScalarType scalar_type = ScalarType::INVALID_DTYPE;
    double value = 0;
    ScalarVar() = default;
    ScalarVar(ScalarType t, uint64_t v) : scalar_type(t), value(static_cast<double>(v)) {}
    ScalarVar(ScalarType t, int64_t v) : scalar_type(t), value(static_cast<double>(v)) {}
    ScalarVar(ScalarType t, int v) : scalar_type(t), value(v) {}
    ScalarVar(ScalarType t, unsigned int v) : scalar_type(t), value(v) {}
    ScalarVar(ScalarType t, float v) : scalar_type(t), value(v) {}
    ScalarVar(ScalarType t, double v) : scalar_type(t), value(v) {}
};

namespace detail {
struct Access;  // the reader's view of the record (aclnn-py's op_host driver)

/* how a parameter's data types or formats were given */
enum ListMode { UNSET = 0, EXPLICIT = 1, LIST = 2 };

/* what a parameter of the aclnn API is: a tensor (or tensor list), an aclScalar or an
   aclScalarList */
enum ScalarMode { TENSOR = 0, SCALAR = 1, SCALAR_LIST = 2 };
}  // namespace detail

class OpParamDef {
public:
    explicit OpParamDef(const char *name) : name_(name ? name : "") {}
    OpParamDef &ParamType(Option t)
    {
        param_type_ = t;
        return *this;
    }
    OpParamDef &DataType(std::vector<ge::DataType> types)
    {
        types_ = std::move(types);
        types_mode_ = detail::EXPLICIT;
        return *this;
    }
    OpParamDef &DataTypeList(std::vector<ge::DataType> types)
    {
        types_ = std::move(types);
        types_mode_ = detail::LIST;
        return *this;
    }
    OpParamDef &Format(std::vector<ge::Format> formats)
    {
        formats_ = std::move(formats);
        formats_mode_ = detail::EXPLICIT;
        return *this;
    }
    OpParamDef &FormatList(std::vector<ge::Format> formats)
    {
        formats_ = std::move(formats);
        formats_mode_ = detail::LIST;
        return *this;
    }
    OpParamDef &DataTypeForBinQuery(std::vector<ge::DataType>) { return *this; }
    OpParamDef &FormatForBinQuery(std::vector<ge::Format>) { return *this; }
    OpParamDef &UnknownShapeFormat(std::vector<ge::Format> formats)
    {
        if (formats_mode_ == detail::UNSET) {  // CANN: the formats when Format() was not called
            formats_ = std::move(formats);
            formats_mode_ = detail::EXPLICIT;
        }
        return *this;
    }
    OpParamDef &ValueDepend(Option) { return *this; }
    OpParamDef &ValueDepend(Option, DependScope) { return *this; }
    OpParamDef &IgnoreContiguous(void) { return *this; }
    OpParamDef &AutoContiguous() { return *this; }
    /* an aclScalar / aclScalarList parameter of the aclnn API instead of a tensor */
    OpParamDef &Scalar()
    {
        scalar_ = detail::SCALAR;
        return *this;
    }
    OpParamDef &ScalarList()
    {
        scalar_ = detail::SCALAR_LIST;
        return *this;
    }
    OpParamDef &To(const ge::DataType) { return *this; }
    OpParamDef &To(const char *) { return *this; }
    OpParamDef &Version(uint32_t) { return *this; }
    OpParamDef &InitValue(uint64_t) { return *this; }
    OpParamDef &InitValue(const ScalarVar &) { return *this; }
    OpParamDef &InitValue(const std::vector<ScalarVar> &) { return *this; }
    OpParamDef &OutputShapeDependOnCompute() { return *this; }
    OpParamDef &Follow(const char *name) { return Follow(name, FollowType::ALL); }
    OpParamDef &Follow(const char *name, FollowType t)
    {
        follow_ = name ? name : "";
        follow_type_ = t;
        return *this;
    }
    OpParamDef &Comment(const char *) { return *this; }
    OpParamDef &NeedCompile(bool) { return *this; }
    OpParamDef &ReshapeType(const char *) { return *this; }

private:
    friend struct detail::Access;
    std::string name_;
    Option param_type_ = REQUIRED;
    std::vector<ge::DataType> types_;
    std::vector<ge::Format> formats_;
    detail::ListMode types_mode_ = detail::UNSET;
    detail::ListMode formats_mode_ = detail::UNSET;
    std::string follow_;
    FollowType follow_type_ = FollowType::INVALID_TYPE;
    detail::ScalarMode scalar_ = detail::TENSOR;
};

class OpAttrDef {
public:
    explicit OpAttrDef(const char *name) : name_(name ? name : "") {}
    OpAttrDef &AttrType(Option t)
    {
        required_ = t != OPTIONAL;
        return *this;
    }
    OpAttrDef &Bool(void) { return Type(AttrDataType::ATTR_DT_BOOL); }
    OpAttrDef &Bool(bool v)
    {
        b_ = v;
        return Type(AttrDataType::ATTR_DT_BOOL);
    }
    OpAttrDef &Float(void) { return Type(AttrDataType::ATTR_DT_FLOAT); }
    OpAttrDef &Float(float v)
    {
        f_ = v;
        return Type(AttrDataType::ATTR_DT_FLOAT);
    }
    OpAttrDef &Int(void) { return Type(AttrDataType::ATTR_DT_INT); }
    OpAttrDef &Int(int64_t v)
    {
        i_ = v;
        return Type(AttrDataType::ATTR_DT_INT);
    }
    OpAttrDef &String(void) { return Type(AttrDataType::ATTR_DT_STR); }
    OpAttrDef &String(const char *v)
    {
        s_ = v ? v : "";
        return Type(AttrDataType::ATTR_DT_STR);
    }
    OpAttrDef &ListBool(void) { return Type(AttrDataType::ATTR_DT_LIST_BOOL); }
    OpAttrDef &ListBool(std::vector<bool> v)
    {
        lb_ = std::move(v);
        return Type(AttrDataType::ATTR_DT_LIST_BOOL);
    }
    OpAttrDef &ListFloat(void) { return Type(AttrDataType::ATTR_DT_LIST_FLOAT); }
    OpAttrDef &ListFloat(std::vector<float> v)
    {
        lf_ = std::move(v);
        return Type(AttrDataType::ATTR_DT_LIST_FLOAT);
    }
    OpAttrDef &ListInt(void) { return Type(AttrDataType::ATTR_DT_LIST_INT); }
    OpAttrDef &ListInt(std::vector<int64_t> v)
    {
        li_ = std::move(v);
        return Type(AttrDataType::ATTR_DT_LIST_INT);
    }
    OpAttrDef &ListListInt(void) { return Type(AttrDataType::ATTR_DT_LIST_LIST_INT); }
    OpAttrDef &ListListInt(std::vector<std::vector<int64_t>> v)
    {
        lli_ = std::move(v);
        return Type(AttrDataType::ATTR_DT_LIST_LIST_INT);
    }
    OpAttrDef &Version(uint32_t) { return *this; }
    OpAttrDef &Comment(const char *) { return *this; }
    ge::AscendString &GetName(void) const
    {
        name_ascend_ = ge::AscendString(name_.c_str());
        return name_ascend_;
    }
    bool IsRequired(void) { return required_; }

private:
    friend struct detail::Access;
    OpAttrDef &Type(AttrDataType t)
    {
        type_ = t;
        return *this;
    }
    std::string name_;
    mutable ge::AscendString name_ascend_;
    bool required_ = true;  // CANN's default
    AttrDataType type_ = AttrDataType::ATTR_DT_BOOL;
    bool b_ = false;
    float f_ = 0;
    int64_t i_ = 0;
    std::string s_;
    std::vector<bool> lb_;
    std::vector<float> lf_;
    std::vector<int64_t> li_;
    std::vector<std::vector<int64_t>> lli_;
};

/* inputs and outputs, looked up by name (a second Input("x") returns the first) */
class OpParamTrunk {
public:
    OpParamDef &Input(const char *name) { return Get(inputs_, name); }
    OpParamDef &Output(const char *name) { return Get(outputs_, name); }

private:
    friend struct detail::Access;
    static OpParamDef &Get(std::deque<std::pair<std::string, OpParamDef>> &params,
                           const char *name)
    {
        std::string key = name ? name : "";
        for (auto &p : params)
            if (p.first == key)
                return p.second;
        params.emplace_back(key, OpParamDef(key.c_str()));
        return params.back().second;
    }
    std::deque<std::pair<std::string, OpParamDef>> inputs_;
    std::deque<std::pair<std::string, OpParamDef>> outputs_;
};

class OpAICoreConfig {
public:
    OpAICoreConfig() = default;
    explicit OpAICoreConfig(const char *) {}
    OpParamDef &Input(const char *name) { return params_.Input(name); }
    OpParamDef &Output(const char *name) { return params_.Output(name); }
    OpAICoreConfig &DynamicCompileStaticFlag(bool) { return *this; }
    OpAICoreConfig &DynamicFormatFlag(bool) { return *this; }
    OpAICoreConfig &DynamicRankSupportFlag(bool) { return *this; }
    OpAICoreConfig &DynamicShapeSupportFlag(bool) { return *this; }
    OpAICoreConfig &NeedCheckSupportFlag(bool) { return *this; }
    OpAICoreConfig &PrecisionReduceFlag(bool) { return *this; }
    OpAICoreConfig &AsyncFlag(bool) { return *this; }
    OpAICoreConfig &RangeLimitValue(const char *) { return *this; }
    OpAICoreConfig &ExtendCfgInfo(const char *, const char *) { return *this; }

private:
    friend struct detail::Access;
    OpParamTrunk params_;
};

class OpAICoreDef {
public:
    OpAICoreDef &SetTiling(gert::OpImplRegisterV2::TilingKernelFunc f)
    {
        tiling_ = f;
        return *this;
    }
    OpAICoreDef &SetTilingParse(gert::OpImplRegisterV2::TilingParseFunc) { return *this; }
    /* check-support and format-selection functions: CANN's samples declare them returning
       ge::graphStatus or int32_t; both are taken (aclnn-py never calls them) */
    template <typename F>
    OpAICoreDef &SetCheckSupport(F) { return *this; }
    template <typename F>
    OpAICoreDef &SetOpSelectFormat(F) { return *this; }
    template <typename F>
    OpAICoreDef &SetOpSupportInfo(F) { return *this; }
    template <typename F>
    OpAICoreDef &SetOpSpecInfo(F) { return *this; }
    template <typename F>
    OpAICoreDef &SetParamGeneralize(F) { return *this; }
    OpAICoreDef &LaunchWithZeroEleOutputTensors(bool) { return *this; }
    OpAICoreDef &AddConfig(const char *soc)
    {
        configs_.emplace_back(soc ? soc : "", OpAICoreConfig());
        return *this;
    }
    OpAICoreDef &AddConfig(const char *soc, OpAICoreConfig &config)
    {
        configs_.emplace_back(soc ? soc : "", config);
        return *this;
    }
    gert::OpImplRegisterV2::TilingKernelFunc &GetTiling(void) { return tiling_; }

private:
    friend struct detail::Access;
    gert::OpImplRegisterV2::TilingKernelFunc tiling_ = nullptr;
    std::vector<std::pair<std::string, OpAICoreConfig>> configs_;
};

class OpCfgDef {  // AICPU() and HostCPU(): configuration only
public:
    OpCfgDef &Engine(const char *) { return *this; }
    OpCfgDef &FlagPartial(bool) { return *this; }
    OpCfgDef &ComputeCost(const char *) { return *this; }
    OpCfgDef &FlagAsync(bool) { return *this; }
    OpCfgDef &OpKernelLib(const char *) { return *this; }
    OpCfgDef &KernelSo(const char *) { return *this; }
    OpCfgDef &FunctionName(const char *) { return *this; }
    OpCfgDef &UserDefined(bool) { return *this; }
    OpCfgDef &ExtendCfgInfo(const char *, const char *) { return *this; }
};
using OpAICPUDef = OpCfgDef;
using OpHostCPUDef = OpCfgDef;

class OpMC2Def {
public:
    OpMC2Def &HcclGroup(const char *) { return *this; }
    OpMC2Def &HcclGroup(std::vector<const char *>) { return *this; }
    void HcclServerType(enum HcclServerType, const char * = nullptr) {}
};

class OpDef {
public:
    explicit OpDef(const char *type) : type_(type ? type : "") {}
    virtual ~OpDef() = default;
    OpParamDef &Input(const char *name) { return params_.Input(name); }
    OpParamDef &Output(const char *name) { return params_.Output(name); }
    OpAttrDef &Attr(const char *name)
    {
        std::string key = name ? name : "";
        for (auto &a : attrs_)
            if (a.first == key)
                return a.second;
        attrs_.emplace_back(key, OpAttrDef(key.c_str()));
        return attrs_.back().second;
    }
    OpDef &Comment(CommentSection, const char *) { return *this; }
    OpDef &SetInferShape(gert::OpImplRegisterV2::InferShapeKernelFunc f)
    {
        infer_shape_ = f;
        return *this;
    }
    OpDef &SetInferShapeRange(gert::OpImplRegisterV2::InferShapeRangeKernelFunc f)
    {
        infer_shape_range_ = f;
        return *this;
    }
    OpDef &SetInferDataType(gert::OpImplRegisterV2::InferDataTypeKernelFunc f)
    {
        infer_data_type_ = f;
        return *this;
    }
    gert::OpImplRegisterV2::InferShapeKernelFunc &GetInferShape(void) { return infer_shape_; }
    gert::OpImplRegisterV2::InferShapeRangeKernelFunc &GetInferShapeRange(void)
    {
        return infer_shape_range_;
    }
    gert::OpImplRegisterV2::InferDataTypeKernelFunc &GetInferDataType(void)
    {
        return infer_data_type_;
    }
    OpAICoreDef &AICore(void) { return aicore_; }
    OpAICPUDef &AICPU(void) { return aicpu_; }
    OpHostCPUDef &HostCPU(void) { return hostcpu_; }
    OpMC2Def &MC2(void) { return mc2_; }
    OpDef &FormatMatchMode(FormatCheckOption) { return *this; }
    OpDef &EnableFallBack(void) { return *this; }

private:
    friend struct detail::Access;
    std::string type_;
    OpParamTrunk params_;
    std::deque<std::pair<std::string, OpAttrDef>> attrs_;
    OpAICoreDef aicore_;
    OpAICPUDef aicpu_;
    OpHostCPUDef hostcpu_;
    OpMC2Def mc2_;
    gert::OpImplRegisterV2::InferShapeKernelFunc infer_shape_ = nullptr;
    gert::OpImplRegisterV2::InferShapeRangeKernelFunc infer_shape_range_ = nullptr;
    gert::OpImplRegisterV2::InferDataTypeKernelFunc infer_data_type_ = nullptr;
};
}  // namespace ops

#endif  // ACLNN_PY_REGISTER_OP_DEF_H_
