"""rocetrace: a RoCEv2 protocol analyzer for packet captures."""

__version__ = "0.1.0"
