"""keyshape inside Spark jobs (``pip install 'keyshape[spark]'``): encode row keys, analyze billions
of keys, sample split points and write to HBase where the data already is.

Every function works on Arrow record batches (``mapInArrow``) with keyshape's vectorized kernels,
never a per-row Python UDF; the analysis is computed as mergeable partials, one per partition,
that combine into exactly what the local analyzer reports for the same keys.
"""

from keyshape.spark.analyze import analyze, analyze_path
from keyshape.spark.encode import encode_keys
from keyshape.spark.session import session
from keyshape.spark.splits import sample_splits
from keyshape.spark.write import write_to_hbase

__all__ = ["analyze", "analyze_path", "encode_keys", "sample_splits", "session", "write_to_hbase"]
