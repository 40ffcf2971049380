"""Reports on runs: the decomposition and curves reports, figure helpers, the HTML page.

- :mod:`.decomposition`: :func:`~.decomposition.decomposition_report` (Theorems 1–4 of one run);
- :mod:`.curves`: :func:`~.curves.curves_report` (layer-addition curves, Theorems 5–8);
- :mod:`.figures`: every figure, one object-oriented matplotlib style (no pyplot state);
- :mod:`.markdown`, :mod:`.serialize`: the shared table and JSON helpers.

Submodules are imported on use (``from infodiv.reports.curves import curves_report``), so
importing the package loads neither matplotlib nor the estimators.
"""
