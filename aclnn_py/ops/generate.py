"""What is generated from the operator declarations (``OpDef``), and the tool that writes it.

Generated regions sit between markers in the files they belong to:

- docs/ops/aclnnXxx.md: ``<!-- BEGIN GENERATED: params aclnnXxx -->`` ...
  ``<!-- END GENERATED -->``, the parameter table of each operator;
- docs/dtypes.md: ``<!-- BEGIN GENERATED: dtypes aclnn -->`` (what phase 1 accepts per SoC class)
  and ``<!-- BEGIN GENERATED: dtypes functional -->`` (the NumPy layer's dtypes);
- docs/configuration.md: ``<!-- BEGIN GENERATED: soc profiles -->``, the SoC profiles and the
  operators each lacks;
- aclnn_py/functional.py: ``# BEGIN GENERATED: functional`` ... ``# END GENERATED``, one
  function per declared ``OpDef.functional``.

Usage (from the repository root)::

    python -m aclnn_py.ops.generate           # exit 1 and list the stale regions
    python -m aclnn_py.ops.generate --write   # rewrite them

tests/test_declarations.py regenerates every region in memory and fails when a file differs.
"""

from __future__ import annotations

import argparse
import re
import sys
from fractions import Fraction
from pathlib import Path
from typing import Optional

from .. import dtypes, soc
from . import REGISTRY, OpDef, _checks
from .decl import INOUT, INPUT, INT, OUTPUT

ROOT = Path(__file__).resolve().parents[2]
MD_BEGIN, MD_END = "<!-- BEGIN GENERATED: {key} -->", "<!-- END GENERATED -->"
PY_BEGIN, PY_END = "# BEGIN GENERATED: {key}", "# END GENERATED"
_ROLE = {INPUT: "in", OUTPUT: "out", INOUT: "in/out", INT: "in"}
_CLASS_TEXT = {soc.CLASS_BASE: "Atlas training/inference series",
               soc.CLASS_A2A3: "Atlas A2/A3"}


# ------------------------------------------------------------------------ dtype wording ----

def _kernel_dtypes() -> list:
    """The dtypes the kernels and casts implement, in the dtype table's order."""
    return [d.acl for d in dtypes._TABLE if d.acl in dtypes.KERNEL_DTYPES]


def acl_names(dts) -> str:
    return ", ".join(dtypes.name(d) for d in dts)


def numpy_names(dts) -> str:
    return ", ".join(dtypes.to_numpy(d).name for d in dts)


def _checks_in(op: OpDef, extended: bool) -> tuple:
    return tuple(c for c in op.sequence(extended) if not isinstance(c, _checks.Empty))


def same_dtype_as(op: OpDef, name: str, extended: bool = False) -> Optional[str]:
    """The earlier argument ``name`` must have the dtype of (a SameDtype check), or None."""
    order = op.params
    for c in _checks_in(op, extended):
        if isinstance(c, _checks.SameDtype) and name in c.names:
            other = c.names[1] if c.names[0] == name else c.names[0]
            if order.index(other) < order.index(name):
                return other
    return None


def cast_rule(op: OpDef, name: str, extended: bool = False) -> Optional[_checks.CanCast]:
    for c in _checks_in(op, extended):
        if isinstance(c, _checks.CanCast) and c.dst == name:
            return c
    return None


def listed(op: OpDef, name: str, extended: bool = False) -> bool:
    return any(isinstance(c, _checks.DtypeIn) and c.names == (name,)
               for c in _checks_in(op, extended))


def dtype_cell(op: OpDef, name: str) -> str:
    """The docs' dtypes cell of a tensor argument (aclnn layer), from the declaration."""
    base = op.dtypes[soc.CLASS_BASE].get(name)
    a2a3 = op.dtypes[soc.CLASS_A2A3].get(name)
    same = same_dtype_as(op, name)
    if a2a3 is not None:
        text = acl_names(a2a3)
        extra = [d for d in a2a3 if d not in (base or ())]
        if extra:
            text += f" ({acl_names(extra)} on Atlas A2/A3 only)"
        return text + (f"; same as {same}" if same else "")
    if same:
        return f"as {same}"
    rule = cast_rule(op, name)
    kernel = _kernel_dtypes()
    if rule is not None:
        sources = {d for n in rule.names for t in op.dtypes.values() for d in t.get(n, ())}
        ok = [d for d in kernel if all(dtypes.can_cast(s, d) for s in sources)]
        return f"CanCast from the {rule.what.lower()} dtype: {acl_names(ok)} in the emulator"
    return f"not checked: the result is cast to it ({acl_names(kernel)} in the emulator)"


def _format_cell(op: OpDef, name: str) -> str:
    for c in _checks_in(op, False):
        if isinstance(c, _checks.SameFormat) and name in c.names:
            other = c.names[1] if c.names[0] == name else c.names[0]
            if op.params.index(other) < op.params.index(name):
                return f"same as {other} (checked)"
    return "ND (not checked)"


# ------------------------------------------------------------------------------- tables ----

def _row(*cells: str) -> str:
    return "| " + " | ".join(cells) + " |"


def param_table(op: OpDef) -> str:
    """docs/ops: the parameter table of ``op``'s phase 1."""
    lines = [_row("parameter", "in/out", "description", "dtypes", "format", "rank"),
             "|---|---|---|---|---|---|"]
    for a in op.args:
        if a.role == INT:
            lines.append(_row(a.name, "in", a.doc, "int64", "—", "—"))
        else:
            lines.append(_row(a.name, _ROLE[a.role], a.doc, dtype_cell(op, a.name),
                              _format_cell(op, a.name), a.rank or f"0–{_checks.MAX_DIMS}"))
    lines.append(_row("workspace_size", "out",
                      f"bytes of workspace phase 2 needs ({op.workspace_doc})", "", "", ""))
    lines.append(_row("executor", "out",
                      "the plan; single-use unless `aclSetAclOpExecutorRepeatable`", "", "", ""))
    return "\n".join(lines)


def _rule_cell(op: OpDef, name: str) -> str:
    rules = []
    for ext, layer in ((False, "aclnn"), (True, "functional")):
        same = same_dtype_as(op, name, ext)
        cast = cast_rule(op, name, ext)
        if same:
            rules.append((layer, f"same dtype as {same}"))
        elif cast is not None:
            src = (cast.names[0] if len(cast.names) == 1
                   else f"promote({', '.join(cast.names)})")
            rules.append((layer, f"CanCast({src} → {name})"))
        elif not listed(op, name, ext) and name in op.outputs:
            rules.append((layer, "not checked (a cast target)"))
    if len(rules) == 2 and rules[0][1] == rules[1][1]:
        return rules[0][1]
    return "; ".join(f"{text} ({layer})" for layer, text in rules)


def aclnn_dtype_table() -> str:
    """docs/dtypes.md: the dtypes phase 1 accepts, per SoC class, and the functional layer's."""
    lines = [_row("operator", "tensor", _CLASS_TEXT[soc.CLASS_BASE],
                  _CLASS_TEXT[soc.CLASS_A2A3], "functional layer", "other rule"),
             "|---|---|---|---|---|---|"]
    for op in REGISTRY.values():
        fdt = op.functional.dtypes if op.functional else None
        for name in op.tensors:
            cells = [acl_names(op.dtypes[c][name]) if name in op.dtypes[c] else "—"
                     for c in soc.SOC_CLASSES]
            if fdt is None:
                cells.append("(no function)")
            else:
                cells.append(acl_names(fdt[name]) if name in fdt else "—")
            lines.append(_row(op.name, name, *cells, _rule_cell(op, name)))
    return "\n".join(lines)


def soc_table() -> str:
    """docs/configuration.md: the SoC profiles, their class and the operators they lack (from
    soc.LINES and the declarations' ``products``)."""
    lines = [_row("SoC names", "product", "BF16", "operators without kernels"),
             "|---|---|---|---|"]
    for line in soc.LINES:
        names = ", ".join(f"**{n}** (default)" if n == soc.DEFAULT_SOC else n
                          for n in line.socs)
        missing = [op.name[len("aclnn"):] for op in REGISTRY.values()
                   if line.key not in op.products]
        lines.append(_row(names, line.product, "yes" if line.bf16 else "no",
                          ", ".join(missing) or "—"))
    return "\n".join(lines)


def functional_dtype_table() -> str:
    """docs/dtypes.md: each function's input dtypes and out_dtype."""
    INT8_OUT = dtypes.FUNCTIONAL_INT8_OUT + dtypes.FUNCTIONAL_F8  # softmax: int8 and f8 out
    OUT_DTYPES = dtypes.FUNCTIONAL_OUT_DTYPES

    lines = [_row("function", "input dtypes", "`out_dtype` (default)"), "|---|---|---|"]
    for op in REGISTRY.values():
        spec = op.functional
        if spec is None:
            continue
        lists = [spec.dtypes[arg] for _, arg in spec.arrays]
        inputs = numpy_names(lists[0])
        if any(lst != lists[0] for lst in lists[1:]):
            inputs = "; ".join(f"{py}: {numpy_names(spec.dtypes[arg])}"
                               for py, arg in spec.arrays)
        if len(spec.arrays) > 1:
            a, b = (arg for _, arg in spec.arrays[:2])
            if same_dtype_as(op, b, True) == a or same_dtype_as(op, a, True) == b:
                inputs += "; both the same"
            elif any(len(c.names) > 1 for c in _checks_in(op, True)
                     if isinstance(c, _checks.CanCast)):
                inputs += "; may differ (promoted)"
        out = op.outputs[0]
        out_list = spec.dtypes.get(out)
        own = [d for d in dict.fromkeys(d for lst in lists for d in lst)
               if d not in OUT_DTYPES and (out_list is None or d in out_list)]
        outs = numpy_names([d for d in OUT_DTYPES])
        wider = [d for d in (out_list or ()) if d in INT8_OUT]
        if wider:  # out_dtype takes these whatever the input's dtype (softmax's int8, uint8)
            outs, own = numpy_names([*OUT_DTYPES, *wider]), []
        for d in own:
            py = spec.arrays[0][0]
            outs += f"; {numpy_names([d])} for an {numpy_names([d])} {py}"
        if spec.out_dtype == "promoted":
            default = "the promoted dtype"
        elif len(spec.arrays) == 1:
            default = f"{spec.arrays[0][0]}'s dtype"
        else:
            default = "the inputs' dtype"
        lines.append(_row(f"`{spec.name}`", inputs, f"{outs} ({default})"))
    return "\n".join(lines)


# --------------------------------------------------------------------------- functional ----

def _literal(value: float) -> str:
    text = repr(value)
    if len(text) <= 8:
        return text
    frac = Fraction(value).limit_denominator(1000)
    if frac.numerator / frac.denominator == value:
        return f"{frac.numerator} / {frac.denominator}"
    return text


def _wrap(head: str, items: list, tail: str, indent: int) -> list:
    """``head`` + items joined by ", " + ``tail``, wrapped at 100 columns under the bracket."""
    lines, cur = [], head
    for i, item in enumerate(items):
        piece = item + (", " if i < len(items) - 1 else tail)
        if len(cur) + len(piece.rstrip()) > 100 and cur.strip():
            lines.append(cur.rstrip())
            cur = " " * indent
        cur += piece
    lines.append(cur)
    return lines


def _dict_src(pairs) -> str:
    return "{" + ", ".join(f'"{k}": {v}' for k, v in pairs) + "}"


# the keyword parameters of FunctionalSpec.options (oneDNN's attributes), as generated
OPTION_PARAMS = {
    "accumulation": 'accumulation: str = "strict"',
    "src_scale": "src_scale: float = 1.0",
    "dst_scale": "dst_scale: float = 1.0",
    "post_ops": "post_ops=()",
    "inf_as_zero": "inf_as_zero: bool = False",
    "dropout": "dropout=None",
    "dropout_mask": "dropout_mask=None",
    "out": "out=None",
}


def functional_source() -> str:
    """aclnn_py/functional.py's generated part: ``__all__`` and one function per operator with
    an ``OpDef.functional``, in registry order."""
    import inspect

    specs = [(op, op.functional) for op in REGISTRY.values() if op.functional]
    out = _wrap("__all__ = [", [f'"{s.name}"' for _, s in specs], "]", len("__all__ = ["))
    for op, spec in specs:
        params = [py for py, _ in spec.arrays] + [f"{n}: int" for n in op.int_params]
        params += ["*"] + [f"{n}: float = {_literal(op.attrs[n])}" for n in spec.attrs]
        params += ["out_dtype=None"] + [OPTION_PARAMS[n] for n in spec.options]
        head = f"def {spec.name}("
        out += ["", ""] + _wrap(head, params, ") -> np.ndarray:", len(head))
        doc = inspect.cleandoc(spec.doc).splitlines()
        out.append(f'    """{doc[0]}')
        out += [f"    {line}" if line else "" for line in doc[1:]]
        out.append('    """')
        arrays = _dict_src((arg, py) for py, arg in spec.arrays)
        ints = _dict_src((n, n) for n in op.int_params)
        attrs = _dict_src((n, n) for n in spec.attrs)
        head = "    return _call("
        call = [f'"{op.name}"', arrays, ints, attrs, "out_dtype"]
        call += [f"{n}={n}" for n in spec.options]
        out += _wrap(head, call, ")", len(head))
    return "\n".join(out)


# -------------------------------------------------------------------------------- files ----

def regions(root: Path = ROOT) -> dict:
    """{path: {key: generated text}} of every generated region."""
    found: dict = {}
    for op in REGISTRY.values():
        page = root / "docs" / "ops" / f"{_page(op)}.md"
        found.setdefault(page, {})[f"params {op.name}"] = param_table(op)
    found.setdefault(root / "docs" / "dtypes.md", {}).update({
        "dtypes aclnn": aclnn_dtype_table(),
        "dtypes functional": functional_dtype_table(),
    })
    found[root / "docs" / "configuration.md"] = {"soc profiles": soc_table()}
    found[root / "aclnn_py" / "functional.py"] = {"functional": functional_source()}
    return found


def _page(op: OpDef) -> str:
    """The docs page of an op: its own, or the page of the op it is the in-place form of."""
    name = op.name.replace("aclnnInplace", "aclnn")
    return name


def replace(text: str, key: str, body: str, python: bool = False) -> str:
    """``text`` with the region ``key`` holding ``body``. Raises KeyError without markers."""
    begin = (PY_BEGIN if python else MD_BEGIN).format(key=key)
    end = PY_END if python else MD_END
    pattern = re.compile(re.escape(begin) + r"[^\n]*\n(.*?)^" + re.escape(end),
                         re.S | re.M)
    m = pattern.search(text)
    if m is None:
        raise KeyError(f"no region {begin!r} ... {end!r}")
    return text[:m.start(1)] + body + "\n" + text[m.end(1):]


def render(path: Path, root: Path = ROOT) -> tuple[str, str]:
    """(current text, text with every region regenerated) of one file."""
    text = path.read_text(encoding="utf-8")
    new = text
    for key, body in regions(root)[path].items():
        new = replace(new, key, body, python=path.suffix == ".py")
    return text, new


def stale(root: Path = ROOT) -> list:
    """Files whose generated regions differ from the declarations."""
    out = []
    for path in regions(root):
        text, new = render(path, root)
        if new != text:
            out.append(path)
    return out


def write(root: Path = ROOT) -> list:
    changed = []
    for path in regions(root):
        text, new = render(path, root)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aclnn_py.ops.generate",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite the stale regions")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository root")
    args = parser.parse_args(argv)
    if not (args.root / "docs" / "ops").is_dir():
        parser.error(f"{args.root} is not the repository root (no docs/ops)")
    if args.write:
        for path in write(args.root):
            print(f"wrote {path.relative_to(args.root)}")
        return 0
    paths = stale(args.root)
    for path in paths:
        print(f"stale: {path.relative_to(args.root)}")
    return 1 if paths else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
