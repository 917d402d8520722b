"""RoCE header dissectors: declarative header layouts, the opcode table, ICRC, Scapy layers.

Installed as `rocetrace.dissectors`.
"""
