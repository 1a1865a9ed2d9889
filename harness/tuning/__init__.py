"""The tuning stage: a case's GPU phase after its static builds (screen every fitting config, time the finalists,
keep the winner per model, time the baselines, price the other targets' winners here, tie each launch to its static
binary) and the ``tune`` record it leaves. No pytest here: the plugin calls :func:`gpu_phase.run_case` with a GPU
worker client from :mod:`harness.execution`, and anything else could."""
