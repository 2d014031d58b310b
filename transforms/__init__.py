"""The examples' preprocessing_fn modules (use cases, not framework).

A pipeline names one by dotted path (`transforms.taxi.preprocessing_fn`) or by file
(`preprocessing.py:preprocessing_fn`, see components/user_code.py).
"""
