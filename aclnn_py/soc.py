"""Emulated SoC profiles: which chip the emulator pretends to be, and what follows from it.

Dtype support and operator availability change with the product as they do on real hardware
(CANN's ops-nn op_api). CANN's operator docs give dtype lists for two SoC classes: the Atlas
training/inference series, and the Atlas A2/A3 class (SoC versions Ascend910B..Ascend910E, arch
DAV_2201), which adds BF16. Which operators have a kernel on which product line is part of each
operator's declaration (``OpDef.products``, aclnn_py/ops); a profile's ``ops`` is derived from
those declarations.
"""

from __future__ import annotations

from dataclasses import dataclass

# CANN's two SoC classes for dtype support (the keys of ``OpDef.dtypes``)
CLASS_BASE = "Atlas training/inference"
CLASS_A2A3 = "Atlas A2/A3"
SOC_CLASSES = (CLASS_BASE, CLASS_A2A3)


@dataclass(frozen=True)
class ProductLine:
    key: str  # what operator declarations name: "A2", "A3", "TRAINING", "INFERENCE", "EDGE"
    product: str  # the product line as CANN's docs name it
    bf16: bool  # SoC version in [ASCEND910B, ASCEND910E] / arch DAV_2201: BF16 kernels exist
    socs: tuple  # SoC names of the line

    @property
    def soc_class(self) -> str:
        return CLASS_A2A3 if self.bf16 else CLASS_BASE


LINES = (
    ProductLine("A2", "Atlas A2 training series / Atlas 800I A2 inference", True,
                ("Ascend910B1", "Ascend910B2", "Ascend910B2C", "Ascend910B3", "Ascend910B4",
                 "Ascend910B4-1")),
    ProductLine("A3", "Atlas A3 training series / Atlas A3 inference series", True,
                ("Ascend910_9391", "Ascend910_9392", "Ascend910_9381", "Ascend910_9382",
                 "Ascend910_9372", "Ascend910_9362")),
    ProductLine("TRAINING", "Atlas training series (Ascend 910)", False,
                ("Ascend910A", "Ascend910ProA", "Ascend910ProB", "Ascend910PremiumA")),
    ProductLine("INFERENCE", "Atlas inference series (Ascend 310P)", False,
                ("Ascend310P1", "Ascend310P3")),
    ProductLine("EDGE", "Atlas 200I/500 A2 inference", False,
                ("Ascend310B1", "Ascend310B2", "Ascend310B3", "Ascend310B4")),
)
LINE = {line.key: line for line in LINES}
ALL_LINES = frozenset(LINE)


@dataclass(frozen=True)
class SocProfile:
    name: str  # what acl.get_soc_name() returns, e.g. "Ascend910B4"
    product: str  # the product line as CANN's docs name it
    bf16: bool  # SoC version in [ASCEND910B, ASCEND910E] / arch DAV_2201: BF16 kernels exist
    line: str  # the product line's key (ProductLine.key)

    @property
    def soc_class(self) -> str:
        """CLASS_A2A3 or CLASS_BASE: which column of the operators' dtype tables applies."""
        return CLASS_A2A3 if self.bf16 else CLASS_BASE

    @property
    def ops(self) -> frozenset:
        """Operators with kernels on this product (from the operators' declarations)."""
        return frozenset(name for name, lines in _DECLARED.items() if self.line in lines)

    def supports(self, op: str) -> bool:
        lines = _DECLARED.get(op)
        return lines is not None and self.line in lines


# the product lines of each declared operator: aclnn_py.ops.register declares them here (this
# module sits below the operators and never imports them)
_DECLARED: dict[str, frozenset] = {}


def declare(op: str, lines: frozenset) -> None:
    """Record that operator ``op`` has kernels on the product ``lines`` (LINES keys)."""
    _DECLARED[op] = frozenset(lines)


PROFILES: dict[str, SocProfile] = {
    name: SocProfile(name, line.product, line.bf16, line.key) for line in LINES
    for name in line.socs
}

DEFAULT_SOC = "Ascend910B4"


def all_ops() -> frozenset:
    """Every declared operator."""
    return frozenset(_DECLARED)


def profile(name: str) -> SocProfile:
    """The profile for a SoC name (case-insensitive).

    Raises:
        ValueError: unknown name; the message lists the known ones.
    """
    for key, prof in PROFILES.items():
        if key.lower() == str(name).strip().lower():
            return prof
    raise ValueError(
        f"unknown SoC {name!r}; known SoCs: {', '.join(PROFILES)}"
    )
