"""Emulated SoC profiles: which chip the emulator pretends to be, and what follows from it.

Dtype support and operator availability change with the product as they do on real hardware
(CANN's ops-nn op_api): BF16 only on the Atlas A2/A3 class (SoC versions Ascend910B..
Ascend910E, arch DAV_2201); Hardsigmoid is absent on Atlas inference (310P) and Atlas 200I/500 A2;
the backward ops and LogSoftmax are absent on Atlas 200I/500 A2.
"""

from __future__ import annotations

from dataclasses import dataclass

ALL_OPS = frozenset(
    {
        "aclnnSoftmax",
        "aclnnSoftmaxBackward",
        "aclnnLogSoftmax",
        "aclnnLogSoftmaxBackward",
        "aclnnHardsigmoid",
        "aclnnInplaceHardsigmoid",
        "aclnnHardsigmoidBackward",
    }
)


@dataclass(frozen=True)
class SocProfile:
    name: str  # what acl.get_soc_name() returns, e.g. "Ascend910B4"
    product: str  # the product line as CANN's docs name it
    bf16: bool  # SoC version in [ASCEND910B, ASCEND910E] / arch DAV_2201: BF16 kernels exist
    ops: frozenset  # operators with kernels on this product

    def supports(self, op: str) -> bool:
        return op in self.ops


_A2 = "Atlas A2 training series / Atlas 800I A2 inference"
_A3 = "Atlas A3 training series / Atlas A3 inference series"
_TRAIN = "Atlas training series (Ascend 910)"
_INFER = "Atlas inference series (Ascend 310P)"
_EDGE = "Atlas 200I/500 A2 inference"

_NO_HARDSIGMOID = ALL_OPS - {"aclnnHardsigmoid", "aclnnInplaceHardsigmoid"}
_SOFTMAX_ONLY = frozenset({"aclnnSoftmax"})

PROFILES: dict[str, SocProfile] = {}
for _name in ("Ascend910B1", "Ascend910B2", "Ascend910B2C", "Ascend910B3", "Ascend910B4",
              "Ascend910B4-1"):
    PROFILES[_name] = SocProfile(_name, _A2, True, ALL_OPS)
for _name in ("Ascend910_9391", "Ascend910_9392", "Ascend910_9381", "Ascend910_9382",
              "Ascend910_9372", "Ascend910_9362"):
    PROFILES[_name] = SocProfile(_name, _A3, True, ALL_OPS)
for _name in ("Ascend910A", "Ascend910ProA", "Ascend910ProB", "Ascend910PremiumA"):
    PROFILES[_name] = SocProfile(_name, _TRAIN, False, ALL_OPS)
for _name in ("Ascend310P1", "Ascend310P3"):
    PROFILES[_name] = SocProfile(_name, _INFER, False, _NO_HARDSIGMOID)
for _name in ("Ascend310B1", "Ascend310B2", "Ascend310B3", "Ascend310B4"):
    PROFILES[_name] = SocProfile(_name, _EDGE, False, _SOFTMAX_ONLY)

DEFAULT_SOC = "Ascend910B4"


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
