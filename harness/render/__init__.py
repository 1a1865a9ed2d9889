"""Everything that formats a run's findings for people and tools: one module per view, computing nothing.

Each view takes :class:`harness.analysis.findings.Findings` (or, for ``compare``, the comparison
:mod:`harness.analysis.compare` decided) and returns text:

- ``terminal``: the end-of-run summary that fits 100 columns, and ``harness history show``'s lines;
- ``tables``: report.md (comparison table, summaries, findings, failures);
- ``html_page``: report.html, drawn with ``svg`` (inline charts, no script);
- ``vendor_eval``: vendor-eval.md (``harness report --vendor-eval``);
- ``csv_export``: the records as a long-format CSV;
- ``compare``: ``harness compare``'s summary, markdown and JSON;
- ``escaping``: text from matrices, kernels and compilers made inert for where it is shown.
"""
