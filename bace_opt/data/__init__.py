"""Readers of raw third-party data files (the leaves of the package: they import only ``errors``).

- ``topologies``: network topology files (Topology Zoo GML, DeepRMSA link lists).
"""
