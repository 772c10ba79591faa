/*
 * graph/utils/type_utils.h: names of ge::DataType and ge::Format, as op_host code prints them,
 * and the size of one element of a data type (aclnn-py).
 */
#ifndef ACLNN_PY_GRAPH_UTILS_TYPE_UTILS_H_
#define ACLNN_PY_GRAPH_UTILS_TYPE_UTILS_H_

#include <string>

#include "graph/types.h"

namespace ge {
class TypeUtils {
public:
    static std::string DataTypeToSerialString(DataType dt)
    {
        static const char *const names[] = {
            "DT_FLOAT", "DT_FLOAT16", "DT_INT8", "DT_INT32", "DT_UINT8", "", "DT_INT16",
            "DT_UINT16", "DT_UINT32", "DT_INT64", "DT_UINT64", "DT_DOUBLE", "DT_BOOL",
            "DT_STRING", "DT_DUAL_SUB_INT8", "DT_DUAL_SUB_UINT8", "DT_COMPLEX64",
            "DT_COMPLEX128", "DT_QINT8", "DT_QINT16", "DT_QINT32", "DT_QUINT8", "DT_QUINT16",
            "DT_RESOURCE", "DT_STRING_REF", "DT_DUAL", "DT_VARIANT", "DT_BF16", "DT_UNDEFINED",
            "DT_INT4", "DT_UINT1", "DT_INT2", "DT_UINT2", "DT_COMPLEX32", "DT_HIFLOAT8",
            "DT_FLOAT8_E5M2", "DT_FLOAT8_E4M3FN", "DT_FLOAT8_E8M0", "DT_FLOAT6_E3M2",
            "DT_FLOAT6_E2M3", "DT_FLOAT4_E2M1", "DT_FLOAT4_E1M2"};
        int i = static_cast<int>(dt);
        if (i < 0 || i >= static_cast<int>(sizeof names / sizeof names[0]) || !*names[i])
            return "UNDEFINED";
        return names[i];
    }
    static AscendString DataTypeToAscendString(DataType dt)
    {
        return AscendString(DataTypeToSerialString(dt).c_str());
    }
    static std::string FormatToSerialString(Format f)
    {
        switch (f) {
        case FORMAT_NCHW: return "NCHW";
        case FORMAT_NHWC: return "NHWC";
        case FORMAT_ND: return "ND";
        case FORMAT_NC1HWC0: return "NC1HWC0";
        case FORMAT_FRACTAL_Z: return "FRACTAL_Z";
        case FORMAT_NC1HWC0_C04: return "NC1HWC0_C04";
        case FORMAT_FRACTAL_Z_C04: return "FRACTAL_Z_C04";
        case FORMAT_HWCN: return "HWCN";
        case FORMAT_NDHWC: return "NDHWC";
        case FORMAT_FRACTAL_NZ: return "FRACTAL_NZ";
        case FORMAT_NCDHW: return "NCDHW";
        case FORMAT_DHWCN: return "DHWCN";
        case FORMAT_NDC1HWC0: return "NDC1HWC0";
        case FORMAT_FRACTAL_Z_3D: return "FRACTAL_Z_3D";
        case FORMAT_CN: return "CN";
        case FORMAT_NC: return "NC";
        case FORMAT_NCL: return "NCL";
        default: return "RESERVED";
        }
    }
    static AscendString FormatToAscendString(Format f)
    {
        return AscendString(FormatToSerialString(f).c_str());
    }
    /* the bytes of one element of dt; false (length unchanged) for a type without a whole
       number of bytes per element (the sub-byte types) or no size (strings, unknown values) */
    static bool GetDataTypeLength(DataType dt, uint32_t &length)
    {
        int size = GetSizeByDataType(dt);
        if (size <= 0)
            return false;
        length = static_cast<uint32_t>(size);
        return true;
    }
};
}  // namespace ge

#endif  // ACLNN_PY_GRAPH_UTILS_TYPE_UTILS_H_
