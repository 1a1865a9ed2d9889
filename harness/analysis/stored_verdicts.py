"""The verdicts as ``results.json`` stores them, beside the records: one entry per case x config x target column
(``verdicts``) and one per config row (``portability``). Typed here, turned into JSON by the results writer; what
they say is decided in :mod:`harness.analysis.verdicts` and nowhere else."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.analysis.verdicts import RowVerdict, VendorFit, outcome, outcome_text
from harness.model.payloads import LimitFlag, Payload


@dataclass(frozen=True)
class _CaseConfig(Payload):
    """Which case and config an entry is about (the keys every stored verdict starts with)."""

    kernel: str = ""
    dtype: str = ""
    shape: Mapping[str, Any] = field(default_factory=dict)
    triton: str = ""
    config_id: str = ""
    origin: str = ""


@dataclass(frozen=True)
class VerdictEntry(_CaseConfig):
    """One target column's verdict for one case and config (the deciding build's, or an opt-in one's beside it)."""

    target: str = ""
    environment: str | None = None  # None: the deciding build is missing (incomplete)
    column: str = ""
    deciding: bool = False
    verdict: str = ""
    reasons: tuple[str, ...] = ()
    beside: tuple[str, ...] = ()
    flags: tuple[LimitFlag, ...] = ()


@dataclass(frozen=True)
class RowEntry(_CaseConfig):
    """One config row across its targets: its text, whether the vendors differ, and each vendor's fit."""

    verdict: str = ""
    asymmetric: bool = False
    category: str = ""
    vendors: Mapping[str, VendorFit] = field(default_factory=dict)
    targets: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class StoredVerdicts:
    verdicts: tuple[VerdictEntry, ...]
    portability: tuple[RowEntry, ...]

    def to_json(self) -> dict[str, list[dict[str, Any]]]:
        return {
            "verdicts": [e.to_json() for e in self.verdicts],
            "portability": [e.to_json() for e in self.portability],
        }


def stored(rows: Mapping[tuple[str, ...], RowVerdict]) -> StoredVerdicts:
    """Every row's entries, in the rows' order (each target's deciding entry, then its opt-in builds)."""
    entries: list[VerdictEntry] = []
    portability: list[RowEntry] = []
    for row in rows.values():
        first = next(tv.decided_by or tv.others[0] for tv in row.targets.values())
        ident: dict[str, Any] = {
            "kernel": first.kernel,
            "dtype": first.dtype,
            "shape": first.shape,
            "triton": first.triton,
            "config_id": first.config_id,
            "origin": first.origin,
        }
        for tv in row.targets.values():
            deciding = tv.decided_by
            entries.append(
                VerdictEntry.whole(
                    **ident,
                    target=tv.target,
                    environment=deciding.environment if deciding else None,
                    column=tv.column,
                    deciding=True,
                    verdict=tv.verdict,
                    reasons=tv.reasons,
                    beside=tv.beside,
                    flags=tuple(deciding.flags) if deciding else (),
                )
            )
            for o in tv.others:
                entries.append(
                    VerdictEntry.whole(
                        **ident,
                        target=tv.target,
                        environment=o.environment,
                        column=o.column,
                        deciding=False,
                        verdict=outcome(o),
                        reasons=(outcome_text(o),),
                        beside=(),
                        flags=tuple(o.flags),
                    )
                )
        portability.append(
            RowEntry.whole(
                **ident,
                verdict=row.text,
                asymmetric=row.asymmetric,
                category=row.category,
                vendors=dict(row.vendors),
                targets={t: v.verdict for t, v in row.targets.items()},
            )
        )
    return StoredVerdicts(tuple(entries), tuple(portability))
