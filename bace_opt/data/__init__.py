"""Data readers (the leaves of the package: they import only ``errors``, ``files`` and each other).

- ``csvfile``: the strict CSV reader (file:line:column for every fault);
- ``raw``: the raw third-party formats (Skyplane, green_dcc prices and zone map, llm_hw), docs/data.md;
- ``tables``: the compact derived tables shipped as package data (``tables/``, sources in tables/SOURCES.md);
- ``source``: a raw folder (``--data``, ``$BACE_OPT_DATA``) or the shipped tables, behind one interface;
- ``derive``: ``python -m bace_opt.data.derive --data DIR`` regenerates the shipped tables;
- ``topologies``: network topology files (Topology Zoo GML, DeepRMSA link lists).
"""
