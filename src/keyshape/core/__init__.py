"""The byte level: HBase's ``Bytes`` conventions (``hbytes``), Java hashes and ecosystem salts
(``hashing``), OrderedBytes (``ordered``), many keys as one buffer (``keyarray``, ``arrowkeys``,
``batchhash``), split algorithms (``splits``), region maps (``regions``) and HBase's auto-split
(``splitmodel``: the table's knobs; ``splitsim``: the simulation; ``autosplit``: the idealized
row-count rule). Nothing here imports the rest of keyshape (``keyshape.errors`` aside, a leaf every
layer shares). Import the module you need: ``from keyshape.core.hbytes import compare``.
"""

# The public modules (``from keyshape.core import *`` imports them); native, prefetch and textcols
# serve the others.
__all__ = ["arrowkeys", "autosplit", "batchhash", "hashing", "hbytes", "keyarray", "ordered", "regions", "splitmodel", "splits", "splitsim"]
