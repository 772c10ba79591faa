"""The public surface: what ``acl``, ``acl.rt``, ``acl.util`` and ``aclnn`` show to a user, to
help() and to tools.

* The generated modules (tools/gen_aclnn.py) are fresh.
* Every operator's two phases are plain functions whose signatures follow CANN's prototypes
  (CANN's aclnn API reference; the same prototypes are quoted on each docs/ops/ page), phase 1
  positional only.
* Every public function has a docstring; docstrings cite only CANN's public documentation and
  the repository's own docs.
* The namespaces hold only documented public names: no ``np``, ``ffi``, ``Optional`` or helpers.
* Getters of enum-valued facts return CANN's IntEnums.
* The package ships ``py.typed``.
"""

from __future__ import annotations

import enum
import importlib.util
import inspect
import re
import types
from pathlib import Path

import pytest

from aclnn_py import acl, aclnn, ops

ROOT = Path(__file__).resolve().parent.parent
P1 = inspect.Parameter.POSITIONAL_ONLY

# phase-1 arguments in CANN's order (CANN's aclnn API reference: the aclnnXxxGetWorkspaceSize
# prototypes without the workspaceSize/executor out-parameters)
CANN_PHASE1 = {
    "aclnnSoftmax": ("self", "dim", "out"),
    "aclnnSoftmaxBackward": ("gradOutput", "output", "dim", "out"),
    "aclnnLogSoftmax": ("self", "dim", "out"),
    "aclnnLogSoftmaxBackward": ("gradOutput", "output", "dim", "out"),
    "aclnnHardsigmoid": ("self", "out"),
    "aclnnInplaceHardsigmoid": ("self",),
    "aclnnHardsigmoidBackward": ("gradOutput", "self", "out"),
}
# aclnnStatus aclnnXxx(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
#                      aclrtStream stream)
PHASE2 = ("workspace", "workspace_size", "executor", "stream")

# the meta API: CANN's argument order (acl_meta.h), count arguments dropped (Python lists carry
# their length), out-parameters returned instead
META = {
    "aclnnInit": ("config_path",),
    "aclnnFinalize": (),
    "aclCreateTensor": ("view_dims", "data_type", "stride", "offset", "format", "storage_dims",
                        "tensor_data"),
    "aclDestroyTensor": ("tensor",),
    "aclCreateScalar": ("value", "data_type"),
    "aclDestroyScalar": ("scalar",),
    "aclCreateIntArray": ("values",),
    "aclDestroyIntArray": ("array",),
    "aclGetViewShape": ("tensor",),
    "aclGetStorageShape": ("tensor",),
    "aclGetViewStrides": ("tensor",),
    "aclGetViewOffset": ("tensor",),
    "aclGetFormat": ("tensor",),
    "aclGetDataType": ("tensor",),
    "aclGetRawTensorAddr": ("tensor",),
    "aclSetRawTensorAddr": ("tensor", "addr"),
    "aclSetAclOpExecutorRepeatable": ("executor",),
    "aclDestroyAclOpExecutor": ("executor",),
    "aclSetInputTensorAddr": ("executor", "index", "tensor", "addr"),
    "aclSetOutputTensorAddr": ("executor", "index", "tensor", "addr"),
    # custom operators' arguments (docs/custom_ops.md)
    "aclCreateFloatArray": ("values",),
    "aclDestroyFloatArray": ("array",),
    "aclCreateBoolArray": ("values",),
    "aclDestroyBoolArray": ("array",),
    "aclCreateTensorList": ("values",),
    "aclDestroyTensorList": ("tensor_list",),
    "aclSetDynamicTensorAddr": ("executor", "ir_index", "relative_index", "tensors", "addr"),
}

# pyACL's documented signatures (pyACL API reference; docs/runtime.md)
ACL = {
    "init": ("config_path",),
    "finalize": (),
    "get_recent_err_msg": (),
    "get_soc_name": (),
    "get_version": (),
    # tensor descriptors and data buffers (acl_base.h)
    "data_type_size": ("data_type",),
    "create_tensor_desc": ("data_type", "dims", "format"), "destroy_tensor_desc": ("desc",),
    "get_tensor_desc_type": ("desc",), "get_tensor_desc_format": ("desc",),
    "get_tensor_desc_size": ("desc",), "get_tensor_desc_element_count": ("desc",),
    "get_tensor_desc_num_dims": ("desc",), "get_tensor_desc_dim": ("desc", "index"),
    "get_tensor_desc_dim_v2": ("desc", "index"),
    "get_tensor_desc_dim_range": ("desc", "index", "dim_range_num"),
    "set_tensor_shape_range": ("desc", "dims_range"),
    "set_tensor_value_range": ("desc", "value_range"),
    "set_tensor_desc_name": ("desc", "name"), "get_tensor_desc_name": ("desc",),
    "set_tensor_format": ("desc", "format"), "set_tensor_storage_format": ("desc", "format"),
    "set_tensor_origin_format": ("desc", "format"), "set_tensor_shape": ("desc", "dims"),
    "set_tensor_storage_shape": ("desc", "dims"), "set_tensor_origin_shape": ("desc", "dims"),
    "set_tensor_dynamic_input": ("desc", "dynamic_input_name"),
    "set_tensor_const": ("desc", "data_buffer", "length"),
    "set_tensor_place_ment": ("desc", "mem_type"), "get_tensor_desc_address": ("desc",),
    "create_data_buffer": ("data", "size"), "destroy_data_buffer": ("data_buffer",),
    "update_data_buffer": ("data_buffer", "data", "size"),
    "get_data_buffer_addr": ("data_buffer",), "get_data_buffer_size": ("data_buffer",),
    "get_data_buffer_size_v2": ("data_buffer",),
}
RT = {
    "set_device": ("device_id",), "reset_device": ("device_id",), "get_device": (),
    "get_device_count": (), "get_run_mode": (), "create_context": ("device_id",),
    "destroy_context": ("context",), "set_context": ("context",), "get_context": (),
    "create_stream": (), "destroy_stream": ("stream",), "synchronize_stream": ("stream",),
    "synchronize_device": (), "malloc": ("size", "policy"), "free": ("dev_ptr",),
    "malloc_host": ("size",), "free_host": ("host_ptr",),
    "memcpy": ("dst", "dest_max", "src", "count", "kind"),
    "memcpy_async": ("dst", "dest_max", "src", "count", "kind", "stream"),
    "memset": ("dev_ptr", "max_count", "value", "count"),
    "memset_async": ("dev_ptr", "max_count", "value", "count", "stream"),
    "get_mem_info": ("attr",), "create_event": (), "destroy_event": ("event",),
    "record_event": ("event", "stream"), "reset_event": ("event", "stream"),
    "query_event_status": ("event",), "synchronize_event": ("event",),
    "stream_wait_event": ("stream", "event"), "event_elapsed_time": ("start", "end"),
    "create_stream_with_config": ("priority", "flag"),
    "synchronize_stream_with_timeout": ("stream", "timeout"),
    "create_event_with_flag": ("flag",),
    "create_event_ex_with_flag": ("flag",),
    "synchronize_event_with_timeout": ("event", "timeout"),
    "synchronize_device_with_timeout": ("timeout",), "query_event": ("event",),
    "stream_query": ("stream",), "device_can_access_peer": ("device_id", "peer_device_id"),
    "device_enable_peer_access": ("peer_device_id", "flags"),
    "device_disable_peer_access": ("peer_device_id",), "set_sys_param_opt": ("opt", "value"),
    "get_sys_param_opt": ("opt",), "ctx_set_sys_param_opt": ("opt", "value"),
    "ctx_get_sys_param_opt": ("opt",), "get_last_error": ("level",),
    "peek_at_last_error": ("level",), "query_device_status": ("device_id",),
}
UTIL = {
    "numpy_to_ptr": ("array",), "bytes_to_ptr": ("data",), "ptr_to_bytes": ("ptr", "size"),
    "ptr_to_numpy": ("ptr", "shape", "npy_type"),
}
HANDLES = ("aclTensor", "aclScalar", "aclIntArray", "aclFloatArray", "aclBoolArray",
           "aclTensorList", "aclOpExecutor")


def _params(fn) -> tuple[str, ...]:
    return tuple(inspect.signature(fn).parameters)


# ------------------------------------------------------------------- generated modules -----


def _generator():
    spec = importlib.util.spec_from_file_location("gen_aclnn", ROOT / "tools" / "gen_aclnn.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_generated_modules_are_fresh():
    """tools/gen_aclnn.py regenerated in memory gives the files in the tree."""
    stale = [str(path.relative_to(ROOT)) for path, text in _generator().outputs().items()
             if not path.exists() or path.read_text(encoding="utf-8") != text]
    assert not stale, f"stale generated files {stale}: run python tools/gen_aclnn.py"


def test_generated_ops_module_says_so():
    text = (ROOT / "aclnn_py" / "aclnn" / "_ops.py").read_text(encoding="utf-8")
    assert text.startswith("# Generated by tools/gen_aclnn.py") and "do not edit" in text


# -------------------------------------------------------------------------- signatures -----


def test_every_operator_has_a_cann_prototype_row():
    assert set(ops.REGISTRY) == set(CANN_PHASE1)


@pytest.mark.parametrize("name", sorted(CANN_PHASE1))
def test_phase1_signature_is_cann_order_positional_only(name):
    fn = getattr(aclnn, name + "GetWorkspaceSize")
    sig = inspect.signature(fn)
    assert tuple(sig.parameters) == CANN_PHASE1[name]
    assert all(p.kind is P1 and p.default is p.empty for p in sig.parameters.values())
    assert fn.__name__ == name + "GetWorkspaceSize" and isinstance(fn, types.FunctionType)


@pytest.mark.parametrize("name", sorted(CANN_PHASE1))
def test_phase1_signature_matches_the_docs_prototype(name):
    """The C prototype quoted on the op's docs page has the same arguments in the same order."""
    text = " ".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs" / "ops").glob("*.md"))
    flat = re.sub(r"\s+", " ", text.replace("`", ""))
    m = re.search(rf"aclnnStatus {name}GetWorkspaceSize\(([^)]*)\)", flat)
    assert m, f"no C prototype of {name}GetWorkspaceSize in docs/ops"
    c_args = [a.strip().split()[-1].lstrip("*") for a in m.group(1).split(",")]
    assert c_args[-2:] == ["workspaceSize", "executor"]
    assert tuple(c_args[:-2]) == _params(getattr(aclnn, name + "GetWorkspaceSize"))


@pytest.mark.parametrize("name", sorted(CANN_PHASE1))
def test_phase2_signature(name):
    fn = getattr(aclnn, name)
    assert _params(fn) == PHASE2 and fn.__name__ == name


@pytest.mark.parametrize("name", sorted(CANN_PHASE1))
def test_phase1_takes_arguments_positionally_only(name):
    fn = getattr(aclnn, name + "GetWorkspaceSize")
    n = len(CANN_PHASE1[name])
    with pytest.raises(TypeError):
        fn(*([None] * (n + 1)))
    with pytest.raises(TypeError):
        fn(*([None] * (n - 1)))
    with pytest.raises(TypeError):
        fn(**dict.fromkeys(CANN_PHASE1[name]))


def test_phase1_none_tensor_gives_nullptr():
    """Through the generated function, a None tensor still gives CANN's 161001, not an
    exception (docs/ops/aclnnSoftmax.md)."""
    assert aclnn.aclnnSoftmaxGetWorkspaceSize(None, 0, None) == (0, None, 161001)


def test_phase2_still_takes_keywords():
    """Phase 2 accepted keywords before the functions were written out; it still does."""
    assert aclnn.aclnnSoftmax(workspace=None, workspace_size=0, executor=None, stream=None) \
        == aclnn.ACLNN_ERR_PARAM_NULLPTR == 161001


@pytest.mark.parametrize("name", sorted(META))
def test_meta_signature(name):
    assert _params(getattr(aclnn, name)) == META[name]


@pytest.mark.parametrize("module,table", [(acl, ACL), (acl.rt, RT), (acl.util, UTIL)],
                         ids=["acl", "acl.rt", "acl.util"])
def test_pyacl_signatures(module, table):
    for name, params in table.items():
        assert _params(getattr(module, name)) == params, f"{module.__name__}.{name}"


# -------------------------------------------------------------------------- docstrings -----


def _public_functions():
    out = []
    for module in (acl, acl.rt, acl.util, aclnn):
        for name in dir(module):
            obj = getattr(module, name)
            if not name.startswith("_") and callable(obj) and not isinstance(obj, type):
                out.append((f"{module.__name__}.{name}", obj))
    return out


def test_every_public_function_has_a_docstring():
    missing = [name for name, fn in _public_functions() if not (fn.__doc__ or "").strip()]
    assert not missing, f"public functions without a docstring: {missing}"


def test_docstrings_cite_only_public_or_repo_docs():
    """A docstring may send the reader to CANN's public documentation or to the repository's own
    files: no path that leaves the repository, and every Markdown file it names exists here."""
    repo_md = {p.name for p in ROOT.rglob("*.md") if ".git" not in p.parts}
    for name, fn in _public_functions():
        doc = fn.__doc__ or ""
        assert "../" not in doc, f"{name} cites a path outside the repository"
        for md in re.findall(r"[\w.-]+\.md\b", doc):
            assert md in repo_md, f"{name} cites {md}, which is not a file of the repository"
        for path in re.findall(r"docs/[\w/.-]+\.md", doc):
            assert (ROOT / path).exists(), f"{name} cites {path}, which does not exist"


@pytest.mark.parametrize("name", sorted(CANN_PHASE1))
def test_operator_docstrings(name):
    """Phase 1's docstring: the formula's op, each argument, the return tuple, the codes, the
    docs page; phase 2's: the return and the phase-2 codes."""
    doc1 = " ".join(getattr(aclnn, name + "GetWorkspaceSize").__doc__.split())
    for arg in CANN_PHASE1[name]:
        assert f"{arg} (" in doc1, f"{name}: argument {arg} undocumented"
    for needed in ("(workspace_size, executor, ret)", "161001", "161002", "docs/ops/",
                   "CANN's aclnn API reference"):
        assert needed in doc1, f"{name}GetWorkspaceSize docstring lacks {needed!r}"
    doc2 = " ".join(getattr(aclnn, name).__doc__.split())
    for needed in ("ret", "161001", "161002", "361001", "CANN's aclnn API reference"):
        assert needed in doc2, f"{name} docstring lacks {needed!r}"


# -------------------------------------------------------------------------- namespaces -----


def _runtime_doc() -> str:
    return (ROOT / "docs" / "runtime.md").read_text(encoding="utf-8")


def _is_enum_class(obj) -> bool:
    return isinstance(obj, type) and issubclass(obj, enum.IntEnum)


def _undocumented(module, allowed_functions) -> list[str]:
    bad = []
    for name in dir(module):
        if name.startswith("_"):
            continue
        obj = getattr(module, name)
        if re.fullmatch(r"ACL(NN)?_[A-Z0-9_]+", name):
            ok = isinstance(obj, enum.IntEnum)
        elif _is_enum_class(obj):
            ok = name.startswith("acl")
        else:
            ok = name in allowed_functions
        if not ok:
            bad.append(name)
    return bad


def test_acl_namespace_is_clean():
    doc = _runtime_doc()
    for name in ACL:
        assert f"acl.{name}(" in doc, f"acl.{name} is not in docs/runtime.md"
    assert _undocumented(acl, {*ACL, "rt", "util"}) == []
    assert acl.rt.__name__ == "aclnn_py.acl.rt" and acl.util.__name__ == "aclnn_py.acl.util"


def test_acl_rt_namespace_is_clean():
    doc = _runtime_doc()
    for name in RT:
        assert re.search(rf"\b{name}\b", doc), f"acl.rt.{name} is not in docs/runtime.md"
    assert _undocumented(acl.rt, set(RT)) == []


def test_acl_util_namespace_is_clean():
    doc = _runtime_doc()
    for name in UTIL:
        assert f"{name}(" in doc, f"acl.util.{name} is not in docs/runtime.md"
    assert _undocumented(acl.util, set(UTIL)) == []


def test_aclnn_namespace_is_clean():
    ops_names = {n + s for n in CANN_PHASE1 for s in ("", "GetWorkspaceSize")}
    assert _undocumented(aclnn, {*META, *ops_names, *HANDLES}) == []


def test_aclnn_star_import_is_unchanged():
    """``from aclnn_py.aclnn import *`` gives, as before, every acl-prefixed function and enum
    class and the handle classes (not the ACL_* constants)."""
    expected = {*META, *(n + s for n in CANN_PHASE1 for s in ("", "GetWorkspaceSize")), *HANDLES,
                *(n for n in dir(acl) if _is_enum_class(getattr(acl, n)))}
    assert set(aclnn.__all__) == expected and len(aclnn.__all__) == len(expected)
    assert set(acl.__all__) == {*ACL, "rt", "util"}


def test_constants_are_the_same_objects_in_both_namespaces():
    """aclnn.ACL_FLOAT is acl.ACL_FLOAT is aclDataType.ACL_FLOAT, and pyACL's aliases of
    ACL_SUCCESS exist."""
    names = [n for n in dir(acl) if re.fullmatch(r"ACL(NN)?_[A-Z0-9_]+", n)]
    assert len(names) > 200
    for n in names:
        assert getattr(aclnn, n) is getattr(acl, n), n
    assert acl.ACL_FLOAT is acl.aclDataType.ACL_FLOAT == 0
    assert acl.ACL_ERROR_NONE == acl.ACL_RT_SUCCESS == acl.ACL_SUCCESS == 0


# ----------------------------------------------------------------- getters return enums -----


def test_aclGetDataType_and_aclGetFormat_return_intenums():
    t = aclnn.aclCreateTensor([2], 1, None, 0, 2, [2], 0)  # FLOAT16 (1), ND (2): plain ints
    dt, ret = aclnn.aclGetDataType(t)
    assert ret == 0 and type(dt) is aclnn.aclDataType and dt == 1 and dt.name == "ACL_FLOAT16"
    fm, ret = aclnn.aclGetFormat(t)
    assert ret == 0 and type(fm) is aclnn.aclFormat and fm == 2 and fm.name == "ACL_FORMAT_ND"
    assert aclnn.aclDestroyTensor(t) == 0
    assert aclnn.aclGetDataType(t) == (None, 161002)
    assert aclnn.aclGetFormat(None) == (None, 161001)


def test_getters_keep_values_no_enum_names():
    """aclCreateTensor takes any int32_t; a value CANN's enums do not name comes back as it
    went in (CANN's aclDataType has no 5, its aclFormat no 5)."""
    t = aclnn.aclCreateTensor([2], 5, None, 0, 5, [2], 0)
    assert aclnn.aclGetDataType(t) == (5, 0) and aclnn.aclGetFormat(t) == (5, 0)
    aclnn.aclDestroyTensor(t)


def test_get_run_mode_returns_an_intenum():
    mode, ret = acl.rt.get_run_mode()
    assert (mode, ret) == (1, 0) and type(mode) is acl.aclrtRunMode and mode.name == "ACL_HOST"


def test_query_event_status_returns_an_intenum(stream):
    ev, ret = acl.rt.create_event()
    assert ret == 0
    status, ret = acl.rt.query_event_status(ev)
    assert ret == 0 and type(status) is acl.aclrtEventRecordedStatus
    assert status == acl.ACL_EVENT_RECORDED_STATUS_NOT_READY == 0  # never recorded
    assert acl.rt.record_event(ev, stream) == 0 and acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.query_event_status(ev) == (1, 0)
    assert type(acl.rt.query_event_status(ev)[0]) is acl.aclrtEventRecordedStatus
    assert acl.rt.destroy_event(ev) == 0


# ------------------------------------------------------------------------------ typing -----


def test_py_typed_is_shipped():
    """PEP 561: the marker exists and pyproject.toml ships it; every package directory of
    aclnn_py is listed, so none is missing from a wheel."""
    assert (ROOT / "aclnn_py" / "py.typed").exists()
    conf = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    data = re.search(r"\[tool\.setuptools\.package-data\]\s*\naclnn_py = \[([^\]]*)\]", conf)
    assert data and '"py.typed"' in data.group(1)
    listed = re.search(r"^packages = \[([^\]]*)\]", conf, re.M).group(1)
    for init in (ROOT / "aclnn_py").rglob("__init__.py"):
        pkg = ".".join(init.parent.relative_to(ROOT).parts)
        assert f'"{pkg}"' in listed, f"{pkg} is not in pyproject's packages"
