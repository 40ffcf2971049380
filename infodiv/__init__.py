"""infodiv: layer-addition curves, submodularity statistics and reports on Contributions.

``with infodiv.collect_warnings(): ...`` collapses the warnings of a block into one line per
kind (its count and the range of its numbers), as ``infodiv <command>`` does for each stage.
"""

from .warncollect import collect_warnings

__version__ = "0.1.0"
__all__ = ["collect_warnings", "__version__"]
