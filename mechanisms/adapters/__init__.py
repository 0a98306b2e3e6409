"""Adapters that audit other DP libraries (OpenDP, python-dp, PipelineDP, Tumult Core and Analytics).

Each module registers its mechanisms only when its library (or its environment) is present, and imports the
library only when an adapter is built.
"""
