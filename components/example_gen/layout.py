"""Where ExampleGen puts what it sets aside (no TensorFlow: the summary and the report read it).

`<examples uri>/rejected/rejected-*.csv`: one CSV row per row set aside, REJECTED_HEADER's
columns: malformed rows (counted as the Examples artifact's `num_rejected`) and rows without
a label (`num_unlabeled`, reason UNLABELED_REASON).
"""

REJECTED_DIR = "rejected"
REJECTED_HEADER = "file,line,column,reason,raw"
UNLABELED_REASON = "label missing"
