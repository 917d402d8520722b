"""Captures of any size: the analysis split by connection into partitions (Parquet shards
on disk), analysed alone in Dask tasks and joined by the reduce step of the registry
(rocetrace.analysis.pipeline). docs/scale.md tells how to run it, on one host or many."""
