/*
 * register/tilingdata_base.h: CANN's tiling data classes (BEGIN_TILING_DATA_DEF,
 * TILING_DATA_FIELD_DEF, TILING_DATA_FIELD_DEF_ARR, TILING_DATA_FIELD_DEF_STRUCT,
 * END_TILING_DATA_DEF, REGISTER_TILING_DATA_CLASS), written for aclnn-py (docs/custom_ops.md).
 * A class has set_<field>() / get_<field>() and the fields themselves; SaveToBuffer() packs
 * them in declaration order with each field at its natural alignment, as the kernel's C struct
 * of the same fields lays them out.
 */
#ifndef ACLNN_PY_REGISTER_TILINGDATA_BASE_H_
#define ACLNN_PY_REGISTER_TILINGDATA_BASE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "graph/ge_error_codes.h"
#include "graph/types.h"

namespace optiling {
class TilingDef;

namespace detail {
struct TilingField {
    size_t offset;          // from the TilingDef base of the object
    size_t size;            // bytes (0 for a nested tiling class)
    size_t align;
    ptrdiff_t nested;       // the nested class's TilingDef base, from ours (-1: plain field)
};

class TilingFieldReg {
public:
    TilingFieldReg() = default;
    TilingFieldReg(TilingDef *owner, const void *field, size_t size, size_t align);
    TilingFieldReg(TilingDef *owner, TilingDef *nested);
};
}  // namespace detail

class TilingDef {
public:
    TilingDef() = default;
    TilingDef(const TilingDef &) = default;
    TilingDef &operator=(const TilingDef &) = default;
    virtual ~TilingDef() = default;

    size_t GetDataSize() const
    {
        size_t end = 0;
        for (const auto &f : fields_)
            end = Align(end, FieldAlign(f)) + FieldSize(f);
        return Align(end, GetAlign());
    }
    void SaveToBuffer(void *data, size_t capacity) const
    {
        if (data == nullptr || capacity < GetDataSize())
            return;
        std::memset(data, 0, GetDataSize());
        Pack(static_cast<unsigned char *>(data));
    }
    void SetDataPtr(void *) {}
    const uint8_t *GetDataPtr() const { return nullptr; }
    size_t GetAlign() const
    {
        size_t a = 1;
        for (const auto &f : fields_)
            a = FieldAlign(f) > a ? FieldAlign(f) : a;
        return a;
    }

private:
    friend class detail::TilingFieldReg;
    static size_t Align(size_t n, size_t a) { return a ? (n + a - 1) / a * a : n; }
    const TilingDef *Nested(const detail::TilingField &f) const
    {
        return reinterpret_cast<const TilingDef *>(reinterpret_cast<const char *>(this) +
                                                   f.nested);
    }
    size_t FieldSize(const detail::TilingField &f) const
    {
        return f.nested >= 0 ? Nested(f)->GetDataSize() : f.size;
    }
    size_t FieldAlign(const detail::TilingField &f) const
    {
        return f.nested >= 0 ? Nested(f)->GetAlign() : f.align;
    }
    void Pack(unsigned char *out) const
    {
        size_t at = 0;
        for (const auto &f : fields_) {
            at = Align(at, FieldAlign(f));
            if (f.nested >= 0)
                Nested(f)->Pack(out + at);
            else
                std::memcpy(out + at, reinterpret_cast<const char *>(this) + f.offset, f.size);
            at += FieldSize(f);
        }
    }
    std::vector<detail::TilingField> fields_;
};

namespace detail {
inline TilingFieldReg::TilingFieldReg(TilingDef *owner, const void *field, size_t size,
                                      size_t align)
{
    size_t offset = static_cast<size_t>(static_cast<const char *>(field) -
                                        reinterpret_cast<const char *>(owner));
    owner->fields_.push_back(TilingField{offset, size, align, -1});
}

inline TilingFieldReg::TilingFieldReg(TilingDef *owner, TilingDef *nested)
{
    ptrdiff_t at = reinterpret_cast<const char *>(nested) - reinterpret_cast<const char *>(owner);
    owner->fields_.push_back(TilingField{static_cast<size_t>(at), 0, 1, at});
}

struct TilingClassReg {
    TilingClassReg(const char *op_type, const char *class_name)
        : op_type(op_type), class_name(class_name) {}
    const char *op_type;
    const char *class_name;
};
}  // namespace detail
}  // namespace optiling

#define BEGIN_TILING_DATA_DEF(class_name) \
    class class_name : public ::optiling::TilingDef { \
    public:

#define TILING_DATA_FIELD_DEF(data_type, field_name) \
    public: \
    data_type field_name{}; \
    void set_##field_name(data_type value) { field_name = value; } \
    data_type get_##field_name() const { return field_name; } \
    private: \
    ::optiling::detail::TilingFieldReg field_name##_aclnn_py_reg_{ \
        this, &field_name, sizeof(data_type), alignof(data_type)}; \
    public:

#define TILING_DATA_FIELD_DEF_ARR(data_type, count, field_name) \
    public: \
    data_type field_name[count] = {}; \
    void set_##field_name(const data_type *values) \
    { \
        std::memcpy(field_name, values, sizeof(data_type) * (count)); \
    } \
    data_type *get_##field_name() { return field_name; } \
    private: \
    ::optiling::detail::TilingFieldReg field_name##_aclnn_py_reg_{ \
        this, field_name, sizeof(data_type) * (count), alignof(data_type)}; \
    public:

#define TILING_DATA_FIELD_DEF_STRUCT(struct_type, field_name) \
    public: \
    struct_type field_name; \
    private: \
    ::optiling::detail::TilingFieldReg field_name##_aclnn_py_reg_{this, &field_name}; \
    public:

#define END_TILING_DATA_DEF };

#define REGISTER_TILING_DATA_CLASS(op_type, class_name) \
    static const ::optiling::detail::TilingClassReg \
        g_aclnn_py_tiling_##op_type##_##class_name __attribute__((unused))(#op_type, \
                                                                            #class_name);

#endif  // ACLNN_PY_REGISTER_TILINGDATA_BASE_H_
