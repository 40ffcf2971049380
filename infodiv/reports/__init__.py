"""Reports render the records a study computed: markdown, figures, the HTML page, the summary.

- :mod:`.decomposition`: the decomposition document rendered
  (:func:`~.decomposition.write_decomposition`; :mod:`infodiv.study.decompose` computes it);
- :mod:`.curves_md`: the curves document's markdown (:mod:`infodiv.study.curves` computes it);
- :mod:`.figures`: every figure, one object-oriented matplotlib style (no pyplot state);
- :mod:`.html`, :mod:`.summary`: the page and the one-screen summary of run folders;
- :mod:`.markdown`, :mod:`.serialize`: the shared table and JSON helpers.

Submodules are imported on use, so importing the package loads neither matplotlib nor the
estimators.
"""
