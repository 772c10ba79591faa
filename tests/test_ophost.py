"""Operator definitions from CANN op_host C++ sources (docs/custom_ops.md, "From an op_host
source"): `aclnn-py opgen op_host/<op>.cpp` compiles the source with the toolkit's op_host
headers and reads what each OP_ADD definition declares. The sources here are our own, written
in the two styles CANN projects use: msOpGen's op_host/<op>.cpp (tiling function, shape and
data type inference and the definition in one file, with <op>_tiling.h) and cann-ops'
op_host/<op>_def.cpp (the definition alone). Each definition read is compared with the msOpGen
JSON written by hand for the same operator; the end-to-end result with a NumPy float64
computation."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from aclnn_py import acl, aclnn, custom
from aclnn_py.custom import CustomOpError
from aclnn_py.toolkit import ophost

CXX = shutil.which("g++") or shutil.which("c++")

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the toolkit is Linux-only"),
    pytest.mark.skipif(CXX is None, reason="no C++ compiler on PATH"),
]


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def parsed(definition) -> list:
    return custom.parse(json.loads(json.dumps(definition)))


def cli(*args, env=None, timeout=300):
    full = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "aclnn_py", *map(str, args)], env=full,
                          cwd=tempfile.gettempdir(), capture_output=True, text=True,
                          timeout=timeout)


# ----------------------------------------------------- msOpGen's op_host/<op>.cpp style ---

LEAKY_TILING_H = """
#ifndef LEAKY_RELU_CUSTOM_TILING_H
#define LEAKY_RELU_CUSTOM_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(LeakyReluCustomTilingData)
  TILING_DATA_FIELD_DEF(uint32_t, totalLength);
  TILING_DATA_FIELD_DEF(uint32_t, tileNum);
  TILING_DATA_FIELD_DEF(float, negativeSlope);
  TILING_DATA_FIELD_DEF_ARR(uint16_t, 4, tileSizes);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(LeakyReluCustom, LeakyReluCustomTilingData)
}  // namespace optiling
#endif
"""

LEAKY_CPP = """
#include "leaky_relu_custom_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
const uint32_t TILE_NUM = 8;
static ge::graphStatus TilingFunc(gert::TilingContext *context)
{
    LeakyReluCustomTilingData tiling;
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t cores = platform.GetCoreNumAiv();
    uint64_t ub = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    uint32_t total = context->GetInputShape(0)->GetOriginShape().GetShapeSize();
    const gert::RuntimeAttrs *attrs = context->GetAttrs();
    const float *slope = attrs->GetAttrPointer<float>(0);
    ge::DataType dtype = context->GetInputDesc(0)->GetDataType();
    context->SetBlockDim(cores);
    context->SetTilingKey(dtype == ge::DT_FLOAT16 ? 1 : 2);
    tiling.set_totalLength(total);
    tiling.set_tileNum(TILE_NUM);
    tiling.set_negativeSlope(*slope);
    uint16_t sizes[4] = {1, 2, 3, static_cast<uint16_t>(ub / 1024)};
    tiling.set_tileSizes(sizes);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(),
                        context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t *workspace = context->GetWorkspaceSizes(1);
    workspace[0] = platform.GetLibApiWorkSpaceSize();
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
static graphStatus InferShape(gert::InferShapeContext *context)
{
    const gert::Shape *x = context->GetInputShape(0);
    gert::Shape *y = context->GetOutputShape(0);
    *y = *x;
    return GRAPH_SUCCESS;
}

static graphStatus InferDataType(gert::InferDataTypeContext *context)
{
    context->SetOutputDataType(0, context->GetInputDataType(0));
    return ge::GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class LeakyReluCustom : public OpDef {
public:
    explicit LeakyReluCustom(const char *name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("negative_slope").AttrType(OPTIONAL).Float(0.01);

        this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);
        this->AICore().SetTiling(optiling::TilingFunc);

        OpAICoreConfig config;
        config.DynamicCompileStaticFlag(true)
            .DynamicFormatFlag(true)
            .DynamicRankSupportFlag(true)
            .DynamicShapeSupportFlag(true)
            .NeedCheckSupportFlag(false)
            .PrecisionReduceFlag(true);
        this->AICore().AddConfig("ascend910b", config);
        this->AICore().AddConfig("ascend310p");
    }
};

OP_ADD(LeakyReluCustom);
}  // namespace ops
"""

LEAKY_JSON = [{
    "op": "LeakyReluCustom", "language": "cpp",
    "input_desc": [{"name": "x", "param_type": "required", "format": ["ND", "ND"],
                    "type": ["fp16", "float"]}],
    "output_desc": [{"name": "y", "param_type": "required", "format": ["ND", "ND"],
                     "type": ["fp16", "float"]}],
    "attr": [{"name": "negative_slope", "param_type": "optional", "type": "float",
              "default_value": "0.01"}]}]


@pytest.fixture(scope="module")
def leaky(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("leaky") / "op_host"
    write(folder, "leaky_relu_custom_tiling.h", LEAKY_TILING_H)
    return write(folder, "leaky_relu_custom.cpp", LEAKY_CPP)


def test_msopgen_source_reads_as_the_hand_written_json(leaky):
    ops = ophost.read(leaky)
    assert [o["op"] for o in ops] == ["LeakyReluCustom"]
    assert parsed(ops) == parsed(LEAKY_JSON)
    (op,) = ops
    assert op["input_desc"] == LEAKY_JSON[0]["input_desc"]
    assert op["output_desc"] == LEAKY_JSON[0]["output_desc"]
    assert op["attr"][0]["default_value"] == pytest.approx(0.01)


# ----------------------------------------------------------- cann-ops' <op>_def.cpp style --

MIX_DEF = """
#include <cstdint>
#include "register/op_def_registry.h"

namespace ops {
namespace inner {
static const std::vector<ge::DataType> kTypes = {ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16};
static const std::vector<ge::Format> kFormats = {ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND};
}  // namespace inner

class MixCustom : public OpDef {
public:
    explicit MixCustom(const char *name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType(inner::kTypes)
            .Format(inner::kFormats)
            .UnknownShapeFormat(inner::kFormats)
            .AutoContiguous();
        this->Input("bias")
            .ParamType(OPTIONAL)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT})
            .Format(inner::kFormats)
            .ValueDepend(OPTIONAL)
            .IgnoreContiguous();
        this->Input("extras")
            .ParamType(DYNAMIC)
            .DataType({ge::DT_INT32, ge::DT_INT64, ge::DT_INT8})
            .Format({ge::FORMAT_NCHW, ge::FORMAT_NHWC, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType(inner::kTypes)
            .Format(inner::kFormats)
            .AutoContiguous();
        this->Output("count_out")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT64, ge::DT_BOOL, ge::DT_UINT8})
            .Format(inner::kFormats);
        this->Attr("axis").AttrType(OPTIONAL).Int(-1);
        this->Attr("scale").AttrType(OPTIONAL).Float(1.5);
        this->Attr("keep").AttrType(OPTIONAL).Bool(true);
        this->Attr("mode").AttrType(OPTIONAL).String("sum");
        this->Attr("dims").AttrType(OPTIONAL).ListInt({1, -2, 3});
        this->Attr("weights").AttrType(OPTIONAL).ListFloat({0.5, 0.25});
        this->Attr("mask").AttrType(OPTIONAL).ListBool({true, false});
        this->Attr("dtype").AttrType(OPTIONAL).Int(ge::DT_INT8);
        this->Attr("count").AttrType(REQUIRED).Int();
        this->Attr("pads").ListInt();

        OpAICoreConfig config310p;
        config310p.Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16})
            .Format({ge::FORMAT_ND});
        config310p.DynamicCompileStaticFlag(true).ExtendCfgInfo("opFile.value", "mix_custom");
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
        this->AICore().AddConfig("ascend310p", config310p);
    }
};

OP_ADD(MixCustom, optiling::MixCompileInfo);
}  // namespace ops
"""

MIX_JSON = [{
    "op": "MixCustom", "language": "cpp",
    "input_desc": [
        {"name": "x", "param_type": "required", "format": ["ND", "ND", "ND"],
         "type": ["fp16", "float", "bf16"]},
        {"name": "bias", "param_type": "optional", "format": ["ND", "ND", "ND"],
         "type": ["float", "float", "float"]},
        {"name": "extras", "param_type": "dynamic", "format": ["NCHW", "NHWC", "ND"],
         "type": ["int32", "int64", "int8"]}],
    "output_desc": [
        {"name": "y", "param_type": "required", "format": ["ND", "ND", "ND"],
         "type": ["fp16", "float", "bf16"]},
        {"name": "count_out", "param_type": "required", "format": ["ND", "ND", "ND"],
         "type": ["int64", "bool", "uint8"]}],
    "attr": [
        {"name": "axis", "param_type": "optional", "type": "int", "default_value": "-1"},
        {"name": "scale", "param_type": "optional", "type": "float", "default_value": "1.5"},
        {"name": "keep", "param_type": "optional", "type": "bool", "default_value": "true"},
        {"name": "mode", "param_type": "optional", "type": "str", "default_value": "sum"},
        {"name": "dims", "param_type": "optional", "type": "listInt",
         "default_value": "[1, -2, 3]"},
        {"name": "weights", "param_type": "optional", "type": "listFloat",
         "default_value": "[0.5, 0.25]"},
        {"name": "mask", "param_type": "optional", "type": "listBool",
         "default_value": "[true, false]"},
        {"name": "dtype", "param_type": "optional", "type": "int", "default_value": "2"},
        {"name": "count", "param_type": "required", "type": "int"},
        {"name": "pads", "param_type": "required", "type": "listInt"}]}]


def test_cann_ops_def_file_every_param_and_attribute_kind(tmp_path):
    src = write(tmp_path / "op_host", "mix_custom_def.cpp", MIX_DEF)
    ops = ophost.read(src)
    assert parsed(ops) == parsed(MIX_JSON)
    # the 310P config's own "x" is not the emulator's (an ascend910b)
    assert ops[0]["input_desc"] == MIX_JSON[0]["input_desc"]
    assert ops[0]["output_desc"] == MIX_JSON[0]["output_desc"]
    assert [(a["name"], a["param_type"], a["type"]) for a in ops[0]["attr"]] == \
        [(a["name"], a["param_type"], a["type"]) for a in MIX_JSON[0]["attr"]]
    assert "default_value" not in ops[0]["attr"][-1]  # required: no default


def test_lists_follow_default_format_and_the_ascend910b_config(tmp_path):
    src = write(tmp_path, "lists_def.cpp", """
        #include "register/op_def_registry.h"
        namespace ops {
        class ListsCustom : public OpDef {
        public:
            explicit ListsCustom(const char *name) : OpDef(name)
            {
                Input("a").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
                    .FormatList({ge::FORMAT_ND});
                Input("idx").ParamType(REQUIRED).DataTypeList({ge::DT_INT32, ge::DT_INT64})
                    .FormatList({ge::FORMAT_ND});
                Input("w").ParamType(REQUIRED).DataTypeList({ge::DT_BF16});
                Output("out").ParamType(REQUIRED).Follow("a");
                Output("pos").ParamType(REQUIRED).Follow("idx", FollowType::DTYPE)
                    .FormatList({ge::FORMAT_NCHW});
                AICore().AddConfig("ascend910b");
            }
        };
        OP_ADD(ListsCustom);

        class ConfigOnly : public OpDef {
        public:
            explicit ConfigOnly(const char *name) : OpDef(name)
            {
                OpAICoreConfig c;
                c.Input("x").ParamType(REQUIRED).DataType({ge::DT_INT16}).Format({ge::FORMAT_ND});
                c.Output("y").ParamType(REQUIRED).DataType({ge::DT_INT16})
                    .Format({ge::FORMAT_ND});
                OpAICoreConfig d;
                d.Input("x").ParamType(REQUIRED).DataType({ge::DT_UINT16})
                    .Format({ge::FORMAT_ND});
                d.Output("y").ParamType(REQUIRED).DataType({ge::DT_UINT16})
                    .Format({ge::FORMAT_ND});
                this->AICore().AddConfig("ascend310p", c).AddConfig("ascend910b", d);
            }
        };
        OP_ADD(ConfigOnly);
        }
        """)
    lists, config_only = ophost.read(src)
    # 2 explicit combinations x 2 idx types x 1 w type = 4, in that nesting
    expected = {
        "a": (["fp16", "fp16", "float", "float"], ["ND"] * 4),
        "idx": (["int32", "int64", "int32", "int64"], ["ND"] * 4),
        "w": (["bf16"] * 4, ["ND"] * 4),
        "out": (["fp16", "fp16", "float", "float"], ["ND"] * 4),
        "pos": (["int32", "int64", "int32", "int64"], ["NCHW"] * 4),
    }
    got = {p["name"]: (p["type"], p["format"])
           for p in lists["input_desc"] + lists["output_desc"]}
    assert got == expected
    assert config_only["input_desc"] == [{"name": "x", "param_type": "required",
                                          "format": ["ND"], "type": ["uint16"]}]


def test_several_operators_per_file_and_per_directory(tmp_path):
    folder = tmp_path / "op_host"
    write(folder, "add_custom_tiling.h", """
        #include "register/tilingdata_base.h"
        #include "register/op_def_registry.h"
        namespace optiling {
        BEGIN_TILING_DATA_DEF(AddTiling)
          TILING_DATA_FIELD_DEF(uint32_t, totalLength);
        END_TILING_DATA_DEF;
        REGISTER_TILING_DATA_CLASS(AddCustom, AddTiling)
        ge::graphStatus AddTilingFunc(gert::TilingContext *context);
        }
        """)
    write(folder, "add_custom.cpp", """
        #include "add_custom_tiling.h"
        namespace ops {
        class AddCustom : public OpDef {
        public:
            explicit AddCustom(const char *name) : OpDef(name)
            {
                this->Input("x").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
                this->Input("y").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
                this->Output("z").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
                this->AICore().SetTiling(optiling::AddTilingFunc).AddConfig("ascend910b");
            }
        };
        OP_ADD(AddCustom);
        }
        """)
    write(folder, "add_custom_tiling.cpp", """
        #include "add_custom_tiling.h"
        #include "platform/platform_info.h"
        #include "register/op_impl_registry.h"
        #include "tiling/platform/platform_ascendc.h"
        namespace optiling {
        struct AddCompileInfo {
            uint32_t cores;
        };
        ge::graphStatus AddTilingFunc(gert::TilingContext *context)
        {
            AddTiling tiling;
            tiling.set_totalLength(context->GetInputTensor(0)->GetShapeSize());
            context->SetBlockDim(platform_ascendc::PlatformAscendCManager::GetInstance()
                                     ->GetCoreNumAiv());
            uint64_t ub = 0;
            context->GetPlatformInfo()->GetLocalMemSize(fe::LocalMemType::UB, ub);
            auto format = static_cast<ge::Format>(
                GetPrimaryFormat(context->GetInputDesc(0)->GetStorageFormat()));
            auto info = reinterpret_cast<const AddCompileInfo *>(context->GetCompileInfo());
            return format == ge::FORMAT_ND && info->cores ? ge::GRAPH_SUCCESS : ge::GRAPH_FAILED;
        }
        static ge::graphStatus AddTilingParse(gert::TilingParseContext *context)
        {
            auto info = context->GetCompiledInfo<AddCompileInfo>();
            info->cores = 1;
            return ge::GRAPH_SUCCESS;
        }
        static ge::graphStatus AddInferShape(gert::InferShapeContext *context)
        {
            *context->GetOutputShape(0) = *context->GetInputShape(0);
            return ge::GRAPH_SUCCESS;
        }
        IMPL_OP_OPTILING(AddCustom).Tiling(AddTilingFunc).TilingParse<AddCompileInfo>(
            AddTilingParse);
        IMPL_OP_INFERSHAPE(AddCustom).InferShape(AddInferShape);
        }
        """)
    write(folder, "sub_mul_custom.cc", """
        #include "register/op_def_registry.h"
        namespace ops {
        class SubCustom : public OpDef {
        public:
            explicit SubCustom(const char *name) : OpDef(name)
            {
                this->Input("a").DataType({ge::DT_INT32}).Format({ge::FORMAT_ND});
                this->Input("b").DataType({ge::DT_INT32}).Format({ge::FORMAT_ND});
                this->Output("c").DataType({ge::DT_INT32}).Format({ge::FORMAT_ND});
            }
        };
        OP_ADD(SubCustom);
        namespace math {
        class MulCustom : public OpDef {
        public:
            explicit MulCustom(const char *name) : OpDef(name)
            {
                this->Input("a").DataType({ge::DT_DOUBLE});
                this->Output("c").DataType({ge::DT_DOUBLE});
            }
        };
        OP_ADD(MulCustom);
        }  // namespace math
        }  // namespace ops
        """)
    # neither an OP_ADD file nor a *_tiling one: not compiled (it would not compile)
    write(folder, "add_custom_proto.cpp", '#include "graph/no_such_header.h"\n')
    write(folder, "README.md", "not C++\n")
    assert [p.name for p in ophost.sources(folder)] == \
        ["add_custom.cpp", "sub_mul_custom.cc", "add_custom_tiling.cpp"]
    ops = ophost.read(folder)
    assert [o["op"] for o in ops] == ["AddCustom", "SubCustom", "MulCustom"]
    assert ops[2] == {"op": "MulCustom", "language": "cpp",
                      "input_desc": [{"name": "a", "param_type": "required",
                                      "format": ["ND"], "type": ["double"]}],
                      "output_desc": [{"name": "c", "param_type": "required",
                                       "format": ["ND"], "type": ["double"]}]}
    # one file alone: its tiling function is declared, defined in the other file, not called
    assert [o["op"] for o in ophost.read(folder / "add_custom.cpp")] == ["AddCustom"]


def test_tiling_data_packs_as_the_kernels_c_struct(tmp_path):
    """SaveToBuffer lays the fields out as a C struct of the same fields (what the kernel
    reads); GetDataSize is its sizeof."""
    src = write(tmp_path, "pack.cpp", """
        #include <cstdio>
        #include <cstring>
        #include "register/tilingdata_base.h"
        namespace optiling {
        BEGIN_TILING_DATA_DEF(Inner)
          TILING_DATA_FIELD_DEF(uint8_t, flag);
          TILING_DATA_FIELD_DEF(int64_t, big);
        END_TILING_DATA_DEF;
        BEGIN_TILING_DATA_DEF(Outer)
          TILING_DATA_FIELD_DEF(uint8_t, a);
          TILING_DATA_FIELD_DEF(uint32_t, b);
          TILING_DATA_FIELD_DEF_ARR(uint16_t, 3, c);
          TILING_DATA_FIELD_DEF(double, d);
          TILING_DATA_FIELD_DEF_STRUCT(Inner, inner);
          TILING_DATA_FIELD_DEF(uint16_t, e);
        END_TILING_DATA_DEF;
        }
        struct InnerC { uint8_t flag; int64_t big; };
        struct OuterC { uint8_t a; uint32_t b; uint16_t c[3]; double d; InnerC inner;
                        uint16_t e; };
        int main() {
            optiling::Outer t;
            t.set_a(7); t.set_b(0x01020304u); uint16_t c[3] = {5, 6, 7}; t.set_c(c);
            t.set_d(2.5); t.inner.set_flag(1); t.inner.set_big(-3); t.set_e(9);
            optiling::Outer copy = t;
            OuterC s; std::memset(&s, 0, sizeof s);
            s.a = 7; s.b = 0x01020304u; s.c[0] = 5; s.c[1] = 6; s.c[2] = 7; s.d = 2.5;
            s.inner.flag = 1; s.inner.big = -3; s.e = 9;
            unsigned char buf[256];
            copy.SaveToBuffer(buf, sizeof buf);
            std::printf("%zu %zu %d\\n", copy.GetDataSize(), sizeof s,
                        std::memcmp(buf, &s, sizeof s));
            return 0;
        }
        """)
    exe = tmp_path / "pack"
    inc = Path(ophost.__file__).parent / "include"
    subprocess.run([CXX, "-std=c++17", f"-I{inc}", str(src), "-o", str(exe)], check=True,
                   timeout=300)
    size, c_size, differ = subprocess.run([str(exe)], capture_output=True, text=True,
                                          timeout=60, check=True).stdout.split()
    assert size == c_size and differ == "0"


def test_matmul_tiling_sources_compile_in_both_forms(tmp_path):
    """Matmul operators' tiling functions call the Ascend C matmul tiling API, with the cube
    tiling as a tiling data struct field or as the kernel's AscendC::tiling::TCubeTiling; tiling
    headers may leave out the semicolons after the field macros."""
    folder = tmp_path / "op_host"
    write(folder, "mm_custom_tiling.h", """
        #include "register/tilingdata_base.h"
        #include "tiling/tiling_api.h"
        namespace optiling {
        BEGIN_TILING_DATA_DEF(MmCustomTilingData)
          TILING_DATA_FIELD_DEF(uint64_t, localMemSize)
          TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, cubeTilingData)
        END_TILING_DATA_DEF
        REGISTER_TILING_DATA_CLASS(MmCustom, MmCustomTilingData)
        }
        """)
    write(folder, "mm_custom.cpp", """
        #include "mm_custom_tiling.h"
        #include "kernel_tiling/kernel_tiling.h"
        #include "register/op_def_registry.h"
        using namespace matmul_tiling;
        struct KernelSideTiling {
            AscendC::tiling::TCubeTiling cube;
        };
        namespace optiling {
        static ge::graphStatus TilingFunc(gert::TilingContext *context)
        {
            auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
            auto a = context->GetInputTensor(0)->GetOriginShape();
            auto b = context->GetInputTensor(1)->GetOriginShape();
            MultiCoreMatmulTiling api(platform);
            api.SetDim(platform.GetCoreNumAiv());
            api.SetAType(TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
            api.SetBType(TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
            api.SetCType(TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
            api.SetBiasType(TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
            api.SetShape(a.GetDim(0), b.GetDim(1), a.GetDim(1));
            api.SetOrgShape(a.GetDim(0), b.GetDim(1), a.GetDim(1));
            api.SetSingleShape(512, 640, -1);
            api.SetFixSplit(128, 128, -1);
            api.SetTraverse(MatrixTraverse::FIRSTM);
            api.SetBias(true);
            api.SetBufferSpace(-1, -1, -1);
            MmCustomTilingData tiling;
            if (api.GetTiling(tiling.cubeTilingData) == -1)
                return ge::GRAPH_FAILED;
            KernelSideTiling *kernel = context->GetTilingData<KernelSideTiling>();
            if (api.GetTiling(kernel->cube) == -1)
                return ge::GRAPH_FAILED;
            tiling.SaveToBuffer(context->GetRawTilingData()->GetData(),
                                context->GetRawTilingData()->GetCapacity());
            context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
            context->SetBlockDim(platform.GetCoreNumAic());
            return ge::GRAPH_SUCCESS;
        }
        }
        namespace ops {
        class MmCustom : public OpDef {
        public:
            explicit MmCustom(const char *name) : OpDef(name)
            {
                this->Input("a").ParamType(REQUIRED).DataType({ge::DT_FLOAT16})
                    .Format({ge::FORMAT_ND});
                this->Input("b").ParamType(REQUIRED).DataType({ge::DT_FLOAT16})
                    .Format({ge::FORMAT_ND});
                this->Input("bias").ParamType(REQUIRED).DataType({ge::DT_FLOAT})
                    .Format({ge::FORMAT_ND});
                this->Output("c").ParamType(REQUIRED).DataType({ge::DT_FLOAT})
                    .Format({ge::FORMAT_ND});
                this->AICore().SetTiling(optiling::TilingFunc).AddConfig("ascend910b");
            }
        };
        OP_ADD(MmCustom);
        }
        """)
    (op,) = ophost.read(folder)
    assert op["op"] == "MmCustom"
    assert [(p["name"], p["type"]) for p in op["input_desc"] + op["output_desc"]] == \
        [("a", ["fp16"]), ("b", ["fp16"]), ("bias", ["float"]), ("c", ["float"])]


# ------------------------------ the Ascend C library's host helpers, tiling-key templates ---

HELPERS_CPP = """
#include <vector>
#include "graph/utils/type_utils.h"
#include "kernel_tiling/kernel_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/tiling_api.h"

// CANN's kernel-side structures: 16 uint32_t fields; 25 uint32_t and a float
static_assert(sizeof(AscendC::tiling::SoftMaxTiling) == 16 * 4, "SoftMaxTiling");
static_assert(sizeof(AscendC::tiling::LayerNormTiling) == 26 * 4, "LayerNormTiling");

namespace optiling {
BEGIN_TILING_DATA_DEF(HelpersTilingData)
  TILING_DATA_FIELD_DEF_ARR(uint32_t, 8, lengths);
  TILING_DATA_FIELD_DEF_ARR(uint32_t, 12, sizes);
  TILING_DATA_FIELD_DEF_STRUCT(SoftMaxTiling, softmax);
  TILING_DATA_FIELD_DEF_STRUCT(LayerNormTiling, layernorm);
END_TILING_DATA_DEF;

static ge::graphStatus TilingFunc(gert::TilingContext *context)
{
    HelpersTilingData t;
    const ge::DataType types[8] = {ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT8, ge::DT_INT64,
                                   ge::DT_BF16, ge::DT_BOOL, ge::DT_INT4, ge::DT_STRING};
    uint32_t lengths[8];
    for (int i = 0; i < 8; i++) {
        uint32_t n = 12345;
        bool ok = ge::TypeUtils::GetDataTypeLength(types[i], n);
        lengths[i] = ok ? n : 1000000 + n;
    }
    t.set_lengths(lengths);
    auto in = context->GetInputShape(0)->GetOriginShape();
    int64_t rows = in.GetDim(0), cols = in.GetDim(1);
    ge::Shape src(std::vector<int64_t>{rows, cols});
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t s[12] = {0};
    AscendC::GetBroadCastMaxMinTmpSize(platform, ge::Shape(std::vector<int64_t>{rows, 1}), src,
                                       2, false, s[0], s[1]);
    AscendC::GetBroadCastMaxMinTmpSize(platform, src, src, 2, false, s[2], s[3]);
    AscendC::GetSigmoidMaxMinTmpSize(src, 2, false, s[4], s[5]);
    AscendC::GetTanhMaxMinTmpSize(src, 4, false, s[6], s[7]);
    AscendC::GetMeanMaxMinTmpSize(static_cast<uint32_t>(cols), 2, 4, false, s[8], s[9]);
    s[10] = AscendC::GetSoftMaxMinTmpSize(src, 2, false);
    s[11] = AscendC::GetSoftMaxMaxTmpSize(src, 2, false);
    t.set_sizes(s);
    AscendC::SoftMaxTilingFunc(src, 2, s[10], t.softmax);
    ge::Shape bsh(std::vector<int64_t>{1, rows, cols});
    uint32_t lnMax = 0, lnMin = 0;
    AscendC::GetLayerNormMaxMinTmpSize(bsh, 4, false, lnMax, lnMin);
    if (lnMin == 0 || lnMin > lnMax)
        return ge::GRAPH_FAILED;
    AscendC::GetLayerNormNDTilingInfo(bsh, lnMax, 4, false, t.layernorm);
    t.SaveToBuffer(context->GetRawTilingData()->GetData(),
                   context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(t.GetDataSize());
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
class HelpersCustom : public OpDef {
public:
    explicit HelpersCustom(const char *name) : OpDef(name)
    {
        this->Input("x").DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Output("y").DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->AICore().SetTiling(optiling::TilingFunc).AddConfig("ascend910b");
    }
};
OP_ADD(HelpersCustom);
}  // namespace ops
"""


def test_type_utils_and_the_vector_librarys_tiling_helpers(tmp_path):
    """ge::TypeUtils::GetDataTypeLength gives an element's bytes (false, length untouched, for
    a sub-byte type or a string); the Ascend C library's host helpers that op_host tiling
    functions call (broadcast, sigmoid, tanh, mean and softmax temporary sizes, the softmax
    and layernorm tilings) run, with CANN's tiling structures."""
    src = write(tmp_path, "helpers_custom.cpp", HELPERS_CPP)
    (op,) = ophost.read(src)
    assert op["op"] == "HelpersCustom"
    rows, cols = 8, 64
    fp16, nd = 1, 2  # ge::DT_FLOAT16, ge::FORMAT_ND
    t = ophost.TilingProgram(src).run("HelpersCustom", [(fp16, nd, (rows, cols))],
                                      [(fp16, nd, (rows, cols))], [])
    assert len(t.data) == 8 * 4 + 12 * 4 + 16 * 4 + 26 * 4
    words = np.frombuffer(t.data, dtype="<u4")
    lengths, sizes = words[:8], words[8:20]
    softmax, layernorm = words[20:36], words[36:62]
    assert list(lengths) == [2, 4, 1, 8, 2, 1, 1012345, 1012345]
    bc_max, bc_min, same_max, same_min = sizes[:4]
    assert 0 < bc_min <= bc_max and same_max == same_min == 0  # equal shapes need none
    for lo, hi in ((sizes[5], sizes[4]), (sizes[7], sizes[6]), (sizes[9], sizes[8]),
                   (sizes[10], sizes[11])):
        assert 0 < lo <= hi and lo % 32 == 0 and hi % 32 == 0
    src_m, src_k, src_size = softmax[:3]
    split_m, split_k, range_m, tail_m = softmax[6], softmax[7], softmax[12], softmax[13]
    assert (src_m, src_k, src_size) == (rows, cols, rows * cols) and split_k == cols
    assert 1 <= split_m <= rows and split_m * range_m + tail_m == rows
    b, s, h, original_h, x_size, mean_var = layernorm[:6]
    assert (b, s, h, original_h, x_size, mean_var) == (1, rows, cols, cols, rows * cols, rows)
    assert np.frombuffer(t.data[-4:], dtype="<f4")[0] == np.float32(1 / cols)


def test_tiling_key_templates_encode_the_documented_bits(tmp_path):
    """GET_TPL_TILING_KEY of ascendc/host_api/tiling/template_argument.h: the parameters of
    ASCENDC_TPL_ARGS_DECL from the lowest bits up, a data type as its value in 8 bits, an
    unsigned parameter as the index of its value among those declared (ranges expanded) in its
    declared width, a bool in 1 bit; an undeclared value gives all ones."""
    src = write(tmp_path, "key_custom.cpp", """
        #include "register/op_def_registry.h"
        #include "ascendc/host_api/tiling/template_argument.h"
        #define KEY_FP16 10
        #define KEY_FP32 20
        ASCENDC_TPL_ARGS_DECL(KeyCustom,
            ASCENDC_TPL_DTYPE_DECL(D_T, KEY_FP16, KEY_FP32),
            ASCENDC_TPL_UINT_DECL(TILES, ASCENDC_TPL_4_BW, ASCENDC_TPL_UI_MIX, 1, 0, 2, 7, 9),
            ASCENDC_TPL_UINT_DECL(MODE, ASCENDC_TPL_2_BW, ASCENDC_TPL_UI_LIST, 5, 3),
            ASCENDC_TPL_BOOL_DECL(SPLIT, 0, 1),
        );
        ASCENDC_TPL_SEL(
            ASCENDC_TPL_ARGS_SEL(
                ASCENDC_TPL_DTYPE_SEL(D_T, KEY_FP16),
                ASCENDC_TPL_UINT_SEL(TILES, ASCENDC_TPL_UI_LIST, 1, 9),
                ASCENDC_TPL_UINT_SEL(MODE, ASCENDC_TPL_UI_LIST, 5, 3),
                ASCENDC_TPL_BOOL_SEL(SPLIT, 0, 1),
                ASCENDC_TPL_TILING_STRUCT_SEL(optiling::Nothing)
            )
        );
        namespace optiling {
        static ge::graphStatus TilingFunc(gert::TilingContext *context)
        {
            const gert::RuntimeAttrs *attrs = context->GetAttrs();
            uint32_t dt = context->GetInputDesc(0)->GetDataType() == ge::DT_FLOAT16 ? KEY_FP16
                                                                                   : KEY_FP32;
            uint32_t tiles = static_cast<uint32_t>(*attrs->GetInt(0));
            uint32_t mode = static_cast<uint32_t>(*attrs->GetInt(1));
            uint32_t split = static_cast<uint32_t>(*attrs->GetInt(2));
            ASCENDC_TPL_SEL_PARAM(context, dt, tiles, mode, split);
            return ge::GRAPH_SUCCESS;
        }
        }
        namespace ops {
        class KeyCustom : public OpDef {
        public:
            explicit KeyCustom(const char *name) : OpDef(name)
            {
                this->Input("x").DataType({ge::DT_FLOAT16, ge::DT_FLOAT});
                this->Output("y").DataType({ge::DT_FLOAT16, ge::DT_FLOAT});
                this->Attr("tiles").Int();
                this->Attr("mode").Int();
                this->Attr("split").Int();
                this->AICore().SetTiling(optiling::TilingFunc).AddConfig("ascend910b");
            }
        };
        OP_ADD(KeyCustom);
        }
        """)
    program = ophost.TilingProgram(src)
    nd = 2

    def key(dtype, tiles, mode, split):
        spec = (dtype, nd, (4,))
        return program.run("KeyCustom", [spec], [spec], [("int", tiles), ("int", mode),
                                                         ("int", split)]).tiling_key

    # TILES declares 0, 1, 2 (the range 0..2), then 7, 9: 9 is index 4; MODE 5, 3: 3 is index 1
    assert key(1, 9, 3, 1) == 10 | 4 << 8 | 1 << 12 | 1 << 14
    assert key(0, 2, 5, 0) == 20 | 2 << 8
    assert key(1, 5, 5, 0) == 2**64 - 1  # 5 is not a declared TILES value


def test_include_directories_given_and_found(tmp_path):
    """Headers of an op_host source are found in -I directories (in order), the source's own
    directory, a sibling ../op_kernel (msOpGen projects) and the nearest ancestor's
    src/common/inc (cann-ops); a header found nowhere names the directories searched."""
    def op_source(includes: str) -> str:
        return includes + """
        #include "register/op_def_registry.h"
        namespace ops {
        class IncCustom : public OpDef {
        public:
            explicit IncCustom(const char *name) : OpDef(name)
            {
                this->Input("x").DataType({INC_DTYPE});
                this->Output("y").DataType({INC_DTYPE});
            }
        };
        OP_ADD(IncCustom);
        }
        """

    def dtype_header(folder: Path, name: str, dtype: str) -> None:
        write(folder, name, f"#pragma once\n#include \"graph/types.h\"\n"
                            f"#define INC_DTYPE ge::{dtype}\n")

    def types(path, include_dirs=()):
        (op,) = ophost.read(path, include_dirs)
        return op["input_desc"][0]["type"]

    # -I: a directory of nothing else
    extra = tmp_path / "extra"
    dtype_header(extra, "inc_types.h", "DT_INT32")
    plain = write(tmp_path / "plain", "inc_custom.cpp", op_source('#include "inc_types.h"'))
    with pytest.raises(CustomOpError, match=r"inc_types\.h: No such file.*-I DIR"):
        ophost.read(plain)
    assert types(plain, [extra]) == ["int32"]
    with pytest.raises(CustomOpError, match=r"-I '.*nowhere': no such directory"):
        ophost.read(plain, [tmp_path / "nowhere"])

    # msOpGen project: op_host/x.cpp includes a header of ../op_kernel
    project = tmp_path / "IncProject"
    dtype_header(project / "op_kernel", "inc_kernel_types.h", "DT_INT64")
    msopgen = write(project / "op_host", "inc_custom.cpp",
                    op_source('#include "inc_kernel_types.h"'))
    assert types(msopgen) == ["int64"]

    # cann-ops: the nearest src/common/inc, not one further up; -I comes before it
    outer, inner = tmp_path / "ops", tmp_path / "ops" / "nested"
    dtype_header(outer / "src" / "common" / "inc" / "group", "inc_utils.h", "DT_FLOAT")
    dtype_header(inner / "src" / "common" / "inc" / "group", "inc_utils.h", "DT_INT8")
    cann_ops = write(inner / "src" / "group" / "inc_custom" / "op_host", "inc_custom.cpp",
                     op_source('#include "group/inc_utils.h"'))
    assert types(cann_ops) == ["int8"]
    dtype_header(extra / "group", "inc_utils.h", "DT_UINT8")
    assert types(cann_ops, [extra]) == ["uint8"]
    lonely = write(tmp_path / "lonely" / "op_host", "inc_custom.cpp",
                   op_source('#include "group/inc_utils.h"'))
    with pytest.raises(CustomOpError, match=r"group/inc_utils\.h: No such file"):
        ophost.read(lonely)


@pytest.mark.parametrize("builder, kind", [(".Scalar()", "aclScalar"),
                                           (".ScalarList()", "aclScalarList")])
def test_scalar_inputs_are_refused_by_name(tmp_path, builder, kind):
    """An input declared .Scalar() / .ScalarList() is an aclScalar / aclScalarList of the aclnn
    API, which an msOpGen JSON definition cannot express: refused, naming the input."""
    src = write(tmp_path, "scalar_custom.cpp", f"""
        #include "register/op_def_registry.h"
        namespace ops {{
        class ScalarCustom : public OpDef {{
        public:
            explicit ScalarCustom(const char *name) : OpDef(name)
            {{
                this->Input("x").ParamType(DYNAMIC).DataType({{ge::DT_FLOAT}});
                this->Input("alpha"){builder}.ParamType(REQUIRED).DataType({{ge::DT_FLOAT}});
                this->Output("y").ParamType(DYNAMIC).DataType({{ge::DT_FLOAT}});
            }}
        }};
        OP_ADD(ScalarCustom);
        }}
        """)
    with pytest.raises(CustomOpError, match=rf"ScalarCustom: input 'alpha' is declared an "
                                            rf"{kind} \({re.escape(builder)}\)"):
        ophost.read(src)


# ------------------------------------------------------------------------- errors ---------


def test_a_cpp_error_names_the_file_and_line(tmp_path, leaky):
    bad = write(tmp_path, "bad_custom.cpp", """
        #include "register/op_def_registry.h"
        namespace ops {
        class BadCustom : public OpDef {
        public:
            explicit BadCustom(const char *name) : OpDef(name)
            {
                this->Input("x").DataType({ge::DT_FLOAT}).NoSuchMethod();
            }
        };
        OP_ADD(BadCustom);
        }
        """)
    with pytest.raises(CustomOpError, match=rf"{bad}:7: .*NoSuchMethod"):
        ophost.read(bad)
    # an error in an included tiling header names the header
    folder = tmp_path / "hdr"
    write(folder, "h_custom_tiling.h", "#include \"register/tilingdata_base.h\"\n"
          "BEGIN_TILING_DATA_DEF(T)\n  TILING_DATA_FIELD_DEF(no_such_type, n);\n"
          "END_TILING_DATA_DEF;\n")
    src = write(folder, "h_custom.cpp", LEAKY_CPP.replace("leaky_relu_custom_tiling.h",
                                                           "h_custom_tiling.h"))
    with pytest.raises(CustomOpError, match=rf"{folder / 'h_custom_tiling.h'}:3: "):
        ophost.read(src)
    # the CLI: a message, no traceback
    kernels = write(tmp_path, "k.py", "def bad_custom(x, y):\n    y[...] = x\n")
    proc = cli("opgen", bad, "--kernels", kernels, "-o", tmp_path / "out")
    assert proc.returncode != 0
    assert f"{bad}:7:" in proc.stderr and "Traceback" not in proc.stderr
    # the same operator from an op_host source and from JSON; a source that does not exist
    definition = tmp_path / "leaky.json"
    definition.write_text(json.dumps(LEAKY_JSON))
    proc = cli("opgen", leaky, definition, "--kernels", kernels, "-o", tmp_path / "out")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "LeakyReluCustom: defined twice" in proc.stderr
    proc = cli("opgen", tmp_path / "missing.cpp", "--kernels", kernels, "-o", tmp_path / "out")
    assert proc.returncode != 0 and "no such file" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("body, message", [
    ('this->Input("x").DataType({ge::DT_INT4}); this->Output("y").DataType({ge::DT_FLOAT});',
     r":12: ErrCustom: 'x': ge::DT_INT4 is not a data type the emulator supports"),
    ('this->Input("x").DataType({ge::DT_FLOAT, ge::DT_FLOAT16});'
     'this->Output("y").DataType({ge::DT_FLOAT});',
     r"'x'.type lists 2 combinations but 'y'.type lists 1"),
    ('this->Input("x").DataType({ge::DT_FLOAT}); this->Output("y").Format({ge::FORMAT_ND});',
     r"'y' declares no data type"),
    ('this->Input("x").ParamType(VIRTUAL).DataType({ge::DT_FLOAT});'
     'this->Output("y").DataType({ge::DT_FLOAT});',
     r"ParamType\(VIRTUAL\) is not one of REQUIRED, OPTIONAL, DYNAMIC"),
    ('this->Input("x").DataType({ge::DT_FLOAT}); this->Output("y").Follow("nope");',
     r"'y' follows 'nope', which is not an input or output"),
    ('this->Input("x").DataType({ge::DT_FLOAT}); this->Output("y").DataType({ge::DT_FLOAT});'
     'this->Attr("k").AttrType(OPTIONAL).ListListInt({{1, 2}, {3}});',
     r":12: ErrCustom.attr\[0\].type: 'listListInt' is not one of"),
    ('this->Input("x").DataType({ge::DT_FLOAT}); this->Output("y").DataType({ge::DT_FLOAT});'
     'this->Attr("x").AttrType(OPTIONAL).Int(1);',
     r":12: ErrCustom.attr\[0\].name: the name 'x' is used twice"),
    ('throw std::runtime_error("no definition today");',
     r"constructing the OP_ADD definitions failed .*no definition today"),
    ("std::abort();", r"constructing the OP_ADD definitions was killed by signal 6"),
])
def test_bad_definitions_name_the_op_add(tmp_path, body, message):
    src = write(tmp_path, "err_custom.cpp", f"""
        #include <cstdlib>
        #include <stdexcept>
        #include "register/op_def_registry.h"
        namespace ops {{
        class ErrCustom : public OpDef {{
        public:
            explicit ErrCustom(const char *name) : OpDef(name)
            {{
                {body}
            }}
        }};
        OP_ADD(ErrCustom);
        }}
        """)
    with pytest.raises(CustomOpError, match=message) as info:
        ophost.read(src)
    if "constructing" not in message:
        assert str(info.value).startswith(f"{src}:12: ")


def test_a_definition_that_never_returns_times_out(tmp_path, monkeypatch):
    monkeypatch.setattr(ophost, "RUN_TIMEOUT", 2.0)
    src = write(tmp_path, "loop_custom.cpp", """
        #include "register/op_def_registry.h"
        namespace ops {
        class LoopCustom : public OpDef {
        public:
            explicit LoopCustom(const char *name) : OpDef(name)
            {
                for (volatile int i = 0;; i++) {}
            }
        };
        OP_ADD(LoopCustom);
        }
        """)
    with pytest.raises(CustomOpError, match="took more than 2 s"):
        ophost.read(src)


def test_an_operator_registered_twice_names_both_op_adds(tmp_path):
    body = """
        #include "register/op_def_registry.h"
        namespace ops {
        class TwiceCustom : public OpDef {
        public:
            explicit TwiceCustom(const char *name) : OpDef(name)
            {
                this->Input("x").DataType({ge::DT_FLOAT});
                this->Output("y").DataType({ge::DT_FLOAT});
            }
        };
        OP_ADD(TwiceCustom);
        }
        """
    a = write(tmp_path, "a_custom.cpp", body)
    b = write(tmp_path, "b_custom.cpp", body.replace("class TwiceCustom", "class TwiceCustom"))
    with pytest.raises(CustomOpError, match=rf"{b}:11: OP_ADD\(TwiceCustom\): TwiceCustom is "
                       rf"already registered at {a}:11"):
        ophost.read(tmp_path)


def test_a_source_that_exits_early_or_overwrites_the_record(tmp_path):
    clobber = ('std::atexit([] { std::FILE *f = std::fopen(path, "w"); std::fputs("{", f); '
               'std::fclose(f); })')
    for n, init in enumerate(["std::exit(0)", clobber]):
        src = write(tmp_path, f"early{n}_custom.cpp", f"""
            #include <cstdio>
            #include <cstdlib>
            #include "register/op_def_registry.h"
            static const char *path = "definitions.json";
            static int early = [] {{ {init}; return 0; }}();
            namespace ops {{
            class EarlyCustom : public OpDef {{
            public:
                explicit EarlyCustom(const char *name) : OpDef(name)
                {{
                    this->Input("x").DataType({{ge::DT_FLOAT}});
                    this->Output("y").DataType({{ge::DT_FLOAT}});
                    if (path) std::fflush(nullptr);
                }}
            }};
            OP_ADD(EarlyCustom);
            }}
            """)
        with pytest.raises(CustomOpError, match="could not be read back"):
            ophost.read(src)


def test_a_process_the_definitions_leave_behind_neither_blocks_nor_survives(tmp_path):
    pid_file = tmp_path / "child.pid"
    src = write(tmp_path, "fork_custom.cpp", f"""
        #include <cstdio>
        #include <unistd.h>
        #include "register/op_def_registry.h"
        namespace ops {{
        class ForkCustom : public OpDef {{
        public:
            explicit ForkCustom(const char *name) : OpDef(name)
            {{
                this->Input("x").DataType({{ge::DT_FLOAT}});
                this->Output("y").DataType({{ge::DT_FLOAT}});
                pid_t child = fork();
                if (child == 0) {{
                    std::printf("holding stdout\\n");
                    std::fflush(stdout);
                    sleep(600);
                    _exit(0);
                }}
                std::FILE *f = std::fopen("{pid_file}", "w");
                std::fprintf(f, "%d", static_cast<int>(child));
                std::fclose(f);
            }}
        }};
        OP_ADD(ForkCustom);
        }}
        """)
    t0 = time.monotonic()
    (op,) = ophost.read(src)
    assert op["op"] == "ForkCustom" and time.monotonic() - t0 < 30
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
        except OSError:
            break  # gone
        if state == "Z":
            break  # killed, not yet reaped by its new parent
        time.sleep(0.05)
    else:
        pytest.fail(f"the definitions' child {pid} is still running")


def test_no_op_add_and_missing_paths(tmp_path):
    src = write(tmp_path, "empty.cpp", '#include "register/op_def_registry.h"\n')
    with pytest.raises(CustomOpError, match="no OP_ADD registered an operator"):
        ophost.read(src)
    with pytest.raises(CustomOpError, match="no C\\+\\+ file .* registers an operator"):
        ophost.read(tmp_path)  # empty.cpp has no OP_ADD
    with pytest.raises(CustomOpError, match="no such file"):
        ophost.read(tmp_path / "missing.cpp")
    assert ophost.is_source(tmp_path / "a.cc") and ophost.is_source(tmp_path)
    assert not ophost.is_source(tmp_path / "a.json")


def test_string_defaults_and_names_are_data(tmp_path):
    """A string attribute's default reaches the definition as the exact bytes of the C++
    literal (hex-encoded on the way): quotes, backslashes, newlines, comment closers and
    non-ASCII text are data, never code; bytes that are not UTF-8 are refused."""
    hostile = r'*/ system(\"touch pwned\"); /* \" \\ \n\t' + "\u00e9\u4e2d"
    expected = '*/ system("touch pwned"); /* " \\ \n\t\u00e9\u4e2d'
    src = write(tmp_path, "str_custom.cpp", f"""
        #include "register/op_def_registry.h"
        namespace ops {{
        class StrCustom : public OpDef {{
        public:
            explicit StrCustom(const char *name) : OpDef(name)
            {{
                this->Input("x").DataType({{ge::DT_FLOAT}});
                this->Output("y").DataType({{ge::DT_FLOAT}});
                this->Attr("reduction").AttrType(OPTIONAL).String("{hostile}");
            }}
        }};
        OP_ADD(StrCustom);
        }}
        """)
    (op,) = ophost.read(src)
    assert op["attr"][0]["default_value"] == expected
    (desc,) = custom.parse([op])
    assert desc.attrs[0].default == expected
    assert not (tmp_path / "pwned").exists()
    bad = write(tmp_path, "bytes_custom.cpp",
                src.read_text().replace(f'String("{hostile}")', 'String("\\xff\\xfe")'))
    with pytest.raises(CustomOpError, match="not valid UTF-8"):
        ophost.read(bad)
    # an attribute name the definition check refuses is named, not compiled into anything
    weird = write(tmp_path, "name_custom.cpp",
                  src.read_text().replace('Attr("reduction")', 'Attr("a b")'))
    with pytest.raises(CustomOpError, match=r"attr\[0\]\.name: name must be an identifier"):
        ophost.read(weird)


# ---------------------------------------------------------------------- end to end --------


def test_python_end_to_end_from_the_source(leaky, dev, stream):
    def leaky_relu_custom(x, y, negative_slope):
        np.copyto(y, np.where(x >= 0, x, x * x.dtype.type(negative_slope)))

    ops = custom.load(ophost.read(leaky), {"LeakyReluCustom": leaky_relu_custom})
    try:
        rng = np.random.default_rng(5)
        a = rng.standard_normal((8, 37)).astype(np.float32)
        _, x = dev.tensor(a)
        py, y = dev.tensor(np.zeros_like(a))
        ws, ex, ret = aclnn.aclnnLeakyReluCustomGetWorkspaceSize(x, 0.2, y)
        assert ret == 0
        assert aclnn.aclnnLeakyReluCustom(0, ws, ex, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        a64 = a.astype(np.float64)
        golden = np.where(a64 >= 0, a64, a64 * np.float64(np.float32(0.2)))
        np.testing.assert_allclose(dev.download(py, a.shape, np.float32), golden, rtol=1e-6)
    finally:
        for o in ops:
            custom.unload(o.name)


# the C struct of LeakyReluCustomTilingData (uint32 totalLength, uint32 tileNum, float
# negativeSlope, uint16 tileSizes[4]), as the kernel reads it
LEAKY_TILING = np.dtype([("totalLength", "<u4"), ("tileNum", "<u4"), ("negativeSlope", "<f4"),
                         ("tileSizes", "<u2", (4,))], align=True)


def test_the_tiling_function_runs_for_each_launch(leaky, dev, stream):
    """ophost.tiled: a kernel that names tiling / block_dim / tiling_key / workspace gets what
    the source's tiling function set for the launch's tensors and attributes."""
    seen = []

    def leaky_relu_custom(x, y, negative_slope, tiling, block_dim, tiling_key, workspace):
        t = np.frombuffer(tiling, LEAKY_TILING, count=1)[0]
        seen.append((len(tiling), int(t["totalLength"]), int(t["tileNum"]),
                     t["tileSizes"].tolist(), block_dim, tiling_key, workspace))
        slope = x.dtype.type(t["negativeSlope"])  # the attribute, through the tiling data
        np.copyto(y, np.where(x >= 0, x, x * slope))

    def plain(x, y, negative_slope):
        raise AssertionError("not this one")

    assert ophost.tiled(leaky, {"LeakyReluCustom": plain})["LeakyReluCustom"] is plain
    kernels = ophost.tiled(leaky, {"LeakyReluCustom": leaky_relu_custom})
    ops = custom.load(ophost.read(leaky), kernels)
    try:
        rng = np.random.default_rng(9)
        for dtype, key in ((np.float16, 1), (np.float32, 2)):
            a = rng.standard_normal((4, 75)).astype(dtype)
            _, x = dev.tensor(a)
            py, y = dev.tensor(np.zeros_like(a))
            ws, ex, ret = aclnn.aclnnLeakyReluCustomGetWorkspaceSize(x, 0.3, y)
            assert ret == 0
            assert aclnn.aclnnLeakyReluCustom(0, ws, ex, stream) == 0
            assert acl.rt.synchronize_stream(stream) == 0
            a64 = a.astype(np.float64)
            golden = np.where(a64 >= 0, a64, a64 * np.float64(dtype(np.float32(0.3))))
            np.testing.assert_allclose(dev.download(py, a.shape, dtype).astype(np.float64),
                                       golden, rtol=2e-3 if dtype == np.float16 else 1e-6)
            # 20 bytes; 300 elements; the platform's 40 vector cores and 192 KiB of UB (the
            # Ascend910B4's figures); CANN's 16 MiB library workspace
            assert seen[-1] == (20, 300, 8, [1, 2, 3, 192], 40, key, (16 << 20,))
    finally:
        for o in ops:
            custom.unload(o.name)


def test_a_failing_tiling_function_is_the_launchs_fault(tmp_path, dev, stream):
    folder = tmp_path / "op_host"
    write(folder, "leaky_relu_custom_tiling.h", LEAKY_TILING_H)
    src = write(folder, "leaky_relu_custom.cpp", LEAKY_CPP.replace(
        "    tiling.set_negativeSlope(*slope);",
        "    if (*slope < 0)\n        return ge::GRAPH_FAILED;\n"
        "    if (*slope > 100)\n        std::abort();\n    tiling.set_negativeSlope(*slope);"))
    program = ophost.TilingProgram(src)
    spec = (ophost.GE_TYPE_NAMES.index("DT_FLOAT"), 2, (3, 4))
    assert program.run("LeakyReluCustom", [spec], [spec], [("float", 1.0)]).block_dim == 40
    with pytest.raises(CustomOpError, match="returned 0xffffffff, not ge::GRAPH_SUCCESS"):
        program.run("LeakyReluCustom", [spec], [spec], [("float", -1.0)])
    with pytest.raises(CustomOpError, match="the tiling function was killed by signal 6"):
        program.run("LeakyReluCustom", [spec], [spec], [("float", 1000.0)])
    with pytest.raises(CustomOpError, match="no OP_ADD registered Nope"):
        program.run("Nope", [spec], [spec], [])

    def leaky_relu_custom(x, y, negative_slope, tiling):
        np.copyto(y, x)

    ops = custom.load(ophost.read(src), ophost.tiled(src, {"leaky_relu_custom":
                                                           leaky_relu_custom}))
    try:
        _, x = dev.tensor(np.ones(8, np.float32))
        _, y = dev.tensor(np.zeros(8, np.float32))
        ws, ex, ret = aclnn.aclnnLeakyReluCustomGetWorkspaceSize(x, -0.5, y)
        assert aclnn.aclnnLeakyReluCustom(0, ws, ex, stream) == 0
        assert acl.rt.synchronize_stream(stream) == acl.ACL_ERROR_RT_AICORE_EXCEPTION
        msg = acl.get_recent_err_msg()
        assert "LeakyReluCustom" in msg and "not ge::GRAPH_SUCCESS" in msg, msg
    finally:
        for o in ops:
            custom.unload(o.name)


@pytest.mark.skipif(not sysconfig.get_config_var("Py_ENABLE_SHARED"),
                    reason="this Python has no shared libpython, which the toolkit embeds")
def test_opgen_cli_from_a_directory_matches_the_json_package(tmp_path, leaky):
    """`aclnn-py opgen op_host/ mix_custom_def.cpp --kernels ...` and the same operators'
    hand-written JSON make the same package: definitions and headers."""
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    kernels = write(tmp_path, "kernels.py", """
        import numpy as np
        def leaky_relu_custom(x, y, negative_slope):
            np.copyto(y, np.where(x >= 0, x, x * negative_slope))
        def mix_custom(x, bias, extras, y, count_out, **attrs):
            pass
        """)
    mix = write(tmp_path / "cann_ops", "mix_custom_def.cpp", MIX_DEF)
    from_cpp = cli("opgen", leaky.parent, mix, "--kernels", kernels, "-o", tmp_path / "a",
                   env=env)
    assert from_cpp.returncode == 0, from_cpp.stderr
    definition = tmp_path / "leaky.json"
    definition.write_text(json.dumps(LEAKY_JSON))
    mix_json = tmp_path / "mix.json"
    mix_json.write_text(json.dumps(MIX_JSON))
    from_json = cli("opgen", definition, mix_json, "--kernels", kernels, "-o", tmp_path / "b",
                    env=env)
    assert from_json.returncode == 0, from_json.stderr
    a, b = Path(from_cpp.stdout.strip()), Path(from_json.stdout.strip())
    for name in ("aclnn_leaky_relu_custom.h", "aclnn_mix_custom.h"):
        header = Path("op_api") / "include" / name
        assert (a / header).read_text() == (b / header).read_text()
    ops_json = Path("op_impl") / "aclnn_py" / "ops.json"
    assert parsed(json.loads((a / ops_json).read_text())) == \
        parsed(json.loads((b / ops_json).read_text()))
    assert (a / "op_api" / "lib" / "libcust_opapi.so").is_file()


@pytest.mark.skipif(not sysconfig.get_config_var("Py_ENABLE_SHARED"),
                    reason="this Python has no shared libpython, which the toolkit embeds")
def test_opgen_cli_include_option(tmp_path):
    """`aclnn-py opgen SRC -I DIR`: DIR is searched for the source's headers; a -I that is not a
    directory is a usage error naming the option."""
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    write(tmp_path / "headers", "cli_types.h", """
        #pragma once
        #include "graph/types.h"
        #define CLI_DTYPES {ge::DT_FLOAT16, ge::DT_FLOAT}
        """)
    src = write(tmp_path / "op_host", "cli_custom.cpp", """
        #include "cli_types.h"
        #include "register/op_def_registry.h"
        namespace ops {
        class CliCustom : public OpDef {
        public:
            explicit CliCustom(const char *name) : OpDef(name)
            {
                this->Input("x").DataType(CLI_DTYPES);
                this->Output("y").DataType(CLI_DTYPES);
            }
        };
        OP_ADD(CliCustom);
        }
        """)
    kernels = write(tmp_path, "kernels.py", """
        import numpy as np
        def cli_custom(x, y):
            np.copyto(y, x)
        """)
    missing = cli("opgen", src, "--kernels", kernels, "-o", tmp_path / "out",
                  "-I", tmp_path / "nowhere", env=env)
    assert missing.returncode == 2 and "'-I' / '--include'" in missing.stderr, missing.stderr
    assert "nowhere" in missing.stderr and "Traceback" not in missing.stderr
    without = cli("opgen", src, "--kernels", kernels, "-o", tmp_path / "out", env=env)
    assert without.returncode == 1 and "cli_types.h: No such file" in without.stderr
    ok = cli("opgen", src, "--kernels", kernels, "-o", tmp_path / "out",
             "-I", tmp_path / "headers", env=env)
    assert ok.returncode == 0, ok.stderr
    vendor = Path(ok.stdout.strip())
    (op,) = json.loads((vendor / "op_impl" / "aclnn_py" / "ops.json").read_text())
    assert [p["type"] for p in op["input_desc"] + op["output_desc"]] == [["fp16", "float"]] * 2
    assert (vendor / "op_api" / "include" / "aclnn_cli_custom.h").is_file()
