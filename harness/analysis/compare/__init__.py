"""Two runs compared: what changed from pin X to pin Y (or night to night), and is it worse?

``diff`` matches records and finds the changes, ``stats`` judges timings on their raw
samples, ``render`` writes the summary, markdown and JSON. Exit codes (docs/usage.md):
0 nothing worse, 1 performance regression only, 2 a worse status, verdict or
correctness, 3 the runs cannot be compared.
"""

from harness.analysis.compare.diff import Comparison, compare_runs
from harness.analysis.compare.inputs import CompareInputError

__all__ = ["CompareInputError", "Comparison", "compare_runs"]
