"""StatisticsGen: TFDV-format statistics of every split, without TFDV.

Nothing is imported here, so readers of the layout (`layout.py`) need no TensorFlow.
"""
