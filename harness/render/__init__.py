"""Everything that renders records for people and tools, after the run: one module per view.

- ``tables``: the markdown report (comparison table, summaries, findings, failures) and the
  order-independent merge of several runs' records;
- ``terminal``: the end-of-run summary that fits 100 columns;
- ``html_page``: report.html, assembled from the views below and drawn with ``svg``;
- ``figures``: what the GPU phase measured per case, device and Triton version (rates, % of peak,
  baselines, the tuning-portability penalty);
- ``vendor_eval``: the vendor evaluation (``harness report --vendor-eval``);
- ``versions``: the comparison between the Triton versions that one merge holds;
- ``csv_export``: records as a long-format CSV.

Each view is data first (plain dataclasses built from records), then rendered; nothing here
reaches back into a run.
"""
