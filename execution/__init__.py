"""Execution: chunked trials in process or on Dask, time limits, progress bars and the folder of finished runs."""

__all__: list[str] = []
