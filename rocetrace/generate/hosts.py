"""Addresses of the simulated hosts: MACs, IPv4/IPv6 addresses and VXLAN underlay addresses."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Hosts:
    """Per-host address bytes, indexed by host number (rows of uint8 arrays)."""

    mac: np.ndarray  # (n, 6)
    ip: np.ndarray  # (n, 4) or (n, 16)
    outer_mac: np.ndarray  # (n, 6) VXLAN underlay
    outer_ip: np.ndarray  # (n, 4) VXLAN underlay

    @property
    def count(self) -> int:
        return len(self.mac)

    def ip_str(self, host: int) -> str:
        return str(ipaddress.ip_address(bytes(self.ip[host])))

    def mac_str(self, host: int) -> str:
        return ":".join(f"{b:02x}" for b in self.mac[host])


def make_hosts(n: int, ip_version: int = 4) -> Hosts:
    """Host i: MAC 02:00:00:00:xx:yy, IP 10.0.x.y (or fd00::x:y), underlay 192.168.x.y."""
    idx = np.arange(1, n + 1, dtype=np.uint32)
    hi, lo = (idx >> 8).astype(np.uint8), (idx & 0xFF).astype(np.uint8)
    mac = np.zeros((n, 6), dtype=np.uint8)
    mac[:, 0], mac[:, 4], mac[:, 5] = 0x02, hi, lo
    outer_mac = mac.copy()
    outer_mac[:, 3] = 0x01
    if ip_version == 6:
        ip = np.zeros((n, 16), dtype=np.uint8)
        ip[:, 0], ip[:, 1] = 0xFD, 0x00
        ip[:, 14], ip[:, 15] = hi, lo
    else:
        ip = np.zeros((n, 4), dtype=np.uint8)
        ip[:, 0], ip[:, 2], ip[:, 3] = 10, hi, lo
    outer_ip = np.zeros((n, 4), dtype=np.uint8)
    outer_ip[:, 0], outer_ip[:, 1], outer_ip[:, 2], outer_ip[:, 3] = 192, 168, hi, lo
    return Hosts(mac, ip, outer_mac, outer_ip)
