"""infodiv: layer-addition curves, submodularity statistics and reports on Contributions."""

__version__ = "0.1.0"
