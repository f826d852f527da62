"""The byte level: HBase's ``Bytes`` conventions (``hbytes``), Java hashes and ecosystem salts
(``hashing``), OrderedBytes (``ordered``), many keys as one buffer (``keyarray``), split
algorithms (``splits``) and region maps (``regions``). Nothing here imports the rest of keyshape
(``keyshape.errors`` aside, a leaf every layer shares).
"""
